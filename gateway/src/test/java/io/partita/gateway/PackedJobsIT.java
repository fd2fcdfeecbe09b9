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
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Packed job requests against a real broker and a stand-in worker ({@link FakeWorker}) that refuses
 * a whole request when one of its rows is bad, as a worker does: the rows of the refused pack are
 * sent again one by one, so only the bad row fails and its neighbours get their own results.
 */
@ExtendWith(KafkaFixture.class)
class PackedJobsIT {
  private static final int ROWS = 40;
  private static final int BAD = 13;
  @TempDir Path repo;

  @Test
  void shouldResendARefusedPackRowByRowSoOnlyTheBadRowFails() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("packed"));
    float[][] rows = DemoMlp.sampleInput(ROWS, 3);
    rows[BAD][2] = FakeWorker.POISON;
    try (FakeWorker worker = new FakeWorker(topics, DemoMlp.SERVICE_MODELS);
         Gateway gateway = new Gateway(GatewayConfig.from(Settings.of(Map.of(
             "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
             "topic.prefix", topics.prefix(),
             "model.repo", repo.toString(),
             "http.port", "0",
             "gateway.routing", "any",
             "gateway.jobs.pack.rows", "8",
             "gateway.dashboard.enabled", "false"))))) {
      gateway.start();
      HttpResponse<String> created = post(gateway, "/v2/jobs?model=demo", JobLinesFixture.lines(rows));
      assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
      String id = JSON.readTree(created.body()).get("id").asText();
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
          .until(() -> JSON.readTree(get(gateway, "/v2/jobs/" + id).body()).get("state").asText().equals("DONE"));
      JsonNode status = JSON.readTree(get(gateway, "/v2/jobs/" + id).body());
      assertThat(status.get("done").asInt()).isEqualTo(ROWS);
      assertThat(status.get("failed").asInt()).isEqualTo(1);

      List<JsonNode> lines = JobLinesFixture.parseLines(get(gateway, "/v2/jobs/" + id + "/results").body());
      assertThat(lines).hasSize(ROWS);
      for (int i = 0; i < ROWS; i++) {
        JsonNode line = lines.get(i);
        assertThat(line.get("index").asInt()).isEqualTo(i);
        if (i == BAD) {
          assertThat(line.get("code").asText()).isEqualTo("BAD_INPUT");
          continue;
        }
        assertThat(line.has("error")).as("row %d: %s", i, line).isFalse();
        JsonNode out = line.get("outputs").get(0); // the stand-in echoes the row: its own row, cut back exactly
        assertThat(out.get("shape").get(0).asInt()).isEqualTo(1);
        for (int k = 0; k < DemoMlp.INPUT_SIZE; k++) {
          assertThat(out.get("data").get(k).floatValue()).as("row %d [%d]", i, k).isEqualTo(rows[i][k]);
        }
      }
      // Row 0 alone (its answer chooses the job's version), then packs of 8 from row 1: rows 1-8, 9-16,
      // 17-24, 25-32 and 33-39 (7 rows); the one holding row 13 came back BAD_INPUT and went again row by row.
      List<Long> sent = worker.rowsPerRequest().stream().sorted().toList();
      assertThat(sent).containsExactly(1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L, 7L, 8L, 8L, 8L, 8L);

      // And the job's stages reached the metrics when it ended: its 14 request records, their round
      // trips, and time in each stage of the runner (packing and writing results took some).
      String metrics = get(gateway, "/metrics").body();
      assertThat(metric(metrics, "partita_gateway_job_requests_total", "")).isEqualTo(14.0);
      assertThat(metric(metrics, "partita_gateway_job_request_round_trip_seconds_total", "")).isPositive();
      for (String stage : List.of("read", "pack", "send", "results")) {
        assertThat(metric(metrics, "partita_gateway_job_stage_seconds_total", ",stage=\"" + stage + "\"")).as(stage).isPositive();
      }
      assertThat(metric(metrics, "partita_gateway_job_stage_seconds_total", ",stage=\"slot_wait\"")).isNotNegative();
    }
  }

  /** The value of a series of model demo in the Prometheus text ({@code more}: further labels after the model). */
  private static double metric(String text, String name, String more) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + name + "\\{model=\"demo\"" + more + ",?\\} ([0-9.eE+-]+)$").matcher(text);
    assertThat(m.find()).as("%s{model=demo%s} in%n%s", name, more, text).isTrue();
    return Double.parseDouble(m.group(1));
  }
}
