package io.partita.profiler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.DeadLetter;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ProfileRequest;
import io.partita.avro.ProfileStatus;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.models.demo.DemoRepository;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.run.ProfileOutcome;
import io.partita.testkit.KafkaFixture;
import ai.onnxruntime.OrtEnvironment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The profiler service against a real broker and real ONNX Runtime, on the demo models. */
@ExtendWith(KafkaFixture.class)
class ProfilerServiceIT {

  private static final Codecs CODECS = Codecs.singleObject();
  private static final RecordCodec<TimingEvent> TIMINGS = CODECS.codec(TimingEvent.class);
  private static final RecordCodec<ProfileStatus> STATUS = CODECS.codec(ProfileStatus.class);
  private static final RecordCodec<HostEnvironment> ENVIRONMENTS = CODECS.codec(HostEnvironment.class);
  private static final RecordCodec<ProfileRequest> REQUESTS = CODECS.codec(ProfileRequest.class);
  private static final RecordCodec<DeadLetter> DEAD_LETTERS = CODECS.codec(DeadLetter.class);
  private static final String HOST = "h1";

  @TempDir
  static Path repo;

  private ProfilerService service;
  private TopicReader reader;

  @BeforeAll
  static void writeDemoRepository() throws Exception {
    DemoRepository.writeTo(repo);
  }

  @AfterEach
  void stop() {
    if (service != null) {
      service.close();
    }
    if (reader != null) {
      reader.close();
    }
  }

  private static Map<String, String> settings(String prefix) {
    Map<String, String> s = new HashMap<>();
    s.put("kafka.bootstrap.servers", KafkaFixture.bootstrapServers());
    s.put("topic.prefix", prefix);
    s.put("host.id", HOST);
    s.put("model.repo", repo.toString());
    s.put("profiler.budget.ms", "100");
    s.put("profiler.baseline", "off");
    s.put("profiler.memory", "off");
    s.put("profiler.reprobe.ms", "0");
    return s;
  }

  private Topics start(String name, Map<String, String> overrides, ProfilerService.EnvironmentProbe probe)
      throws Exception {
    Map<String, String> s = settings(KafkaFixture.uniquePrefix(name));
    s.putAll(overrides);
    ProfilerConfig config = ProfilerConfig.from(Settings.of(s));
    service = probe == null ? new ProfilerService(config) : new ProfilerService(config, probe);
    service.start();
    Topics topics = service.topics();
    reader = new TopicReader(topics.profileTimings(), topics.profileStatus(), topics.hostEnvironments(),
        topics.deadLetter());
    return topics;
  }

  private static ProfileRequest.Builder request(String id, String model) {
    return ProfileRequest.newBuilder().setRequestId(id).setHost(HOST).setModel(model).setVersion("1")
        .setSizes(List.of(1)).setBatches(List.of(1, 2)).setBudgetMs(100);
  }

  private static void send(Topics topics, String key, byte[] value) throws Exception {
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      producer.send(new ProducerRecord<>(topics.profileRequests(), key, value)).get(10, TimeUnit.SECONDS);
    }
  }

  private static void send(Topics topics, ProfileRequest r) throws Exception {
    send(topics, r.getHost(), REQUESTS.encode(topics.profileRequests(), r));
  }

  private List<TimingEvent> timings(Topics topics, String requestId) {
    return reader.records(topics.profileTimings()).stream().map(r -> TIMINGS.decode(r.topic(), r.value()))
        .filter(e -> requestId.equals(e.getRequestId())).toList();
  }

  private List<ProfileStatus> statuses(Topics topics) {
    return reader.records(topics.profileStatus()).stream().map(r -> STATUS.decode(r.topic(), r.value())).toList();
  }

  /** The final status of a request (DONE or FAILED), waiting for it. */
  private ProfileStatus finalStatus(Topics topics, String requestId) {
    return await().atMost(Duration.ofSeconds(60)).until(
        () -> statuses(topics).stream()
            .filter(s -> s.getRequestId().equals(requestId) && !s.getState().equals("RUNNING"))
            .findFirst().orElse(null),
        s -> s != null);
  }

  @Test
  void shouldPublishTheEnvironmentAtOnceThenWithItsBaselineAtStart() throws Exception {
    Topics topics = start("env", Map.of("profiler.baseline", "on", "profiler.baseline.budget.ms", "10"), null);

    List<ConsumerRecord<String, byte[]>> records = await().atMost(Duration.ofSeconds(60))
        .until(() -> reader.records(topics.hostEnvironments()), l -> l.size() >= 2);

    // First the pools (so the planner can place default instances at once), then the baseline.
    assertThat(ENVIRONMENTS.decode(records.get(0).topic(), records.get(0).value()).getBaseline()).isNull();
    ConsumerRecord<String, byte[]> record = records.get(1);
    assertThat(record.key()).isEqualTo(HOST);
    HostEnvironment env = ENVIRONMENTS.decode(record.topic(), record.value());
    assertThat(env.getHostId()).isEqualTo(HOST);
    assertThat(env.getUsableCores()).isPositive().isEqualTo(env.getUsableCpuIds().size());
    assertThat(env.getExecutionProviders()).contains("CPU");
    assertThat(env.getOnnxRuntimeVersion()).isNotBlank();
    assertThat(env.getTimestamp()).isPositive();
    assertThat(env.getBaseline()).isNotNull();
    assertThat(env.getBaseline().getThroughput()).isPositive();
    assertThat(env.getBaseline().getPointsMeasured()).isPositive()
        .isLessThanOrEqualTo(env.getBaseline().getGridSize());
    // environment() is set once the broker acknowledged the record, just after the reader may see it
    assertThat(await().atMost(Duration.ofSeconds(10)).until(service::environment, e -> e != null && e.baseline() != null))
        .isNotNull();
  }

  @Test
  void shouldPublishOneDecodableTimingEventPerPointOfARequestAndSkipOtherHosts() throws Exception {
    Topics topics = start("points", Map.of("profiler.memory", "on"), null);
    send(topics, request("for-h2", "demo-mlp").setHost("h2").build());
    send(topics, request("r1", "demo-mlp").build());

    ProfileStatus done = finalStatus(topics, "r1");

    assertThat(done.getState()).isEqualTo("DONE");
    assertThat(done.getHost()).isEqualTo(HOST);
    assertThat(done.getDone()).isEqualTo(2);
    assertThat(done.getTotal()).isEqualTo(2);
    List<ConsumerRecord<String, byte[]>> records = reader.records(topics.profileTimings());
    assertThat(records).extracting(ConsumerRecord::key)
        .containsExactly("demo-mlp/1/h1/cpu/1/1", "demo-mlp/1/h1/cpu/1/2");
    for (ConsumerRecord<String, byte[]> r : records) {
      TimingEvent e = TIMINGS.decode(r.topic(), r.value());
      assertThat(e.getOk()).as(String.valueOf(e.getError())).isTrue();
      assertThat(e.getRequestId()).isEqualTo("r1");
      assertThat(e.getModel()).isEqualTo("demo-mlp");
      assertThat(e.getVersion()).isEqualTo("1");
      assertThat(e.getProvider()).isEqualTo("CPU");
      assertThat(e.getGrouping()).isEmpty();
      assertThat(e.getP50Ms()).isPositive().isLessThanOrEqualTo(e.getP90Ms());
      assertThat(e.getP90Ms()).isLessThanOrEqualTo(e.getP99Ms());
      assertThat(e.getSamples()).isPositive();
      assertThat(e.getThroughput()).isPositive();
      assertThat(e.getMemoryBytes()).isPositive();
    }
    assertThat(statuses(topics)).filteredOn(s -> s.getState().equals("RUNNING")).extracting(ProfileStatus::getDone)
        .contains(0, 1, 2);
    // Requests are handled in order, so the one for h2 was seen (and skipped) before r1 finished.
    assertThat(statuses(topics)).noneMatch(s -> s.getRequestId().equals("for-h2"));
    assertThat(timings(topics, "for-h2")).isEmpty();
  }

  @Test
  void shouldFailAnUnknownModelClearlyAndKeepServing() throws Exception {
    Topics topics = start("unknown", Map.of(), null);
    send(topics, request("bad", "no-such-model").build());
    send(topics, request("good", "demo-mlp").setBatches(List.of(1)).build());

    ProfileStatus failed = finalStatus(topics, "bad");
    ProfileStatus done = finalStatus(topics, "good");

    assertThat(failed.getState()).isEqualTo("FAILED");
    assertThat(failed.getMessage()).contains("model: no model 'no-such-model'").contains("demo-mlp");
    assertThat(timings(topics, "bad")).isEmpty();
    assertThat(done.getState()).isEqualTo("DONE");
    assertThat(timings(topics, "good")).hasSize(1).allMatch(TimingEvent::getOk);
    assertThat(service.failure()).isNull();
  }

  @Test
  void shouldDeadLetterAnUndecodableRequestAndRefuseAnInvalidOne() throws Exception {
    Topics topics = start("deadletter", Map.of(), null);
    byte[] garbage = "not a profile request".getBytes(StandardCharsets.UTF_8);
    send(topics, HOST, garbage);
    send(topics, request("negative", "demo-mlp").setSizes(List.of(0)).build());
    send(topics, request("after", "demo-mlp").setBatches(List.of(1)).build());

    ProfileStatus done = finalStatus(topics, "after");
    ProfileStatus refused = finalStatus(topics, "negative");

    assertThat(done.getState()).isEqualTo("DONE");
    assertThat(refused.getState()).isEqualTo("FAILED");
    assertThat(refused.getMessage()).contains("sizes:");
    List<DeadLetter> letters = reader.records(topics.deadLetter()).stream()
        .map(r -> DEAD_LETTERS.decode(r.topic(), r.value())).toList();
    assertThat(letters).hasSize(2);
    DeadLetter first = letters.get(0);
    assertThat(first.getTopic()).isEqualTo(topics.profileRequests());
    assertThat(first.getOffset()).isZero();
    assertThat(first.getComponent()).isEqualTo("profiler");
    assertThat(StandardCharsets.UTF_8.decode(first.getValue()).toString()).isEqualTo("not a profile request");
    assertThat(letters.get(1).getOffset()).isEqualTo(1);
    assertThat(letters.get(1).getError()).contains("sizes:");
  }

  @Test
  void shouldMeasureAndPublishTheGroupingsTwoAndOneOne() throws Exception {
    Topics topics = start("grouping", Map.of(), null);
    send(topics, request("g", "demo-mlp").setSizes(List.of()).setBatches(List.of(4))
        .setGroupings(List.of(List.of(2), List.of(1, 1))).build());

    ProfileStatus status = finalStatus(topics, "g");

    assertThat(status.getTotal()).isEqualTo(2);
    List<ConsumerRecord<String, byte[]>> records = reader.records(topics.profileTimings());
    assertThat(records).extracting(ConsumerRecord::key)
        .containsExactly("demo-mlp/1/h1/cpu/2/4/g2", "demo-mlp/1/h1/cpu/2/4/g1+1");
    List<TimingEvent> events = timings(topics, "g");
    assertThat(events).extracting(TimingEvent::getGrouping).containsExactly(List.of(2), List.of(1, 1));
    assertThat(events).allMatch(e -> e.getSize() == 2);
    if (service.environment().usableCores() >= 2) {
      assertThat(status.getState()).isEqualTo("DONE");
      for (TimingEvent e : events) {
        assertThat(e.getOk()).as(String.valueOf(e.getError())).isTrue();
        assertThat(e.getThroughput()).isPositive();
        assertThat(e.getP50Ms()).isPositive().isLessThanOrEqualTo(e.getP99Ms());
      }
    } else {
      assertThat(events).allSatisfy(e -> assertThat(e.getError()).contains("usable"));
    }
  }

  @Test
  void shouldProfileEveryVersionWhenAskedDirectly() throws Exception {
    Topics topics = start("now", Map.of(), null);

    ProfileOutcome outcome = service.profileNow("demo-mlp", null, 20).get(120, TimeUnit.SECONDS);

    assertThat(outcome.error()).isNull();
    assertThat(outcome.versions()).containsExactly("1", "2");
    assertThat(outcome.steps()).isPositive();
    List<TimingEvent> events = await().atMost(Duration.ofSeconds(30))
        .until(() -> timings(topics, outcome.requestId()), l -> l.size() == outcome.steps());
    assertThat(events).extracting(TimingEvent::getVersion).containsOnly("1", "2");
    assertThat(finalStatus(topics, outcome.requestId()).getState()).isEqualTo("DONE");
  }

  /** A repository with one model whose input has a named dynamic dimension past the batch: [n, 3, width]. */
  private static Path namedDimensionRepository(Path dir) throws Exception {
    Path file = dir.resolve("wide/1/model.onnx");
    java.nio.file.Files.createDirectories(file.getParent());
    java.nio.file.Files.write(file, new io.partita.models.onnx.OnnxGraphBuilder("wide", "test")
        .input("x", ai.onnx.proto.OnnxMl.TensorProto.DataType.FLOAT, "n", 3, "width").relu("x", "y")
        .output("y", ai.onnx.proto.OnnxMl.TensorProto.DataType.FLOAT, "n", 3, "width").toBytes());
    return dir;
  }

  @Test
  void shouldMeasureAModelWithANamedDimensionAtTheSizeProfilerDimsGives(@TempDir Path dir) throws Exception {
    start("dims", Map.of("model.repo", namedDimensionRepository(dir).toString(), "profiler.dims", "width=16"), null);

    ProfileOutcome outcome = service.profileNow("wide", "1", 20).get(120, TimeUnit.SECONDS);

    assertThat(outcome.error()).isNull();
    assertThat(outcome.steps()).isPositive();
    assertThat(outcome.failedSteps()).isZero();
  }

  @Test
  void shouldFailEveryPointOfAModelWithANamedDimensionAndNoSizeSayingWhichSettingIsMissing(@TempDir Path dir) throws Exception {
    start("nodims", Map.of("model.repo", namedDimensionRepository(dir).toString()), null);

    ProfileOutcome outcome = service.profileNow("wide", "1", 20).get(120, TimeUnit.SECONDS);

    assertThat(outcome.steps()).isPositive();
    assertThat(outcome.failedSteps()).isEqualTo(outcome.steps());
    assertThat(outcome.points()).allSatisfy(p -> assertThat(p.error()).contains("width"));
  }

  @Test
  void shouldRepublishTheEnvironmentOnlyWhenTheHostChanged() throws Exception {
    ProbedHost real =
        HostProbe.live().probe(HOST, ProviderProbe.probe(OrtEnvironment.getEnvironment()));
    AtomicBoolean changed = new AtomicBoolean();
    AtomicInteger probes = new AtomicInteger();
    ProfilerService.EnvironmentProbe probe = () -> {
      probes.incrementAndGet();
      return changed.get() ? withOsVersion(real, real.osVersion() + "-upgraded") : real;
    };
    Topics topics = start("reprobe", Map.of("profiler.reprobe.ms", "50"), probe);

    await().atMost(Duration.ofSeconds(30)).until(() -> reader.records(topics.hostEnvironments()), l -> !l.isEmpty());
    int seen = probes.get();
    await().atMost(Duration.ofSeconds(30)).until(() -> probes.get() >= seen + 2); // unchanged re-probes ran
    changed.set(true);

    List<ConsumerRecord<String, byte[]>> envs = await().atMost(Duration.ofSeconds(30))
        .until(() -> reader.records(topics.hostEnvironments()), l -> l.size() >= 2);
    // Had an unchanged probe been republished, the second record would carry the old version.
    assertThat(envs).extracting(ConsumerRecord::key).containsOnly(HOST);
    assertThat(ENVIRONMENTS.decode(envs.get(0).topic(), envs.get(0).value()).getOsVersion())
        .isEqualTo(real.osVersion());
    assertThat(ENVIRONMENTS.decode(envs.get(1).topic(), envs.get(1).value()).getOsVersion())
        .isEqualTo(real.osVersion() + "-upgraded");
  }

  private static ProbedHost withOsVersion(ProbedHost e,
                                                                        String osVersion) {
    return new ProbedHost(e.hostId(), e.cpuModel(), e.cpuFlags(), e.logicalCores(),
        e.physicalCores(), e.usableCores(), e.usableCpuIds(), e.cpuQuotaCores(), e.memoryBytes(),
        e.memoryLimitBytes(), e.gpus(), e.onnxRuntimeVersion(), e.executionProviders(), e.osName(), osVersion,
        e.osArch(), e.javaVersion(), e.baseline());
  }
}
