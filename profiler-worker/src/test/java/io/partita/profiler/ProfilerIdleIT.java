package io.partita.profiler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.partita.avro.ProfileRequest;
import io.partita.avro.ProfileStatus;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.models.demo.DemoRepository;
import io.partita.profiler.idle.ServingLoad;
import io.partita.profiler.idle.SlotLoad;
import io.partita.profiler.run.ProfileOutcome;
import io.partita.profiler.metrics.ProfilerMetrics;
import io.partita.testkit.KafkaFixture;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The profiler looks at its host's serving slots (their statuses on {@code <p>.workers.status})
 * before each measurement, waits for them to be idle enough, says in each timing event what it
 * measured under, and counts all of it in its metrics. A real broker, real ONNX Runtime, the demo
 * model; the slot statuses are written as a worker writes them.
 */
@ExtendWith(KafkaFixture.class)
class ProfilerIdleIT {
  private static final Codecs CODECS = Codecs.singleObject();
  private static final RecordCodec<TimingEvent> TIMINGS = CODECS.codec(TimingEvent.class);
  private static final RecordCodec<ProfileStatus> STATUS = CODECS.codec(ProfileStatus.class);
  private static final RecordCodec<ProfileRequest> REQUESTS = CODECS.codec(ProfileRequest.class);
  private static final RecordCodec<SlotStatus> SLOTS = CODECS.codec(SlotStatus.class);
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

  private Topics start(String name, Map<String, String> overrides) throws Exception {
    Map<String, String> s = new HashMap<>();
    s.put("kafka.bootstrap.servers", KafkaFixture.bootstrapServers());
    s.put("topic.prefix", KafkaFixture.uniquePrefix(name));
    s.put("host.id", HOST);
    s.put("model.repo", repo.toString());
    s.put("profiler.budget.ms", "50");
    s.put("profiler.baseline", "off");
    s.put("profiler.memory", "off");
    s.put("profiler.reprobe.ms", "0");
    s.putAll(overrides);
    service = new ProfilerService(ProfilerConfig.from(Settings.of(s)));
    service.start();
    Topics topics = service.topics();
    reader = new TopicReader(topics.profileTimings(), topics.profileStatus());
    return topics;
  }

  private static SlotStatus slot(String host, String slot, int inFlight, long answered, long at) {
    return SlotStatus.newBuilder().setHost(host).setSlot(slot).setModel("demo-mlp").setVersion("1").setPool("cpu")
        .setProvider("CPU").setThreads(1).setHealth("READY").setInFlight(inFlight).setAnswered(answered)
        .setTimestamp(at).build();
  }

  private static void send(String topic, String key, byte[] value) throws Exception {
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      producer.send(new ProducerRecord<>(topic, key, value)).get(10, TimeUnit.SECONDS);
    }
  }

  private static void publish(Topics topics, SlotStatus status) throws Exception {
    send(topics.workerStatus(), status.getHost() + "/" + status.getSlot(),
        SLOTS.encode(topics.workerStatus(), status));
  }

  private static void request(Topics topics, String id, List<Integer> batches) throws Exception {
    ProfileRequest r = ProfileRequest.newBuilder().setRequestId(id).setHost(HOST).setModel("demo-mlp").setVersion("1")
        .setSizes(List.of(1)).setBatches(batches).setBudgetMs(50).build();
    send(topics.profileRequests(), r.getHost(), REQUESTS.encode(topics.profileRequests(), r));
  }

  private List<TimingEvent> timings(Topics topics) {
    return reader.records(topics.profileTimings()).stream().map(r -> TIMINGS.decode(r.topic(), r.value())).toList();
  }

  private ProfileStatus finalStatus(Topics topics, String requestId) {
    return await().atMost(Duration.ofSeconds(60)).until(() -> reader.records(topics.profileStatus()).stream()
        .map(r -> STATUS.decode(r.topic(), r.value()))
        .filter(s -> s.getRequestId().equals(requestId) && !s.getState().equals("RUNNING"))
        .findFirst().orElse(null), s -> s != null);
  }

  /** The number of timing events once no new one has arrived for {@code quiet}; fails after {@code atMost}. */
  private int awaitNoNewTiming(Topics topics, Duration quiet, Duration atMost) {
    long[] last = {-1, System.nanoTime()}; // count seen, when it last changed
    await().atMost(atMost).pollInterval(Duration.ofMillis(100)).until(() -> {
      int now = timings(topics).size();
      if (now != last[0]) {
        last[0] = now;
        last[1] = System.nanoTime();
      }
      return System.nanoTime() - last[1] >= quiet.toNanos();
    });
    return (int) last[0];
  }

  /** Waits until the profiler has read the statuses and sees {@code inFlight} requests on its host's live slots. */
  private void awaitSeenInFlight(int inFlight) {
    await().atMost(Duration.ofSeconds(30)).until(() -> {
      ServingLoad.Reading r = service.idleGate().reading();
      return r != null && r.inFlight() == inFlight;
    });
  }

  @Test
  void shouldWaitWhileTheHostsSlotsAreBusyThenMeasureAndSayIdle() throws Exception {
    Topics topics = start("idle-wait", Map.of("profiler.idle.wait.ms", "60000"));
    long now = System.currentTimeMillis();
    publish(topics, slot(HOST, "s0", 3, 100, now));
    awaitSeenInFlight(3);

    request(topics, "r-wait", List.of(1));

    // Asked while the slot runs 3 requests: nothing is measured (the request is RUNNING, done 0).
    await().atMost(Duration.ofSeconds(30)).until(() -> reader.records(topics.profileStatus()).size(), n -> n >= 1);
    await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5)).until(() -> timings(topics).isEmpty());
    publish(topics, slot(HOST, "s0", 0, 100, System.currentTimeMillis()));

    assertThat(finalStatus(topics, "r-wait").getState()).isEqualTo("DONE");
    List<TimingEvent> events = timings(topics);
    assertThat(events).hasSize(1);
    assertThat(events.get(0).getCondition()).isEqualTo("IDLE");
    assertThat(events.get(0).getOk()).as(String.valueOf(events.get(0).getError())).isTrue();
    MeterRegistry registry = service.metrics().registry();
    assertThat(registry.get(ProfilerMetrics.IDLE_WAIT).tag("condition", "IDLE").timer().totalTime(TimeUnit.MILLISECONDS))
        .isGreaterThanOrEqualTo(1500);
  }

  @Test
  void shouldPauseStartUpProfilingWhileTheSlotsServeAndResumeWhenTheyAreIdle() throws Exception {
    Topics topics = start("yield", Map.of("profiler.idle.wait.ms", "120000"));
    // The slots of this host as a worker in the same process shows them (partita local): busy or idle on demand.
    AtomicBoolean busy = new AtomicBoolean(false);
    AtomicLong answered = new AtomicLong();
    service.watchSlots(() -> List.of(new SlotLoad("s0", "READY", busy.get() ? 4 : 0, busy.get() ? 12 : 0,
        busy.get() ? answered.addAndGet(50) : answered.get(), System.currentTimeMillis())), Duration.ofMillis(50));

    ProfileOutcome[] outcome = new ProfileOutcome[1];
    var profiling = service.profileAtStart("demo-mlp", 50).thenAccept(o -> outcome[0] = o);
    await().atMost(Duration.ofSeconds(60)).until(() -> !timings(topics).isEmpty());
    busy.set(true); // traffic comes: the point running ends, the next one waits
    await().atMost(Duration.ofSeconds(30)).until(() -> {
      ServingLoad.Reading r = service.idleGate().reading();
      return r != null && !r.idle();
    });
    // The point running when traffic came ends and is published; the test's reader may still be
    // behind on points published just before. Then nothing more is published while the slots serve.
    int paused = awaitNoNewTiming(topics, Duration.ofSeconds(3), Duration.ofSeconds(40));
    assertThat(profiling).as("start-up profiling paused with points left while the slots served").isNotDone();
    busy.set(false); // the slots are idle again: it goes on

    profiling.get(120, TimeUnit.SECONDS);
    assertThat(outcome[0].error()).isNull();
    assertThat(paused).isLessThan(outcome[0].steps());
    List<TimingEvent> events = await().atMost(Duration.ofSeconds(30))
        .until(() -> timings(topics), l -> l.size() == outcome[0].steps());
    assertThat(events).extracting(TimingEvent::getVersion).containsOnly("1", "2");
    // Every point started while the slots were idle: none was measured beside serving.
    assertThat(events).extracting(TimingEvent::getCondition).containsOnly("IDLE");
    assertThat(service.metrics().registry().get(ProfilerMetrics.IDLE_WAIT).tag("condition", "IDLE").timer()
        .totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(2000);
  }

  @Test
  void shouldMeasureAfterTheWaitRunsOutSayBusyAndServeTheMetrics() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Topics topics = start("busy", Map.of("profiler.idle.wait.ms", "800", "profiler.metrics.port", Integer.toString(port)));
    long now = System.currentTimeMillis();
    // Nothing in flight at the instants of the statuses, but 50 answered per second between them.
    publish(topics, slot(HOST, "s0", 0, 1000, now - 2000));
    publish(topics, slot(HOST, "s0", 0, 1100, now));
    await().atMost(Duration.ofSeconds(30)).until(() -> {
      ServingLoad.Reading r = service.idleGate().reading();
      return r != null && r.ratePerSecond() > 40;
    });

    request(topics, "r-busy", List.of(1, 2));

    assertThat(finalStatus(topics, "r-busy").getState()).isEqualTo("DONE");
    assertThat(timings(topics)).extracting(TimingEvent::getCondition).containsExactly("BUSY_AFTER_WAIT", "BUSY_AFTER_WAIT");
    MeterRegistry registry = service.metrics().registry();
    // One wait per request: the first point spent it, the second only looked.
    var waits = registry.get(ProfilerMetrics.IDLE_WAIT).tag("condition", "BUSY_AFTER_WAIT").timer();
    assertThat(waits.count()).isEqualTo(2);
    assertThat(waits.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(800);
    assertThat(registry.get(ProfilerMetrics.REQUESTED).counter().count()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> registry.get(ProfilerMetrics.DONE).counter().count() == 1);
    assertThat(registry.get(ProfilerMetrics.FAILED).counter().count()).isZero();
    assertThat(registry.get(ProfilerMetrics.OUTSTANDING).gauge().value()).isZero();
    assertThat(registry.get(ProfilerMetrics.STEP).tag("kind", "point").tag("ok", "true").timer().count()).isEqualTo(2);
    assertThat(registry.get(ProfilerMetrics.TIMINGS).tag("condition", "BUSY_AFTER_WAIT").counter().count()).isEqualTo(2);

    HttpResponse<String> scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://localhost:" + service.metricsPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(scrape.statusCode()).isEqualTo(200);
    assertThat(scrape.body()).contains("partita_profiler_measurements_requested_total 1.0")
        .contains("partita_profiler_measurements_done_total 1.0")
        .contains("partita_profiler_measurements_outstanding 0.0")
        .contains("partita_profiler_timings_published_total{condition=\"BUSY_AFTER_WAIT\"} 2.0")
        .contains("partita_profiler_idle_wait_seconds_count{condition=\"BUSY_AFTER_WAIT\"} 2")
        .contains("partita_profiler_step_seconds_count{kind=\"point\",ok=\"true\"} 2");
  }

  @Test
  void shouldMeasureAtOnceOnASpareHostIgnoringOtherHostsSlotsAndCountFailuresAndDeadLetters() throws Exception {
    Topics topics = start("spare", Map.of("profiler.idle.wait.ms", "60000"));
    publish(topics, slot("h2", "s0", 5, 0, System.currentTimeMillis()));
    await().atMost(Duration.ofSeconds(30)).until(() -> service.idleGate().reading() != null);

    send(topics.profileRequests(), HOST, "not a profile request".getBytes(StandardCharsets.UTF_8));
    ProfileRequest unknown = ProfileRequest.newBuilder().setRequestId("r-unknown").setHost(HOST).setModel("no-such-model")
        .build();
    send(topics.profileRequests(), HOST, REQUESTS.encode(topics.profileRequests(), unknown));
    request(topics, "r-spare", List.of(1));

    assertThat(finalStatus(topics, "r-spare").getState()).isEqualTo("DONE");
    assertThat(finalStatus(topics, "r-unknown").getState()).isEqualTo("FAILED");
    assertThat(timings(topics)).extracting(TimingEvent::getCondition).containsExactly("NO_SERVING");
    MeterRegistry registry = service.metrics().registry();
    await().atMost(Duration.ofSeconds(10)).until(() -> registry.get(ProfilerMetrics.DEAD_LETTERS).counter().count() == 1);
    assertThat(registry.get(ProfilerMetrics.REQUESTED).counter().count()).isEqualTo(2);
    await().atMost(Duration.ofSeconds(10)).until(() -> registry.get(ProfilerMetrics.FAILED).counter().count() == 1);
    assertThat(registry.get(ProfilerMetrics.DONE).counter().count()).isEqualTo(1);
    assertThat(registry.get(ProfilerMetrics.IDLE_WAIT).tag("condition", "NO_SERVING").timer().count()).isEqualTo(1);
  }

  @Test
  void shouldRecordUncheckedWhenTheIdleCheckIsOff() throws Exception {
    Topics topics = start("unchecked", Map.of("profiler.idle.check", "off"));
    publish(topics, slot(HOST, "s0", 5, 0, System.currentTimeMillis()));

    request(topics, "r-off", List.of(1));

    assertThat(finalStatus(topics, "r-off").getState()).isEqualTo("DONE");
    assertThat(timings(topics)).extracting(TimingEvent::getCondition).containsExactly("UNCHECKED");
    assertThat(service.idleGate()).isNull();
  }
}
