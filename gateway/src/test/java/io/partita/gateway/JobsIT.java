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
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Batch jobs through the gateway, Kafka and a real worker with the demo models. */
@ExtendWith(KafkaFixture.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JobsIT {
  @TempDir static Path repo;
  @TempDir static Path inputs;
  private Topics topics;
  private InferenceWorker worker;
  private Gateway gateway;

  @BeforeAll
  void start() throws Exception {
    DemoRepository.writeTo(repo);
    Files.writeString(inputs.resolve("five.jsonl"), JobLinesFixture.lines(DemoMlp.sampleInput(5, 3)));
    Files.writeString(repo.resolve("secret.jsonl"), JobLinesFixture.lines(DemoMlp.sampleInput(1, 3)));
    topics = new Topics(KafkaFixture.uniquePrefix("jobs"));
    Settings settings = Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any", // no planner in this test: produce without routes
        "worker.threads", "1",
        "gateway.jobs.input.dir", inputs.toString(),
        "gateway.jobs.max.body.bytes", "20000"));
    worker = new InferenceWorker(WorkerConfig.from(settings));
    worker.start();
    gateway = new Gateway(GatewayConfig.from(settings));
    gateway.start();
  }

  @AfterAll
  void stop() {
    if (gateway != null) gateway.close();
    if (worker != null) worker.close();
  }

  private JsonNode awaitState(String id, String state) {
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
        .until(() -> JSON.readTree(get(gateway, "/v2/jobs/" + id).body()).get("state").asText().equals(state));
    try {
      return JSON.readTree(get(gateway, "/v2/jobs/" + id).body());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void shouldRunAJobAndStreamOneResultPerItemInInputOrder() throws Exception {
    float[][] rows = DemoMlp.sampleInput(30, 7);
    String[] lines = JobLinesFixture.lines(rows).split("\n");
    lines[5] = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,3],\"data\":[1,2,3]}]}";
    lines[7] = "{\"id\":\"seven\"," + lines[7].substring(1);
    HttpResponse<String> created = post(gateway, "/v2/jobs?model=demo-a", String.join("\n", lines) + "\n");
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    JsonNode job = JSON.readTree(created.body());
    String id = job.get("id").asText();
    assertThat(created.headers().firstValue("Location")).contains("/v2/jobs/" + id);
    assertThat(job.get("total").asInt()).isEqualTo(30);

    JsonNode done = awaitState(id, "DONE");
    assertThat(done.get("done").asInt()).isEqualTo(30);
    assertThat(done.get("failed").asInt()).isEqualTo(1);
    assertThat(done.get("eta_seconds").asInt()).isZero();

    HttpResponse<String> results = get(gateway, "/v2/jobs/" + id + "/results");
    assertThat(results.statusCode()).isEqualTo(200);
    assertThat(results.headers().firstValue("Content-Type")).contains("application/x-ndjson");
    List<JsonNode> out = JobLinesFixture.parseLines(results.body());
    assertThat(out).hasSize(30);
    for (int i = 0; i < 30; i++) {
      if (i == 5) {
        assertThat(out.get(i).get("index").asInt()).isEqualTo(5);
        assertThat(out.get(i).get("status").asInt()).isEqualTo(400);
        assertThat(out.get(i).get("error").asText()).isEqualTo("input 'input'.shape[1]: expected 8, got 3");
      } else {
        JobLinesFixture.assertResult(out.get(i), i, rows[i], "demo-a");
      }
    }
    assertThat(out.get(7).get("id").asText()).isEqualTo("seven");
    assertThat(JSON.readTree(get(gateway, "/v2/jobs").body()).get("jobs").findValuesAsText("id")).contains(id);
  }

  @Test
  void shouldRunEveryRowOfAJobWithoutAPinnedVersionOnTheVersionThatAnsweredItsFirstRow() throws Exception {
    // The worker has a slot per demo version and queues an unpinned request on the least loaded one,
    // so rows sent unpinned while others are in flight land on both versions.
    float[][] rows = DemoMlp.sampleInput(60, 9);
    HttpResponse<String> created = post(gateway, "/v2/jobs?model=demo", JobLinesFixture.lines(rows));
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    String id = JSON.readTree(created.body()).get("id").asText();

    JsonNode done = awaitState(id, "DONE");

    List<JsonNode> out = JobLinesFixture.parseLines(get(gateway, "/v2/jobs/" + id + "/results").body());
    assertThat(out).hasSize(60);
    String first = out.get(0).get("model_version").asText();
    assertThat(out).allSatisfy(r -> assertThat(r.get("model_version").asText()).as("row %s", r.get("index")).isEqualTo(first));
    assertThat(done.get("version").asText()).isEqualTo(first);
  }

  @Test
  void shouldRunAJobFromAFileInTheInputDirectory() throws Exception {
    HttpResponse<String> created = post(gateway, "/v2/jobs?model=demo&version=1&file=five.jsonl", "");
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    String id = JSON.readTree(created.body()).get("id").asText();
    awaitState(id, "DONE");
    List<JsonNode> out = JobLinesFixture.parseLines(get(gateway, "/v2/jobs/" + id + "/results").body());
    float[][] rows = DemoMlp.sampleInput(5, 3);
    assertThat(out).hasSize(5);
    for (int i = 0; i < 5; i++) {
      JobLinesFixture.assertResult(out.get(i), i, rows[i], "demo");
      assertThat(out.get(i).get("model_version").asText()).isEqualTo("1");
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "no model|/v2/jobs|LINES|400|model: missing",
      "unknown model|/v2/jobs?model=nope|LINES|404|model 'nope' is not known",
      "unknown version|/v2/jobs?model=demo&version=9|LINES|404|version '9'",
      "no lines|/v2/jobs?model=demo|EMPTY|400|no items",
      "over the job body limit|/v2/jobs?model=demo|BIG|413|gateway.jobs.max.body.bytes",
      "a file outside the input directory|/v2/jobs?model=demo&file=../secret.jsonl|EMPTY|400|not allowed",
      "an absolute file|/v2/jobs?model=demo&file=/etc/passwd|EMPTY|400|not allowed",
      "a missing file|/v2/jobs?model=demo&file=none.jsonl|EMPTY|404|no such file",
  })
  void shouldRefuseBadJobsBeforeProducing(String name, String path, String body, int status, String message) throws Exception {
    long before = TestHttp.produced(topics, DemoMlp.SERVICE_MODELS);
    String text = switch (body) {
      case "LINES" -> JobLinesFixture.lines(DemoMlp.sampleInput(2, 1));
      case "BIG" -> JobLinesFixture.lines(DemoMlp.sampleInput(400, 1));
      default -> "\n";
    };
    HttpResponse<String> response = post(gateway, path, text);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    String error = JSON.readTree(response.body()).get("error").asText();
    assertThat(error).contains(message).doesNotContain(inputs.toString()).doesNotContain(repo.toString());
    assertThat(TestHttp.produced(topics, DemoMlp.SERVICE_MODELS)).isEqualTo(before);
  }

  @Test
  void shouldAnswerUnknownJobsAndRefuseToCancelAFinishedOne() throws Exception {
    assertThat(get(gateway, "/v2/jobs/job-nope").statusCode()).isEqualTo(404);
    assertThat(get(gateway, "/v2/jobs/job-nope/results").statusCode()).isEqualTo(404);
    HttpResponse<String> created = post(gateway, "/v2/jobs?model=demo", JobLinesFixture.lines(DemoMlp.sampleInput(1, 2)));
    String id = JSON.readTree(created.body()).get("id").asText();
    awaitState(id, "DONE");
    HttpResponse<String> cancel = TestHttp.send(TestHttp.request(gateway, "/v2/jobs/" + id).DELETE());
    assertThat(cancel.statusCode()).isEqualTo(409);
    assertThat(TestHttp.send(TestHttp.request(gateway, "/v2/jobs/" + id).PUT(HttpRequest.BodyPublishers.noBody())).statusCode()).isEqualTo(405);
  }
}
