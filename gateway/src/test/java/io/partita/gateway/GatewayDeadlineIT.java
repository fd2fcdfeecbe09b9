package io.partita.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** With no worker running, an infer call answers 504 at its deadline instead of hanging. */
@ExtendWith(KafkaFixture.class)
class GatewayDeadlineIT {
  @TempDir Path repo;

  @Test
  void shouldAnswer504WhenNoReplyComesBeforeTheDeadline() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("deadline"));
    try (Gateway gateway = new Gateway(GatewayConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any"))))) { // no planner in this test: produce without routes
      gateway.start();
      String body = "{\"parameters\":{\"timeout_ms\":700},\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}";
      HttpResponse<String> response = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://localhost:" + gateway.port() + "/v2/models/demo/infer"))
              .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(504);
      assertThat(response.body()).contains("deadline");
    }
  }
}
