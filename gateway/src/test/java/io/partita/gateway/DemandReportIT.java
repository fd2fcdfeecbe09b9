package io.partita.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.Demand;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The gateway reports each service model's traffic to <prefix>.demand for the planner. */
@ExtendWith(KafkaFixture.class)
class DemandReportIT {
  @TempDir Path repo;

  @Test
  void shouldReportTheRateOfInferCallsAndTheLagOfAModelNobodyServes() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("demand"));
    // No worker runs: the calls time out, but they reached Kafka, so they count as demand and lag.
    try (Gateway gateway = new Gateway(GatewayConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any",
        "gateway.demand.interval.ms", "500"))))) {
      gateway.start();
      HttpClient http = HttpClient.newHttpClient();
      String body = "{\"parameters\":{\"timeout_ms\":200},\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}";
      for (int i = 0; i < 10; i++) {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + gateway.port() + "/v2/models/demo-b/infer"))
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(504);
      }
      Map<String, Demand> latest = new ConcurrentHashMap<>();
      Map<String, Demand> busiest = new ConcurrentHashMap<>();
      var codec = Codecs.singleObject().codec(Demand.class);
      try (KafkaConsumer<String, byte[]> consumer = KafkaFixture.consumer(topics.demand())) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
          consumer.poll(Duration.ofMillis(200)).forEach(r -> {
            Demand d = codec.decode(r.topic(), r.value());
            latest.put(r.key(), d);
            busiest.merge(r.key(), d, (a, b) -> a.getRequestsPerSecond() >= b.getRequestsPerSecond() ? a : b);
          });
          return busiest.containsKey("demo-b") && busiest.get("demo-b").getRequestsPerSecond() > 0
              // one request topic per base model: its lag is reported once, on the first service model
              // of the base model ("demo"), not split among demo, demo-a and demo-b
              && latest.containsKey("demo") && latest.get("demo").getLag() == 10;
        });
      }
      assertThat(busiest.get("demo-b").getServiceModel()).isEqualTo("demo-b");
      assertThat(latest.get("demo-a").getRequestsPerSecond()).isZero();
      assertThat(latest.get("demo-a").getLag()).isZero();
      assertThat(latest.get("demo-b").getLag()).isZero();
    }
  }
}
