package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.partita.avro.ProfileRequest;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.common.metrics.MetricsEndpoint;
import io.partita.planner.metrics.PlannerMetrics;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.replay.PlanRun;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The planner's metrics over one loop of asking and choosing by measurement, and their endpoint. */
class PlannerMetricsTest {
  private static final Codecs CODECS = Codecs.singleObject();
  private final Topics topics = new Topics("t");
  @TempDir Path stateDir;

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> void pipe(PlanRun run, String topic, String key, T value) {
    run.pipe(topic, key, CODECS.codec((Class<T>) value.getClass()).encode(topic, value), 1000);
  }

  private static TimingEvent grouping(List<Integer> sizes, double throughput, String requestId) {
    return TimingEvent.newBuilder(timing("mlp", "1", "host-a", "cpu", sizes.stream().mapToInt(i -> i).sum(), 10))
        .setGrouping(sizes).setThroughput(throughput).setRequestId(requestId).setTimestamp(2000).build();
  }

  @Test
  void shouldCountPlansPassesDeadLettersAndMeasurementsAndServeThemForPrometheus() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    try (PlanRun run = new PlanRun(PlanSettings.defaults(topics), CODECS, stateDir, new PlannerMetrics(registry));
         MetricsEndpoint endpoint = new MetricsEndpoint(registry, 0)) {
      pipe(run, topics.catalogModels(), "mlp/1", version("mlp", "1", "CPU"));
      pipe(run, topics.catalogServices(), "mlp", serviceModel("mlp", "mlp", 1));
      pipe(run, topics.hostEnvironments(), "host-a", host("host-a", 2, 0));
      pipe(run, topics.profileTimings(), "p1", timing("mlp", "1", "host-a", "cpu", 1, 10.0));
      pipe(run, topics.profileTimings(), "p2", timing("mlp", "1", "host-a", "cpu", 2, 6.0));
      pipe(run, topics.profileTimings(), "bad", timing("mlp", "1", "host-a", "cpu", 1, -3.0));
      run.plan();
      run.plan(); // a punctuation with nothing stale: no pass, but the outstanding gauge is refreshed

      assertThat(registry.get(PlannerMetrics.PASS).timer().count()).isEqualTo(1);
      assertThat(registry.get(PlannerMetrics.PLAN_RECORDS).tag("table", "partitions").counter().count()).isEqualTo(1);
      assertThat(registry.get(PlannerMetrics.DEAD_LETTERS).tag("input", "timings").counter().count()).isEqualTo(1);
      assertThat(registry.get(PlannerMetrics.CHOICES).tag("basis", "predicted").counter().count()).isEqualTo(1);
      assertThat(registry.get(PlannerMetrics.REQUESTED).counter().count()).isEqualTo(1);
      assertThat(registry.get(PlannerMetrics.OUTSTANDING).gauge().value()).isEqualTo(1);

      String id = CODECS.codec(ProfileRequest.class).decode(topics.profileRequests(),
          run.profileRequests().get(0).value).getRequestId();
      pipe(run, topics.profileTimings(), "g11", grouping(List.of(1, 1), 120.0, id));
      pipe(run, topics.profileTimings(), "g2", grouping(List.of(2), 160.0, id));
      run.plan();
      run.plan();

      assertThat(registry.get(PlannerMetrics.ANSWERED).counter().count()).isEqualTo(2);
      assertThat(registry.get(PlannerMetrics.OUTSTANDING).gauge().value()).isZero();
      assertThat(registry.get(PlannerMetrics.CHOICES).tag("basis", "measured").counter().count()).isEqualTo(1);
      assertThat(registry.get(PlannerMetrics.MEASURED_OVER_PREDICTED).tag("host", "host-a").tag("pool", "cpu").gauge()
          .value()).isCloseTo(160.0 / (1000.0 / 6), offset(1e-9));

      HttpResponse<String> scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://localhost:" + endpoint.port() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(scrape.statusCode()).isEqualTo(200);
      assertThat(scrape.body()).contains("partita_planner_pass_seconds_count 2")
          .contains("partita_planner_measurements_requested_total 1")
          .contains("partita_planner_choice_measured_over_predicted{host=\"host-a\"");
    }
  }
}
