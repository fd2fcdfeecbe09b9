package io.partita.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.BaselineScore;
import io.partita.avro.HostEnvironment;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.MountStatus;
import io.partita.avro.SlotStatus;
import io.partita.avro.Tensor;
import io.partita.avro.TimingEvent;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.planner.PlannerConfig;
import io.partita.planner.PlannerService;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import io.partita.runtime.Pinning;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The closed loop: timings make the planner choose a grouping of this host's two cores, the worker
 * (worker.follow-plan) opens the planned slots and reports them, the planner marks the route
 * instances ready, and the gateway (gateway.routing=plan) routes HTTP calls to them. A new timing
 * then makes the planner regroup {2} into {1,1} while requests flow: the worker re-partitions and
 * every request is answered.
 */
@ExtendWith(KafkaFixture.class)
class ClosedLoopIT {
  private static final String HOST = "loop-host";
  private static final String MODEL = DemoMlp.MODEL_NAME;
  private static final String V1 = DemoMlp.VERSION_FP32;
  private static final String V2 = DemoMlp.VERSION_FP16;
  private static final Codecs CODECS = Codecs.singleObject();

  @TempDir Path dir;
  private final List<AutoCloseable> running = new ArrayList<>();
  private ScheduledExecutorService sender;

  @AfterEach
  void tearDown() throws Exception {
    if (sender != null) {
      sender.shutdownNow();
    }
    for (int i = running.size() - 1; i >= 0; i--) {
      running.get(i).close();
    }
  }

  @Test
  void shouldFollowThePlanFromTimingsToRoutedCallsAndRegroupWithoutLosingARequest() throws Exception {
    List<Integer> cpus = Pinning.usableCpus();
    Assumptions.assumeTrue(cpus.size() >= 2, "needs two usable CPUs");
    Path repo = dir.resolve("models");
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("loop"));
    Settings settings = Settings.of(Map.ofEntries(
        Map.entry("kafka.bootstrap.servers", KafkaFixture.bootstrapServers()),
        Map.entry("topic.prefix", topics.prefix()),
        Map.entry("model.repo", repo.toString()),
        Map.entry("host.id", HOST),
        Map.entry("http.port", "0"),
        Map.entry("gateway.id", "loop"),
        Map.entry("gateway.routing", "plan"),
        Map.entry("worker.threads", "1"),
        Map.entry("worker.follow-plan", "true"),
        Map.entry("worker.status.interval.ms", "1000"),
        Map.entry("planner.state.dir", dir.resolve("planner").toString()),
        Map.entry("planner.debounce.ms", "100"),
        Map.entry("planner.replication.factor", "1"),
        Map.entry("topics.replication", "1")));
    PlannerConfig plannerConfig = PlannerConfig.from(settings);
    start(new PlannerService(plannerConfig));
    assertThat(PlannerCommand.publishCatalog(plannerConfig, repo, plannerConfig.codecs())).isPositive();
    InferenceWorker worker = start(new InferenceWorker(WorkerConfig.from(settings)));
    Gateway gateway = start(new Gateway(GatewayConfig.from(settings)));
    String url = "http://localhost:" + gateway.port();
    HttpClient http = HttpClient.newHttpClient();

    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer();
         KafkaConsumer<String, byte[]> statusReader = KafkaFixture.consumer(topics.workerStatus())) {
      // The host and timings that make {2} the best grouping of its two cores for demo-mlp/1:
      // throughput 1/4 per ms on one 2-core slot against 2/10 on two 1-core slots.
      send(producer, topics.hostEnvironments(), HOST, host(cpus.subList(0, 2)));
      send(producer, topics.profileTimings(), "v1-1", timing(V1, 1, 10.0, 1000));
      send(producer, topics.profileTimings(), "v1-2", timing(V1, 2, 4.0, 1000));
      send(producer, topics.profileTimings(), "v2-1", timing(V2, 1, 30.0, 1000));
      send(producer, topics.profileTimings(), "v2-2", timing(V2, 2, 20.0, 1000));

      Map<String, SlotStatus> status = new HashMap<>();
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        readStatus(statusReader, status);
        assertSlot(status.get(HOST + "/cpu-0"), cpus.subList(0, 2));
        assertThat(status.keySet()).containsOnly(HOST + "/cpu-0");
      });
      for (String model : DemoMlp.SERVICE_MODELS) {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(infer(http, url, model, 0).statusCode()).isEqualTo(200));
      }

      // A steady stream over Kafka (as any producer would send it) and over HTTP through the plan's routes.
      String replyTopic = topics.replies("loop-client");
      int total = 240;
      AtomicInteger sent = new AtomicInteger();
      Map<Integer, CompletableFuture<HttpResponse<String>>> calls = new ConcurrentHashMap<>();
      sender = Executors.newSingleThreadScheduledExecutor();
      sender.scheduleAtFixedRate(() -> {
        int i = sent.get();
        if (i >= total) {
          return;
        }
        String model = DemoMlp.SERVICE_MODELS.get(i % DemoMlp.SERVICE_MODELS.size());
        producer.send(request(topics.requests(DemoMlp.MODEL_NAME), "k-" + i, model, replyTopic));
        calls.put(i, inferAsync(http, url, model, i));
        sent.incrementAndGet();
      }, 0, 25, TimeUnit.MILLISECONDS);
      await().atMost(Duration.ofSeconds(30)).until(() -> sent.get() >= total / 4);

      // Slower 2-core runs: {1,1} is best now (2/10 against 1/6).
      send(producer, topics.profileTimings(), "v1-2", timing(V1, 2, 6.0, 2000));
      await().atMost(Duration.ofSeconds(60)).until(() -> sent.get() >= total);

      Set<String> expected = new HashSet<>();
      for (int i = 0; i < total; i++) {
        expected.add("k-" + i);
      }
      Map<String, InferenceReply> replies = new HashMap<>();
      List<String> errors = new ArrayList<>();
      Set<String> instances = new HashSet<>();
      try (KafkaConsumer<String, byte[]> replyReader = KafkaFixture.consumer(replyTopic)) {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
          for (ConsumerRecord<String, byte[]> r : replyReader.poll(Duration.ofMillis(200))) {
            InferenceReply reply = CODECS.codec(InferenceReply.class).decode(r.topic(), r.value());
            replies.put(KafkaHeaders.get(r.headers(), KafkaHeaders.CORRELATION_ID), reply);
            instances.add(reply.getInstance());
            if (reply.getError() != null) {
              errors.add(reply.getId() + ": " + reply.getError().getCode() + " " + reply.getError().getMessage());
            }
          }
          assertThat(replies.keySet()).containsExactlyInAnyOrderElementsOf(expected);
        });
      }
      assertThat(errors).as("error replies").isEmpty();

      Map<Integer, Integer> httpCodes = new HashMap<>();
      for (CompletableFuture<HttpResponse<String>> call : calls.values()) {
        int code = call.get(60, TimeUnit.SECONDS).statusCode();
        httpCodes.merge(code, 1, Integer::sum);
      }
      System.out.printf("ClosedLoopIT: %d Kafka requests answered by %s; %d HTTP calls answered with status codes %s%n",
          total, instances, calls.size(), httpCodes);
      assertThat(calls).hasSize(total);
      // Every HTTP call is answered; the only refusal allowed is 503 while a moved instance is not
      // reported ready yet (between the new plan and the worker's status about it).
      assertThat(httpCodes.keySet()).isSubsetOf(200, 503);
      assertThat(httpCodes).containsKey(200);

      // The worker re-partitioned: two 1-core slots, the instances spread over them.
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        readStatus(statusReader, status);
        assertSlot(status.get(HOST + "/cpu-0"), cpus.subList(0, 1));
        assertSlot(status.get(HOST + "/cpu-1"), cpus.subList(1, 2));
      });
      assertThat(instances).contains(HOST + "/cpu-0", HOST + "/cpu-1");
      for (String model : DemoMlp.SERVICE_MODELS) {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(infer(http, url, model, 1).statusCode()).isEqualTo(200));
      }
      assertThat(worker.failure()).isNull();
    }
  }

  private <T extends io.partita.common.Service> T start(T service) throws Exception {
    service.start();
    running.add(service);
    return service;
  }

  private static void assertSlot(SlotStatus s, List<Integer> cpus) {
    assertThat(s).as("status").isNotNull();
    assertThat(s.getCpus()).isEqualTo(cpus);
    assertThat(s.getModel()).isEqualTo(MODEL);
    assertThat(s.getVersion()).isEqualTo(V1);
    assertThat(s.getHealth()).isEqualTo("READY");
    assertThat(s.getRequestPartitions()).isNotEmpty();
    assertThat(s.getServiceModels()).isNotEmpty();
    for (MountStatus m : s.getServiceModels()) {
      // its planned instance, or a service model of the base model it mounted on demand for a request
      assertThat(m.getInstanceId()).isIn(m.getServiceModel() + "#0", s.getHost() + "/" + s.getSlot() + "/" + m.getServiceModel());
      assertThat(m.getState()).isIn("READY", "EVICTED");
    }
    assertThat(s.getServiceModels()).as("planned instances on the slot")
        .anySatisfy(m -> assertThat(m.getInstanceId()).isEqualTo(m.getServiceModel() + "#0"));
  }

  private static void readStatus(KafkaConsumer<String, byte[]> reader, Map<String, SlotStatus> status) {
    for (ConsumerRecord<String, byte[]> r : reader.poll(Duration.ofMillis(200))) {
      if (r.value() == null) {
        status.remove(r.key());
      } else {
        status.put(r.key(), CODECS.codec(SlotStatus.class).decode(r.topic(), r.value()));
      }
    }
  }

  private static String body(int seed) {
    StringBuilder data = new StringBuilder();
    for (float v : DemoMlp.sampleInput(1, seed)[0]) {
      data.append(data.length() == 0 ? "" : ",").append(v);
    }
    return "{\"inputs\":[{\"name\":\"" + DemoMlp.INPUT + "\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[" + data + "]}]}";
  }

  private static HttpRequest post(String url, String model, int seed) {
    return HttpRequest.newBuilder(URI.create(url + "/v2/models/" + model + "/infer")).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body(seed))).build();
  }

  private static HttpResponse<String> infer(HttpClient http, String url, String model, int seed) throws Exception {
    return http.send(post(url, model, seed), HttpResponse.BodyHandlers.ofString());
  }

  private static CompletableFuture<HttpResponse<String>> inferAsync(HttpClient http, String url, String model, int seed) {
    return http.sendAsync(post(url, model, seed), HttpResponse.BodyHandlers.ofString());
  }

  private static ProducerRecord<String, byte[]> request(String topic, String id, String model, String replyTo) {
    float[] row = DemoMlp.sampleInput(1, id.hashCode())[0];
    ByteBuffer b = ByteBuffer.allocate(row.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : row) {
      b.putFloat(v);
    }
    b.flip();
    Tensor input = Tensor.newBuilder().setName(DemoMlp.INPUT).setDatatype("FP32").setShape(List.of(1L, (long) row.length)).setData(b).build();
    InferenceRequest request = InferenceRequest.newBuilder().setId(id).setServiceModel(model).setInputs(List.of(input)).build();
    ProducerRecord<String, byte[]> r = new ProducerRecord<>(topic, id, CODECS.codec(InferenceRequest.class).encode(topic, request));
    KafkaHeaders.put(r.headers(), KafkaHeaders.REPLY_TO, replyTo);
    KafkaHeaders.put(r.headers(), KafkaHeaders.CORRELATION_ID, id);
    return r;
  }

  @SuppressWarnings("unchecked")
  private static <T extends org.apache.avro.specific.SpecificRecord> void send(KafkaProducer<String, byte[]> producer, String topic,
      String key, T value) throws Exception {
    producer.send(new ProducerRecord<>(topic, key, CODECS.codec((Class<T>) value.getClass()).encode(topic, value))).get();
  }

  private static HostEnvironment host(List<Integer> cpus) {
    return HostEnvironment.newBuilder().setHostId(HOST).setCpuModel("test cpu").setCpuFlags(List.of("avx2"))
        .setLogicalCores(cpus.size()).setPhysicalCores(cpus.size()).setUsableCores(cpus.size()).setUsableCpuIds(cpus)
        .setCpuQuotaCores(null).setMemoryBytes(8L << 30).setMemoryLimitBytes(null).setGpus(List.of())
        .setOnnxRuntimeVersion("1.23.2").setExecutionProviders(List.of("CPU")).setOsName("Linux").setOsVersion("6")
        .setOsArch("amd64").setJavaVersion("17")
        .setBaseline(new BaselineScore(100.0, 1, 1, 4, 16, MODEL)).setTimestamp(0).build();
  }

  private static TimingEvent timing(String version, int size, double p50Ms, long timestamp) {
    return TimingEvent.newBuilder().setModel(MODEL).setVersion(version).setHost(HOST).setPool("cpu").setSize(size)
        .setBatch(1).setProvider("CPU").setGrouping(List.of()).setP50Ms(p50Ms)
        .setP90Ms(p50Ms).setP99Ms(p50Ms).setMeanMs(p50Ms).setSamples(100).setThroughput(1000.0 / p50Ms)
        .setMemoryBytes(1 << 20).setStable(true).setPinned(true).setOk(true).setError(null).setRequestId(null)
        .setTimestamp(timestamp).build();
  }
}
