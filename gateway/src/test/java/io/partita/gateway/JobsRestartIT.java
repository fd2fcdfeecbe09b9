package io.partita.gateway;

import static io.partita.gateway.JobLinesFixture.JSON;
import static io.partita.gateway.TestHttp.get;
import static io.partita.gateway.TestHttp.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.partita.avro.JobItemResult;
import io.partita.avro.JobItemResults;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job of 5,000 items whose gateway is stopped half way and a new one started: the new gateway
 * takes the job over, sends only the items without a result, and every item ends with exactly one
 * result, in order, on the topic and in the results.
 */
@ExtendWith(KafkaFixture.class)
class JobsRestartIT {
  private static final int ITEMS = 5000;
  @TempDir Path repo;

  @Test
  void shouldResumeAJobAfterTheGatewayRestartsWithExactlyOneResultPerItem() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("restart"));
    Map<String, String> base = new HashMap<>(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any", // no planner in this test: produce without routes
        "worker.threads", "1",
        // two job requests of 8 rows in flight: slow enough for the job to be stopped half way
        "gateway.max.in.flight", "4",
        "gateway.jobs.pack.rows", "8"));
    float[][] rows = DemoMlp.sampleInput(ITEMS, 42);
    String id;
    try (InferenceWorker worker = new InferenceWorker(WorkerConfig.from(Settings.of(base)))) {
      worker.start();
      base.put("gateway.id", "first");
      Gateway first = new Gateway(GatewayConfig.from(Settings.of(base)));
      try {
        first.start();
        HttpResponse<String> created = post(first, "/v2/jobs?model=demo-b", JobLinesFixture.lines(rows));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        id = JSON.readTree(created.body()).get("id").asText();
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(10))
            .until(() -> JSON.readTree(get(first, "/v2/jobs/" + id).body()).get("done").asInt() >= ITEMS / 2);
      } finally {
        first.close();
      }
      long before = resultRowsOnTopic(topics);
      assertThat(before).as("rows with a result: stopped half way").isBetween((long) ITEMS / 2, (long) ITEMS - 1);

      base.put("gateway.id", "second");
      try (Gateway second = new Gateway(GatewayConfig.from(Settings.of(base)))) {
        second.start();
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
            .until(() -> JSON.readTree(get(second, "/v2/jobs/" + id).body()).get("state").asText().equals("DONE"));
        JsonNode status = JSON.readTree(get(second, "/v2/jobs/" + id).body());
        assertThat(status.get("runner").asText()).isEqualTo("second");
        assertThat(status.get("done").asInt()).isEqualTo(ITEMS);
        assertThat(status.get("failed").asInt()).isZero();

        List<JsonNode> lines = JobLinesFixture.parseLines(get(second, "/v2/jobs/" + id + "/results").body());
        assertThat(lines).hasSize(ITEMS);
        for (int i = 0; i < ITEMS; i++) {
          JobLinesFixture.assertResult(lines.get(i), i, rows[i], "demo-b");
        }
      }
    }
    // On the topic itself: one result per item, no copies (a record holds the rows of one request).
    long recordCount = resultsOnTopic(topics);
    List<ConsumerRecord<String, byte[]>> records = KafkaFixture.read((int) recordCount, Duration.ofSeconds(30), topics.jobItems());
    BitSet seen = new BitSet(ITEMS);
    int results = 0;
    var codec = Codecs.singleObject().codec(JobItemResults.class);
    for (ConsumerRecord<String, byte[]> r : records) {
      for (JobItemResult result : codec.decode(r.topic(), r.value()).getResults()) {
        int index = result.getIndex();
        assertThat(seen.get(index)).as("item %d has two results", index).isFalse();
        seen.set(index);
        results++;
      }
    }
    assertThat(results).isEqualTo(ITEMS);
    assertThat(seen.cardinality()).isEqualTo(ITEMS);
  }

  /** Rows with a result on the topic (a record holds the rows of one request). */
  private static long resultRowsOnTopic(Topics topics) throws Exception {
    long records = resultsOnTopic(topics);
    var codec = Codecs.singleObject().codec(JobItemResults.class);
    return KafkaFixture.read((int) records, Duration.ofSeconds(30), topics.jobItems()).stream()
        .mapToLong(r -> codec.decode(r.topic(), r.value()).getResults().size()).sum();
  }

  private static long resultsOnTopic(Topics topics) throws Exception {
    try (var admin = KafkaFixture.admin()) {
      var tp = new org.apache.kafka.common.TopicPartition(topics.jobItems(), 0);
      return admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest())).all().get().get(tp).offset();
    }
  }
}
