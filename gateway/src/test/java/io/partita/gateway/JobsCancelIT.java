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
 * Cancelling a job, with no worker running (so items stay in flight until their deadline): the
 * items in flight come back with their deadline error, the rest never run, and every item still
 * has exactly one line in the results. Jobs hold at most their share of the in-flight limit, counted
 * in requests (here packs of 4 rows).
 */
@ExtendWith(KafkaFixture.class)
class JobsCancelIT {
  @TempDir Path repo;

  @Test
  void shouldStopSendingItemsOnCancelAndReportEveryItemOnce() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("cancel"));
    try (Gateway gateway = new Gateway(GatewayConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any", // no planner in this test: produce without routes
        "gateway.max.in.flight", "4",
        "gateway.jobs.share", "0.5",
        "gateway.jobs.item.timeout.ms", "1500",
        "gateway.jobs.retries", "0",
        "gateway.jobs.pack.rows", "4"))))) { // 20 rows in 5 requests: the share is counted in requests
      gateway.start();
      // Pinned to a version: a job without one sends rows alone until one is answered (it chooses the
      // version), and nothing answers here; pinned, its rows go packed from the start.
      HttpResponse<String> created = post(gateway, "/v2/jobs?model=demo&version=1", JobLinesFixture.lines(DemoMlp.sampleInput(20, 5)));
      assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
      String id = JSON.readTree(created.body()).get("id").asText();
      // Jobs may hold 2 of the 4 slots: exactly 2 requests (of 4 rows each) are produced while no reply comes.
      await().atMost(Duration.ofSeconds(30)).until(() -> TestHttp.produced(topics, List.of("demo")) - 1 == 2);
      assertThat(post(gateway, "/v2/models/demo/infer", TestHttp.inferBody(1, 2, 3, 4, 5, 6, 7, 8).replace("{\"inputs\"", "{\"parameters\":{\"timeout_ms\":200},\"inputs\"")).statusCode())
          .as("online calls still get a slot while jobs hold theirs").isEqualTo(504);

      HttpResponse<String> cancel = TestHttp.send(TestHttp.request(gateway, "/v2/jobs/" + id).DELETE());
      assertThat(cancel.statusCode()).isEqualTo(202);
      assertThat(JSON.readTree(cancel.body()).get("state").asText()).isEqualTo("CANCELLING");
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
          .until(() -> JSON.readTree(get(gateway, "/v2/jobs/" + id).body()).get("state").asText().equals("CANCELLED"));
      JsonNode status = JSON.readTree(get(gateway, "/v2/jobs/" + id).body());

      List<JsonNode> lines = JobLinesFixture.parseLines(get(gateway, "/v2/jobs/" + id + "/results").body());
      assertThat(lines).hasSize(20);
      int ran = 0;
      for (int i = 0; i < 20; i++) {
        assertThat(lines.get(i).get("index").asInt()).isEqualTo(i);
        String code = lines.get(i).get("code").asText();
        assertThat(code).isIn("DEADLINE_EXCEEDED", "NOT_RUN");
        ran += code.equals("DEADLINE_EXCEEDED") ? 1 : 0;
      }
      assertThat(ran).isEqualTo(status.get("done").asInt()).isBetween(8, 16);
      assertThat(ran % 4).as("whole packs of 4 rows came back with their deadline error").isZero();
      assertThat(status.get("failed").asInt()).isEqualTo(ran);
    }
  }
}
