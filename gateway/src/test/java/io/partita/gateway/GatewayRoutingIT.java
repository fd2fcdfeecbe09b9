package io.partita.gateway;

import static io.partita.gateway.TestHttp.get;
import static io.partita.gateway.TestHttp.inferBody;
import static io.partita.gateway.TestHttp.post;
import static io.partita.gateway.TestHttp.produced;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gateway.routing=plan}: the gateway follows the routes this test writes to
 * {@code <prefix>.plan.routes} itself (no planner), a fake worker answers and says which partition
 * each request was read from. Each test uses its own service model.
 */
@ExtendWith(KafkaFixture.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayRoutingIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ROW = inferBody(1, 2, 3, 4, 5, 6, 7, 8);

  @TempDir static Path repo;
  private Topics topics;
  private Gateway gateway;
  private FakeWorker worker;
  private KafkaProducer<String, byte[]> producer;
  private final AtomicInteger ids = new AtomicInteger();

  @BeforeAll
  void start() throws Exception {
    DemoRepository.writeTo(repo);
    topics = new Topics(KafkaFixture.uniquePrefix("routing"));
    gateway = new Gateway(GatewayConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "plan",
        "gateway.timeout.ms", "20000"))));
    gateway.start();
    worker = new FakeWorker(topics, List.of("demo", "demo-a", "demo-b", "demo-c"));
    producer = KafkaFixture.producer();
  }

  @AfterAll
  void stop() throws Exception {
    if (producer != null) producer.close();
    if (worker != null) worker.close();
    if (gateway != null) gateway.close();
  }

  private void publish(String serviceModel, Route route) throws Exception {
    String topic = topics.planRoutes();
    byte[] value = route == null ? null : Codecs.singleObject().codec(Route.class).encode(topic, route);
    producer.send(new ProducerRecord<>(topic, serviceModel, value)).get();
  }

  private static RouteInstance instance(String id, boolean ready, String reason, int inFlight, int queueDepth, Integer... partitions) {
    return RouteInstance.newBuilder().setInstanceId(id).setHost("host-" + id.substring(id.indexOf('#') + 1))
        .setSlot("cpu-0").setReady(ready).setReason(reason).setPartitions(List.of(partitions))
        .setInFlight(inFlight).setQueueDepth(queueDepth).build();
  }

  private Route route(String model, RouteInstance... instances) {
    int ready = (int) List.of(instances).stream().filter(RouteInstance::getReady).count();
    return Route.newBuilder().setServiceModel(model).setRequestTopic(topics.requests(io.partita.models.demo.DemoMlp.MODEL_NAME)).setReadyInstances(ready)
        .setInstances(List.of(instances)).build();
  }

  /** Infers with a fresh request id; returns the id after checking the call was answered 200. */
  private String infer(String model) throws Exception {
    String id = model + "-r" + ids.incrementAndGet();
    HttpResponse<String> response = post(gateway, "/v2/models/" + model + "/infer", ROW, "X-Request-Id", id);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return id;
  }

  private String error(HttpResponse<String> response) throws Exception {
    return JSON.readTree(response.body()).get("error").asText();
  }

  @Test
  @Order(1)
  void shouldAnswer503WithoutARouteAndProduceNothing() throws Exception {
    assertThat(get(gateway, "/v2/health/ready").statusCode()).isEqualTo(503); // no model has a ready instance yet
    assertThat(get(gateway, "/v2/models/demo/ready").statusCode()).isEqualTo(503);
    long before = produced(topics, List.of("demo"));

    HttpResponse<String> response = post(gateway, "/v2/models/demo/infer", ROW);

    assertThat(response.statusCode()).isEqualTo(503);
    assertThat(error(response)).isEqualTo("no route for model 'demo' yet (is the planner running?)");
    assertThat(produced(topics, List.of("demo"))).isEqualTo(before);
  }

  @Test
  @Order(2)
  void shouldAnswer503NamingWhyWhenNoInstanceIsReady() throws Exception {
    publish("demo-b", route("demo-b",
        instance("demo-b#0", false, "no status from host-0/cpu-0 yet", 0, 0),
        instance("demo-b#1", false, "instance demo-b#1 is NOT_READY: sha256 mismatch", 0, 0, 2)));
    long before = produced(topics, List.of("demo-b"));

    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      HttpResponse<String> response = post(gateway, "/v2/models/demo-b/infer", ROW);
      assertThat(response.statusCode()).isEqualTo(503);
      assertThat(error(response)).isEqualTo("model 'demo-b' has no ready instance: "
          + "demo-b#0 on host-0/cpu-0: no status from host-0/cpu-0 yet; "
          + "demo-b#1 on host-1/cpu-0: instance demo-b#1 is NOT_READY: sha256 mismatch");
    });
    assertThat(get(gateway, "/v2/models/demo-b/ready").statusCode()).isEqualTo(503);
    assertThat(produced(topics, List.of("demo-b"))).isEqualTo(before);
  }

  @Test
  @Order(3)
  void shouldSpreadOverTheRequestTopicsPartitionsWhateverTheLoadFigures() throws Exception {
    publish("demo-a", route("demo-a",
        instance("demo-a#0", true, null, 4, 1, 0),
        instance("demo-a#1", true, null, 1, 0, 1, 3),
        instance("demo-a#2", false, "host-2/cpu-0 is STOPPED", 0, 0, 2)));
    await().atMost(Duration.ofSeconds(30)).until(() -> get(gateway, "/v2/models/demo-a/ready").statusCode() == 200);
    // gateway.readiness=all counts the fallback: every demo service model shares demo-mlp's request topic, so
    // the ready demo-a instances serve them all and the server is ready (ReadinessTest covers a catalog model with no instance)
    assertThat(get(gateway, "/v2/health/ready").statusCode()).isEqualTo(200);

    // The workers own the partitions in proportion to their capacity; the gateway spreads evenly over them, as
    // Kafka's partitioner does for any producer, whatever the (stale) load figures of the route say.
    Set<Integer> landed = new HashSet<>();
    for (int i = 0; i < 8; i++) {
      String id = infer("demo-a");
      assertThat(worker.partitionOf(id)).as(id).isEqualTo(keyedPartition(id));
      landed.add(worker.partitionOf(id));
    }
    assertThat(landed).hasSizeGreaterThan(1);

    // a tombstone deletes the route: refused again, nothing produced
    publish("demo-a", null);
    await().atMost(Duration.ofSeconds(30)).until(() -> get(gateway, "/v2/models/demo-a/ready").statusCode() == 503);
    long before = produced(topics, List.of("demo-a"));
    HttpResponse<String> refused = post(gateway, "/v2/models/demo-a/infer", ROW);
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(error(refused)).contains("no route for model 'demo-a' yet");
    assertThat(produced(topics, List.of("demo-a"))).isEqualTo(before);
  }

  @Test
  @Order(4)
  void shouldLeaveThePartitionToKafkaWhenTheInstanceListsNone() throws Exception {
    publish("demo-c", route("demo-c", instance("demo-c#0", true, null, 0, 0)));
    await().atMost(Duration.ofSeconds(30)).until(() -> get(gateway, "/v2/models/demo-c/ready").statusCode() == 200);

    Set<Integer> partitions = new HashSet<>();
    for (int i = 0; i < 8; i++) {
      String id = infer("demo-c");
      int expected = keyedPartition(id);
      assertThat(worker.partitionOf(id)).as(id).isEqualTo(expected);
      partitions.add(expected);
    }
    assertThat(partitions).hasSizeGreaterThan(1);
  }

  @Test
  @Order(5)
  void shouldServeAServiceModelOnAReadyInstanceOfTheSameBaseModel() throws Exception {
    // demo-b's own instances are not ready (order 2); demo-c, on the same base model, has one ready
    publish("demo-c", route("demo-c", instance("demo-c#0", true, null, 0, 0, 2)));
    await().atMost(Duration.ofSeconds(30)).until(() -> get(gateway, "/v2/models/demo-b/ready").statusCode() == 200);
    String id = infer("demo-b");
    assertThat(worker.partitionOf(id)).isEqualTo(keyedPartition(id));
  }

  /** Kafka's default partitioner for a keyed record: murmur2 of the key (the request id), over the topic's 4 partitions. */
  private static int keyedPartition(String id) {
    return Utils.toPositive(Utils.murmur2(id.getBytes(StandardCharsets.UTF_8))) % 4;
  }

  @Test
  @Order(6)
  void shouldServeACallThatArrivesWhileAReplanMovesItsInstance() throws Exception {
    // Every instance of the base model not ready: the plan has just moved them, the worker has not reported yet.
    for (String model : List.of("demo", "demo-a", "demo-b", "demo-c")) {
      publish(model, route(model, instance(model + "#0", false, "host-0/cpu-0 runs another model, the plan assigns demo-mlp/1", 0, 0, 1)));
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> get(gateway, "/v2/models/demo/ready").statusCode() == 503);

    String id = "moving-r" + ids.incrementAndGet();
    CompletableFuture<HttpResponse<String>> call = TestHttp.CLIENT.sendAsync(TestHttp.request(gateway, "/v2/models/demo/infer")
        .header("X-Request-Id", id).POST(HttpRequest.BodyPublishers.ofString(ROW)).build(), HttpResponse.BodyHandlers.ofString());
    // The call waits for the instance (refused at once, it would be done within milliseconds)...
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(1)).until(() -> !call.isDone());
    // ...and is served once the worker reports the instance in its new slot.
    publish("demo", route("demo", instance("demo#0", true, null, 0, 0, 3)));

    HttpResponse<String> response = call.get(30, TimeUnit.SECONDS);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(worker.partitionOf(id)).isEqualTo(3);
  }

  @Test
  @Order(7)
  void shouldAnswer503AfterABriefWaitWhenThePlacedInstanceNeverBecomesReady() throws Exception {
    publish("demo", route("demo", instance("demo#0", false, "instance demo#0 is NOT_READY: sha256 mismatch", 0, 0, 1)));
    await().atMost(Duration.ofSeconds(30)).until(() -> get(gateway, "/v2/models/demo/ready").statusCode() == 503);

    long start = System.nanoTime();
    HttpResponse<String> response = post(gateway, "/v2/models/demo/infer", ROW);
    long tookMs = (System.nanoTime() - start) / 1_000_000;

    assertThat(response.statusCode()).isEqualTo(503);
    assertThat(error(response)).isEqualTo("model 'demo' has no ready instance: demo#0 on host-0/cpu-0: instance demo#0 is NOT_READY: sha256 mismatch");
    System.out.printf("GatewayRoutingIT: a call for a placed but unready model was answered 503 after %d ms (grace %d ms)%n",
        tookMs, io.partita.gateway.infer.InferService.ROUTE_GRACE_MS);
  }
}
