package io.partita.gateway;

import static io.partita.gateway.JobLinesFixture.JSON;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * 1,000 HTTP calls at once (64 client threads) across the four demo service models, each with its
 * own input and request id: every one is answered 200 with the reference result of its own input.
 * It checks correctness under concurrency (no reply goes to the wrong caller), not speed.
 */
@ExtendWith(KafkaFixture.class)
class GatewayLoadIT {
  private static final int CALLS = 1000;
  @TempDir Path repo;

  @Test
  void shouldAnswerAThousandConcurrentCallsEachWithItsOwnResult() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("load"));
    Settings settings = Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any", // no planner in this test: produce without routes
        "worker.threads", "1",
        "gateway.timeout.ms", "60000"));
    float[][] rows = DemoMlp.sampleInput(CALLS, 99);
    try (InferenceWorker worker = new InferenceWorker(WorkerConfig.from(settings));
         Gateway gateway = new Gateway(GatewayConfig.from(settings))) {
      worker.start();
      gateway.start();
      ExecutorService clients = Executors.newFixedThreadPool(64);
      try {
        List<Future<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < CALLS; i++) {
          String model = DemoMlp.SERVICE_MODELS.get(i % DemoMlp.SERVICE_MODELS.size());
          String body = TestHttp.inferBody(rows[i]);
          String requestId = "load-" + i;
          calls.add(clients.submit(() -> TestHttp.post(gateway, "/v2/models/" + model + "/infer", body, "X-Request-Id", requestId)));
        }
        for (int i = 0; i < CALLS; i++) {
          HttpResponse<String> response = calls.get(i).get(120, TimeUnit.SECONDS);
          String model = DemoMlp.SERVICE_MODELS.get(i % DemoMlp.SERVICE_MODELS.size());
          assertThat(response.statusCode()).as("call %d: %s", i, response.body()).isEqualTo(200);
          JsonNode out = JSON.readTree(response.body());
          assertThat(out.get("id").asText()).isEqualTo("load-" + i);
          assertThat(out.get("model_name").asText()).isEqualTo(model);
          float[][] expected = DemoMlp.reference(new float[][] {rows[i]}, DemoMlp.adapterForServiceModel(model).orElse(null),
              out.get("model_version").asText());
          JsonNode data = out.get("outputs").get(0).get("data");
          for (int k = 0; k < DemoMlp.OUTPUT_SIZE; k++) {
            assertThat(data.get(k).floatValue()).as("call %d [%d]", i, k).isCloseTo(expected[0][k], within(1e-4f));
          }
        }
      } finally {
        clients.shutdownNow();
      }
    }
  }
}
