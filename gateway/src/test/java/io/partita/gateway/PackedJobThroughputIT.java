package io.partita.gateway;

import static io.partita.gateway.JobLinesFixture.JSON;
import static io.partita.gateway.TestHttp.get;
import static io.partita.gateway.TestHttp.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The figure of docs/benchmarks.md's "Batch jobs, packed": one batch job of {@code partita.bench.job.rows}
 * rows (default 20,000) of the demo MLP with an adapter ({@code demo-a}), through a real broker, a
 * gateway and a real ONNX Runtime worker, sent one row per request ({@code gateway.jobs.pack.rows=1},
 * as before packing) and then packed ({@code partita.bench.job.pack}, default 64). Each run has a
 * warm-up job of 2,000 rows first. Prints items per second; asserts only that every row has its
 * result (a speed goal is never a test assertion).
 *
 * <pre>./mvnw -B -o -pl gateway -am test -Dtest=PackedJobThroughputIT -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dpartita.bench.job.rows=20000 -Dpartita.bench.job.pack=64</pre>
 */
@Tag("slow")
@ExtendWith(KafkaFixture.class)
class PackedJobThroughputIT {
  private static final String MODEL = "demo-a";
  @TempDir Path repo;

  @Test
  void shouldPrintItemsPerSecondOfAJobSentRowByRowAndPacked() throws Exception {
    int rows = Integer.getInteger("partita.bench.job.rows", 20_000);
    int pack = Integer.getInteger("partita.bench.job.pack", 64);
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("jobbench"));
    Map<String, String> base = new HashMap<>(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any", // no planner: produce without routes
        "gateway.dashboard.enabled", "false",
        "gateway.demand.interval.ms", "0"));
    Map<Integer, double[]> rates = new LinkedHashMap<>();
    try (InferenceWorker worker = new InferenceWorker(WorkerConfig.from(Settings.of(base)))) {
      worker.start();
      for (int packRows : List.of(1, pack)) {
        Map<String, String> settings = new HashMap<>(base);
        settings.put("gateway.jobs.pack.rows", Integer.toString(packRows));
        settings.put("gateway.id", "bench-" + packRows);
        try (Gateway gateway = new Gateway(GatewayConfig.from(Settings.of(settings)))) {
          gateway.start();
          runJob(gateway, DemoMlp.sampleInput(2_000, 1)); // warm-up
          rates.put(packRows, runJob(gateway, DemoMlp.sampleInput(rows, 2)));
        }
      }
    }
    System.out.printf("%nBatch job of %,d rows of %s (gateway, worker and broker in one JVM, %d cores):%n", rows, MODEL,
        Runtime.getRuntime().availableProcessors());
    rates.forEach((packRows, r) -> System.out.printf("  gateway.jobs.pack.rows=%-4d %,10.0f items/s from submission to DONE; %,10.0f items/s "
        + "from accepted (201) to DONE%n", packRows, r[0], r[1]));
    System.out.printf("  packed / row by row: %.1fx (%.1fx from accepted)%n%n", rates.get(pack)[0] / rates.get(1)[0],
        rates.get(pack)[1] / rates.get(1)[1]);
  }

  /**
   * Submits the rows as a job, waits for DONE, checks every row has a result; returns items per
   * second from the submission and from the moment the job was accepted (its lines parsed and
   * written to Kafka).
   */
  private static double[] runJob(Gateway gateway, float[][] rows) throws Exception {
    String body = JobLinesFixture.lines(rows);
    long start = System.nanoTime();
    HttpResponse<String> created = post(gateway, "/v2/jobs?model=" + MODEL, body);
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    String id = JSON.readTree(created.body()).get("id").asText();
    long accepted = System.nanoTime();
    await().atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofMillis(20))
        .until(() -> JSON.readTree(get(gateway, "/v2/jobs/" + id).body()).get("state").asText().equals("DONE"));
    long end = System.nanoTime();
    JsonNode status = JSON.readTree(get(gateway, "/v2/jobs/" + id).body());
    assertThat(status.get("done").asInt()).isEqualTo(rows.length);
    assertThat(status.get("failed").asInt()).isZero();
    List<JsonNode> lines = JobLinesFixture.parseLines(get(gateway, "/v2/jobs/" + id + "/results").body());
    assertThat(lines).hasSize(rows.length);
    for (int i = 0; i < rows.length; i += Math.max(1, rows.length / 100)) {
      JobLinesFixture.assertResult(lines.get(i), i, rows[i], MODEL);
    }
    return new double[] {rows.length / ((end - start) / 1e9), rows.length / ((end - accepted) / 1e9)};
  }
}
