package io.partita.worker;

import static io.partita.worker.WorkerFixtures.record;
import static io.partita.worker.WorkerFixtures.request;
import static org.assertj.core.api.Assertions.assertThat;

import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The worker stamps where each request's time went on its reply (the {@code partita-stages} header). */
@ExtendWith(KafkaFixture.class)
class ReplyStagesIT {
  @TempDir Path repo;
  private InferenceWorker worker;

  @AfterEach
  void tearDown() {
    if (worker != null) {
      worker.close();
    }
  }

  @Test
  void shouldStampEveryReplyWithItsStagesInTheOrderTheyHappened() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("stages"));
    String replyTopic = topics.replies("stages-client");
    worker = new InferenceWorker(WorkerConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "host.id", "stages-host",
        "model.repo", repo.toString(),
        "worker.threads", "1",
        "worker.batch.max", "4"))));
    worker.start();

    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      for (int i = 0; i < 6; i++) {
        // 1 to 6 rows: the 5- and 6-row requests are cut into slot-sized runs
        producer.send(record(topics.requests(DemoMlp.MODEL_NAME), request("s" + i, "demo", DemoMlp.sampleInput(1 + i, i)), replyTopic));
      }
    }

    List<ConsumerRecord<String, byte[]>> replies = KafkaFixture.read(6, Duration.ofSeconds(60), replyTopic);
    assertThat(replies).hasSize(6);
    for (ConsumerRecord<String, byte[]> reply : replies) {
      String header = KafkaHeaders.get(reply.headers(), KafkaHeaders.STAGES);
      assertThat(header).as("stages of %s", reply.key()).isNotNull();
      Map<String, Long> stamps = parse(header);
      assertThat(List.copyOf(stamps.keySet())).containsExactly("read", "decoded", "run-start", "run-end", "encoded");
      List<Long> times = new ArrayList<>(stamps.values());
      assertThat(times).as("stages of %s: %s", reply.key(), header).isSorted();
      // epoch microseconds of this run, not some other clock
      assertThat(times.get(0) / 1000).isBetween(reply.timestamp() - 60_000, reply.timestamp() + 1_000);
    }
  }

  private static Map<String, Long> parse(String header) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (String part : header.split(";")) {
      String[] kv = part.split("=", 2);
      out.put(kv[0], Long.parseLong(kv[1]));
    }
    return out;
  }
}
