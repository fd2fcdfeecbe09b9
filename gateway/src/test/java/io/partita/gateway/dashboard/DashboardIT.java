package io.partita.gateway.dashboard;

import static io.partita.gateway.dashboard.DashboardRecords.send;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard's data endpoints without a browser: a real broker holding the records this test
 * writes (as the profiler, planner and workers would), a real worker answering infer calls, and a
 * gateway with two API keys: one for every model, one for {@code demo} only.
 */
@ExtendWith(KafkaFixture.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ALL = "all-models-key-1";
  private static final String DEMO_ONLY = "demo-only-key-1";
  private static final String HOST = "dash-host";
  /** Where the routes below put each service model's one instance: the slots the plan below gives it. */
  private static final Map<String, String> SLOT_OF = Map.of("demo", "cpu-0", "demo-a", "cpu-0", "demo-b", "cpu-2", "demo-c", "cpu-3");
  private static final String NOT_READY_BECAUSE = "no status from " + HOST + "/cpu-3 yet";

  @TempDir static Path repo;
  private final HttpClient http = HttpClient.newHttpClient();
  private Topics topics;
  private InferenceWorker worker;
  private Gateway gateway;
  private KafkaProducer<String, byte[]> producer;

  @BeforeAll
  void start() throws Exception {
    DemoRepository.writeTo(repo);
    topics = new Topics(KafkaFixture.uniquePrefix("dashboard"));
    Settings settings = Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any", // no planner here: the routes below are only shown, not followed
        "gateway.api-keys", ALL + ":*," + DEMO_ONLY + ":demo",
        "gateway.dashboard.push.interval.ms", "200",
        "gateway.demand.interval.ms", "0", // the demand records are the ones this test writes
        "worker.threads", "1"));
    worker = new InferenceWorker(WorkerConfig.from(settings));
    worker.start();
    gateway = new Gateway(GatewayConfig.from(settings));
    gateway.start();
    producer = KafkaFixture.producer();
    send(producer, topics.hostEnvironments(), HOST, DashboardRecords.host(HOST, 4));
    for (String version : DemoMlp.VERSIONS) {
      for (int batch : new int[] {1, 2, 4}) {
        send(producer, topics.profileTimings(), "t-" + version + "-" + batch, DashboardRecords.timing(HOST, version, 2, batch, 1.0 + batch));
        send(producer, topics.profileTimings(), "u-" + version + "-" + batch, DashboardRecords.timing(HOST, version, 1, batch, 2.0 + batch));
      }
    }
    send(producer, topics.planPartitions(), "demo-mlp/1/" + HOST + "/cpu", DashboardRecords.partitions(HOST));
    send(producer, topics.planAssignments(), HOST + "/cpu-0", DashboardRecords.slot(HOST, "cpu-0", List.of(0, 1), "demo", "demo-a"));
    send(producer, topics.planAssignments(), HOST + "/cpu-2", DashboardRecords.slot(HOST, "cpu-2", List.of(2), "demo-b"));
    send(producer, topics.planAssignments(), HOST + "/cpu-3", DashboardRecords.slot(HOST, "cpu-3", List.of(3), "demo-c"));
    send(producer, topics.planVersions(), "demo-mlp/" + HOST, DashboardRecords.versions(HOST));
    for (String model : DemoMlp.SERVICE_MODELS) {
      send(producer, topics.planRoutes(), model, DashboardRecords.route(model, topics.requests("demo-mlp"),
          DashboardRecords.instance(model, 0, HOST, SLOT_OF.get(model), model.equals("demo-c") ? NOT_READY_BECAUSE : null)));
      send(producer, topics.demand(), model, DashboardRecords.demand(model, 7));
    }
    send(producer, topics.catalogServices(), "demo-a", DashboardRecords.catalog("demo-a", "demo-mlp", 2));
    send(producer, topics.catalogServices(), "heavy", DashboardRecords.catalog("heavy", "demo-heavy", 1));
    send(producer, topics.deadLetter(), "x", DashboardRecords.deadLetter(topics.profileTimings(), 41, "timing for an unknown model version"));
  }

  @AfterAll
  void stop() {
    if (producer != null) producer.close();
    if (gateway != null) gateway.close();
    if (worker != null) worker.close();
  }

  @Test
  void shouldRedirectTheRootToTheDashboard() throws Exception {
    HttpResponse<String> r = get("/", null);
    assertThat(r.statusCode()).isEqualTo(302);
    assertThat(r.headers().firstValue("Location")).contains("/dashboard/");
  }

  @Test
  void shouldServeThePageAndItsPlotLibraryFromTheGatewayWithoutAKey() throws Exception {
    HttpResponse<String> page = get("/dashboard/", null);
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
    assertThat(page.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(t -> assertThat(t).contains("default-src 'self'"));
    assertThat(page.body()).contains("vendor/uPlot.iife.min.js", "app.js");
    HttpResponse<String> uplot = get("/dashboard/vendor/uPlot.iife.min.js", null);
    assertThat(uplot.statusCode()).isEqualTo(200);
    assertThat(uplot.body()).contains("uPlot");
    assertThat(get("/dashboard/app.js", null).statusCode()).isEqualTo(200);
    assertThat(get("/dashboard/../../etc/passwd", null).statusCode()).isEqualTo(404);
  }

  @Test
  void shouldRefuseTheDataWithoutAKnownKey() throws Exception {
    HttpResponse<String> none = get("/dashboard/api/hosts.json", null);
    assertThat(none.statusCode()).isEqualTo(401);
    assertThat(get("/dashboard/api/hosts.json", "not-a-known-key").statusCode()).isEqualTo(403);
    HttpResponse<String> session = get("/dashboard/api/session.json", null);
    assertThat(session.statusCode()).as("a probe: the page asks for a key").isEqualTo(200);
    assertThat(JSON.readTree(session.body()).get("keyRequired").asBoolean()).isTrue();
    assertThat(JSON.readTree(session.body()).get("authorized").asBoolean()).isFalse();
    assertThat(JSON.readTree(session.body()).has("views")).isFalse();
    assertThat(json("/dashboard/api/session.json", DEMO_ONLY).get("authorized").asBoolean()).isTrue();
    assertThat(get("/dashboard/api/events", null).statusCode()).isEqualTo(401);
  }

  @Test
  void shouldShowEveryModelsReadinessTrafficAndPlacementInTheOverview() throws Exception {
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      JsonNode overview = json("/dashboard/api/overview.json", ALL);
      Map<String, JsonNode> models = byModel(overview.get("models"));
      assertThat(models.keySet()).as("the gateway's service models and the catalog's")
          .containsExactlyInAnyOrder("demo", "demo-a", "demo-b", "demo-c", "heavy");
      JsonNode demo = models.get("demo");
      assertThat(demo.get("state").asText()).isEqualTo("READY");
      assertThat(demo.get("readyInstances").asInt()).isEqualTo(1);
      assertThat(demo.get("plannedInstances").asInt()).isEqualTo(1);
      assertThat(demo.get("reason").isNull()).isTrue();
      assertThat(demo.get("baseModel").asText()).isEqualTo("demo-mlp");
      assertThat(demo.get("where")).hasSize(1);
      assertThat(demo.get("where").get(0).get("host").asText()).isEqualTo(HOST);
      assertThat(demo.get("where").get(0).get("slots")).extracting(JsonNode::asText).containsExactly("cpu-0");
      assertThat(demo.get("where").get(0).get("versions")).extracting(JsonNode::asText).containsExactly("1");
      // Not ready, with the route's reason; short of the catalog's wanted instances; planned nowhere, with why.
      assertThat(models.get("demo-c").get("state").asText()).isEqualTo("NOT_READY");
      assertThat(models.get("demo-c").get("reason").asText()).isEqualTo(NOT_READY_BECAUSE);
      assertThat(models.get("demo-a").get("state").asText()).isEqualTo("READY");
      assertThat(models.get("demo-a").get("wantedInstances").asInt()).isEqualTo(2);
      assertThat(models.get("demo-a").get("reason").asText()).isEqualTo("only 1 of the 2 instances wanted are planned");
      assertThat(models.get("heavy").get("state").asText()).isEqualTo("NOT_READY");
      assertThat(models.get("heavy").get("plannedInstances").asInt()).isZero();
      assertThat(models.get("heavy").get("reason").asText()).contains("no host has measured demo-heavy yet");
      JsonNode summary = overview.get("summary");
      assertThat(summary.get("hosts").asInt()).isGreaterThanOrEqualTo(1); // another test adds a host
      assertThat(summary.get("slots").asInt()).isEqualTo(3);
      assertThat(summary.get("slotsReady").asInt()).as("cpu-3 serves demo-c, not ready").isEqualTo(2);
      assertThat(summary.get("models").asInt()).isEqualTo(5);
      assertThat(summary.get("modelsReady").asInt()).isEqualTo(3);
      assertThat(summary.get("deadLetters").get("count").asInt()).as("written at the start of this test class").isEqualTo(1);
    });
    // A key for demo only sees demo and no dead letters.
    JsonNode demoOnly = json("/dashboard/api/overview.json", DEMO_ONLY);
    assertThat(demoOnly.get("models")).extracting(m -> m.get("model").asText()).containsExactly("demo");
    assertThat(demoOnly.get("summary").get("deadLetters").isNull()).isTrue();
    assertThat(get("/dashboard/api/overview.json", null).statusCode()).isEqualTo(401);
    assertThat(json("/dashboard/api/session.json", ALL).get("views").get(0).asText()).as("the first screen").isEqualTo("overview");
  }

  @Test
  void shouldShowTheHostEnvironment() throws Exception {
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      JsonNode hosts = json("/dashboard/api/hosts.json", ALL).get("hosts");
      assertThat(hosts).hasSize(1);
      assertThat(hosts.get(0).get("host").asText()).isEqualTo(HOST);
      assertThat(hosts.get(0).get("usableCores").asInt()).isEqualTo(4);
      assertThat(hosts.get(0).get("baseline").get("throughput").asDouble()).isEqualTo(250.0);
    });
  }

  @Test
  void shouldGroupTimingsByModelVersionWithOneSeriesPerPartitionSize() throws Exception {
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      JsonNode models = json("/dashboard/api/timings.json", ALL).get("models");
      assertThat(models).hasSize(2);
      for (JsonNode m : models) {
        assertThat(m.get("model").asText()).isEqualTo("demo-mlp");
        assertThat(m.get("series")).hasSize(2);
        JsonNode size2 = m.get("series").get(1);
        assertThat(size2.get("size").asInt()).isEqualTo(2);
        assertThat(size2.get("points")).hasSize(3);
        assertThat(size2.get("points").get(2).get("batch").asInt()).isEqualTo(4);
        assertThat(size2.get("points").get(2).get("p50Ms").asDouble()).isEqualTo(5.0);
        assertThat(size2.get("points").get(2).get("throughput").asDouble()).isEqualTo(800.0);
      }
    });
  }

  @Test
  void shouldCutEachPoolIntoItsSlotsWithInstancesAndWeightFiles() throws Exception {
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      JsonNode host = json("/dashboard/api/plan.json", ALL).get("hosts").get(0);
      assertThat(host.get("host").asText()).isEqualTo(HOST);
      JsonNode pool = host.get("pools").get(0);
      assertThat(pool.get("size").asInt()).isEqualTo(4);
      assertThat(pool.get("slots")).extracting(s -> s.get("slot").asText()).containsExactly("cpu-0", "cpu-2", "cpu-3");
      assertThat(pool.get("slots").get(0).get("width").asInt()).isEqualTo(2);
      JsonNode instances = pool.get("slots").get(0).get("instances");
      assertThat(instances).extracting(i -> i.get("instanceId").asText()).containsExactly("demo#0", "demo-a#0");
      assertThat(instances.get(1).get("weightFile").asText()).isEqualTo("demo-mlp/adapters/demo-a.onnx_adapter");
      assertThat(host.get("partitions").get(0).get("predictedThroughput").asDouble()).isEqualTo(900.0);
      assertThat(host.get("partitions").get(0).get("measuredThroughput").asDouble()).isEqualTo(850.0);
      JsonNode version = host.get("versions").get(0);
      assertThat(version.get("chosenVersion").asText()).isEqualTo("1");
      assertThat(version.get("why").asText()).isEqualTo("fastest qualifying version: latency 2.5 ms measured on this host");
      assertThat(version.get("objective").asText()).isEqualTo("latency");
    });
  }

  @Test
  void shouldShowOnlyTheModelsAKeyMayUse() throws Exception {
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      JsonNode all = json("/dashboard/api/traffic.json", ALL).get("models");
      assertThat(all).extracting(m -> m.get("model").asText()).containsExactlyElementsOf(DemoMlp.SERVICE_MODELS.stream().sorted().toList());
      JsonNode demo = json("/dashboard/api/traffic.json", DEMO_ONLY).get("models");
      assertThat(demo).extracting(m -> m.get("model").asText()).containsExactly("demo");
      assertThat(demo.get(0).get("readyInstances").asInt()).isEqualTo(1);
      assertThat(demo.get(0).get("inFlight").asInt()).isEqualTo(2);
      assertThat(demo.get(0).get("queueDepth").asInt()).isEqualTo(3);
      assertThat(demo.get(0).get("lag").asLong()).isEqualTo(7);
    });
    JsonNode letters = json("/dashboard/api/deadletters.json", ALL);
    assertThat(letters.get("visible").asBoolean()).isTrue();
    assertThat(letters.get("deadLetters").get(0).get("offset").asLong()).isEqualTo(41);
    assertThat(letters.get("deadLetters").get(0).get("reason").asText()).isEqualTo("timing for an unknown model version");
    JsonNode hidden = json("/dashboard/api/deadletters.json", DEMO_ONLY);
    assertThat(hidden.get("visible").asBoolean()).isFalse();
    assertThat(hidden.get("deadLetters")).isEmpty();
  }

  @Test
  void shouldCountANewInferCallInTheTrafficView() throws Exception {
    long before = requests("demo-b");
    HttpResponse<String> infer = http.send(request("/v2/models/demo-b/infer", ALL)
        .POST(HttpRequest.BodyPublishers.ofString(inferBody())).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(infer.statusCode()).as(infer.body()).isEqualTo(200);
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(requests("demo-b")).isEqualTo(before + 1));
    JsonNode model = traffic("demo-b");
    JsonNode overview = byModel(json("/dashboard/api/overview.json", ALL).get("models")).get("demo-b");
    assertThat(model.get("p50Ms").isNumber()).as("p50 after a call in the window").isTrue();
    assertThat(model.get("errors").asLong()).isZero();
    assertThat(overview.get("requestsInWindow").asLong()).as("the overview counts the call in the window").isPositive();
    assertThat(overview.get("p99Ms").isNumber()).isTrue();
    assertThat(overview.get("errorsInWindow").asLong()).isZero();
  }

  @Test
  void shouldPushAChangedViewOnTheEventStream() throws Exception {
    List<String> events = new CopyOnWriteArrayList<>();
    CompletableFuture<HttpResponse<Stream<String>>> stream = http.sendAsync(request("/dashboard/api/events", ALL).GET().build(),
        HttpResponse.BodyHandlers.ofLines());
    CompletableFuture<Void> reading = stream.thenAccept(r -> {
      assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/event-stream"));
      r.body().forEach(events::add);
    });
    try {
      await().atMost(Duration.ofSeconds(20)).until(() -> events.contains("event: hosts") && events.contains("event: traffic"));
      int seen = events.size();
      send(producer, topics.hostEnvironments(), "pushed-host", DashboardRecords.host("pushed-host", 8));
      await().atMost(Duration.ofSeconds(20)).until(() -> events.subList(seen, events.size()).stream()
          .anyMatch(l -> l.startsWith("data: ") && l.contains("\"host\":\"pushed-host\"")));
    } finally {
      reading.cancel(true);
      stream.cancel(true);
    }
  }

  @Test
  void shouldSayWhatIfNeedsThePlannerWhenTheGatewayRunsWithoutIt() throws Exception {
    HttpResponse<String> r = http.send(request("/dashboard/api/whatif", ALL)
        .POST(HttpRequest.BodyPublishers.ofString("hosts: []\n")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(501);
    assertThat(JSON.readTree(r.body()).get("error").asText()).contains("partita replay --inventory");
  }

  private static Map<String, JsonNode> byModel(JsonNode models) {
    Map<String, JsonNode> out = new TreeMap<>();
    models.forEach(m -> out.put(m.get("model").asText(), m));
    return out;
  }

  private long requests(String model) throws Exception {
    return traffic(model).get("requests").asLong();
  }

  private JsonNode traffic(String model) throws Exception {
    for (JsonNode m : json("/dashboard/api/traffic.json", ALL).get("models")) {
      if (m.get("model").asText().equals(model)) {
        return m;
      }
    }
    throw new AssertionError("no traffic row for " + model);
  }

  private static String inferBody() {
    StringBuilder data = new StringBuilder();
    for (float v : DemoMlp.sampleInput(1, 5)[0]) {
      data.append(data.length() == 0 ? "" : ",").append(v);
    }
    return "{\"inputs\":[{\"name\":\"" + DemoMlp.INPUT + "\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[" + data + "]}]}";
  }

  private HttpRequest.Builder request(String path, String key) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + gateway.port() + path));
    return key == null ? b : b.header("Authorization", "Bearer " + key);
  }

  private HttpResponse<String> get(String path, String key) throws Exception {
    return http.send(request(path, key).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode json(String path, String key) throws Exception {
    HttpResponse<String> r = get(path, key);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }
}
