package io.partita.worker.slot;

import static io.partita.worker.WorkerFixtures.request;
import static io.partita.worker.WorkerFixtures.toRows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import ai.onnxruntime.OrtEnvironment;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.models.demo.DemoMlp;
import io.partita.models.repo.RepositoryIndex;
import io.partita.runtime.Pinning;
import io.partita.runtime.SessionOpener;
import io.partita.worker.WorkerFixtures;
import io.partita.worker.metrics.WorkerMetrics;
import io.partita.worker.serving.WeightFileMounts;
import io.partita.worker.serving.WeightFileRef;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Slots and their router over real ONNX Runtime, without Kafka: jobs in, replies out. */
class SlotsTest {
  private static final Assignments.Defaults DEFAULTS = new Assignments.Defaults("host-1", 1, 32, 0, true);

  @TempDir Path repo;
  @TempDir Path dir;
  private RepositoryIndex index;
  private SimpleMeterRegistry registry;
  private Slots slots;
  private final Map<String, InferenceReply> replies = new ConcurrentHashMap<>();
  private final Map<String, Integer> answers = new ConcurrentHashMap<>();

  @BeforeEach
  void setUp() throws Exception {
    index = WorkerFixtures.demoRepository(repo);
    registry = new SimpleMeterRegistry();
  }

  @AfterEach
  void tearDown() {
    if (slots != null) {
      slots.close();
    }
  }

  private Slots start(List<SlotAssignment> assignments, long delayMs, boolean share) throws Exception {
    return start(assignments, delayMs, share, true);
  }

  private Slots start(List<SlotAssignment> assignments, long delayMs, boolean share, boolean acrossWeightFiles) throws Exception {
    List<SlotSpec> specs = Assignments.resolve(assignments, index, DEFAULTS, Pinning.usableCpus(), "test");
    slots = new Slots(index, specs, new Slots.Settings(delayMs, share, acrossWeightFiles), new SessionOpener(OrtEnvironment.getEnvironment(), SessionOpener.CudaFallback.TO_CPU), new WorkerMetrics(registry),
        System::currentTimeMillis, () -> { });
    slots.start(Duration.ofMinutes(1));
    return slots;
  }

  private Slots startDefault(long delayMs) throws Exception {
    return start(Assignments.fromSettings(index, DEFAULTS, List.of(), -1, Pinning.usableCpus()), delayMs, true);
  }

  private void submit(InferenceRequest request, long deadline) {
    long now = System.currentTimeMillis();
    slots.submit(new Job(request, now, now, System.nanoTime(), deadline, reply -> {
      replies.put(reply.getId(), reply);
      answers.merge(reply.getId(), 1, Integer::sum);
    }));
  }

  private void awaitReplies(int count) {
    await().atMost(Duration.ofSeconds(30)).until(() -> replies.size() >= count);
  }

  @Test
  void shouldRefuseToOpenAModelFileWhoseSha256ChangedSinceTheScanAndNameItInTheSlotStatus() throws Exception {
    Path cache = dir.resolve("cache");
    var v1 = index.model(DemoMlp.MODEL_NAME).orElseThrow().version("1").orElseThrow();
    byte[] bytes = java.nio.file.Files.readAllBytes(v1.modelFile());
    bytes[bytes.length - 1] ^= 1; // the file on disk is no longer the one the catalog names
    java.nio.file.Files.write(v1.modelFile(), bytes);
    List<SlotAssignment> assignments = Assignments.fromSettings(index, DEFAULTS, List.of(), -1, Pinning.usableCpus());
    List<SlotSpec> specs = Assignments.resolve(assignments, index, DEFAULTS, Pinning.usableCpus(), "test");

    slots = new Slots(index, specs, new Slots.Settings(1, true, true, java.util.Optional.of(cache), java.util.Optional.of(index.root())),
        new SessionOpener(OrtEnvironment.getEnvironment(), SessionOpener.CudaFallback.TO_CPU), new WorkerMetrics(registry),
        System::currentTimeMillis, () -> { });
    slots.start(Duration.ofMinutes(1));

    Slot broken = slots.slots().stream().filter(s -> s.spec().version().version().equals("1")).findFirst().orElseThrow();
    Slot fine = slots.slots().stream().filter(s -> s.spec().version().version().equals("2")).findFirst().orElseThrow();
    assertThat(broken.health()).isEqualTo(Slot.Health.FAILED);
    assertThat(broken.message()).contains(v1.relativePath()).contains("but the catalog says " + v1.sha256());
    assertThat(fine.health()).isEqualTo(Slot.Health.READY);
    // version 2 and the weight files its slot mounted went through the cache; version 1's changed file never did
    List<String> expected = new java.util.ArrayList<>(List.of(index.model(DemoMlp.MODEL_NAME).orElseThrow().version("2").orElseThrow().sha256()));
    index.serviceModels().values().forEach(sm -> sm.weightFile().ifPresent(w -> expected.add(w.sha256())));
    assertThat(java.nio.file.Files.list(cache).map(p -> p.getFileName().toString()).toList())
        .containsExactlyInAnyOrderElementsOf(expected).doesNotContain(v1.sha256());
  }

  @Test
  void shouldTakeANewLargestBatchInPlaceAndReplaceSlotsWhoseAssignmentChanged() throws Exception {
    List<SlotAssignment> first = Assignments.fromSettings(index, DEFAULTS, List.of(1), -1, Pinning.usableCpus());
    startDefaultFrom(first);
    List<Slot> before = slots.slots();
    // The same assignments with another capacity: nothing to open or close (the worker logs no change)
    List<SlotAssignment> otherCapacity = first.stream().map(a -> SlotAssignment.newBuilder(a).setCapacity(42.0).build()).toList();
    assertThat(slots.wouldReplace(Assignments.resolve(otherCapacity, index, DEFAULTS, Pinning.usableCpus(), "test"))).isFalse();

    // Only maxBatch changes (the planner's profile batch): the same slots keep running with the new limit.
    List<SlotAssignment> smaller = first.stream().map(a -> SlotAssignment.newBuilder(a).setMaxBatch(4).build()).toList();
    assertThat(slots.wouldReplace(Assignments.resolve(smaller, index, DEFAULTS, Pinning.usableCpus(), "test")))
        .as("another largest batch is taken in place").isFalse();
    Slots.Change retuned = slots.apply(Assignments.resolve(smaller, index, DEFAULTS, Pinning.usableCpus(), "test"),
        Duration.ofMinutes(1), Duration.ofSeconds(30));
    assertThat(retuned.applied()).isTrue();
    assertThat(retuned.retired()).isEmpty();
    assertThat(slots.slots()).hasSize(before.size());
    for (int i = 0; i < before.size(); i++) {
      assertThat(slots.slots().get(i)).isSameAs(before.get(i));
    }
    assertThat(slots.statuses()).extracting(SlotStatus::getMaxBatch).containsOnly(4);

    // Another slot id: new slots open, the old ones are drained, closed and reported retired.
    List<SlotAssignment> renamed = smaller.stream().map(a -> SlotAssignment.newBuilder(a).setSlot("p-" + a.getSlot()).build()).toList();
    assertThat(slots.wouldReplace(Assignments.resolve(renamed, index, DEFAULTS, Pinning.usableCpus(), "test"))).isTrue();
    for (int i = 0; i < 20; i++) {
      submit(request("before-" + i, "demo-b", DemoMlp.sampleInput(1, i)), Long.MAX_VALUE);
    }
    Slots.Change replaced = slots.apply(Assignments.resolve(renamed, index, DEFAULTS, Pinning.usableCpus(), "test"),
        Duration.ofMinutes(1), Duration.ofSeconds(30));
    assertThat(replaced.applied()).isTrue();
    assertThat(replaced.retired()).containsExactlyInAnyOrderElementsOf(before.stream().map(s -> s.spec().name()).toList());
    before.forEach(s -> assertThat(s.health()).isEqualTo(Slot.Health.STOPPED));
    submit(request("after", "demo-b", DemoMlp.sampleInput(1, 99)), Long.MAX_VALUE);
    awaitReplies(21);
    replies.values().forEach(r -> assertThat(r.getError()).as(r.getId()).isNull());
    assertThat(answers.values()).containsOnly(1);
    assertThat(replies.get("after").getInstance()).startsWith("host-1/p-");
  }

  private void startDefaultFrom(List<SlotAssignment> assignments) throws Exception {
    start(assignments, 1, true);
  }

  @Test
  void shouldAnswerInterleavedServiceModelsEachWithItsOwnAdapterInBatchesOfOneWeightFile() throws Exception {
    // Batching across weight files off: long enough a delay that the interleaved requests queue up together.
    start(Assignments.fromSettings(index, DEFAULTS, List.of(), -1, Pinning.usableCpus()), 300, true, false);
    Map<String, float[][]> inputs = new ConcurrentHashMap<>();
    for (int i = 0; i < 40; i++) {
      String model = DemoMlp.SERVICE_MODELS.get(i % DemoMlp.SERVICE_MODELS.size());
      float[][] x = DemoMlp.sampleInput(1 + i % 3, i);
      inputs.put("r" + i, x);
      submit(request("r" + i, model, "1", x), Long.MAX_VALUE);
    }
    awaitReplies(40);
    for (int i = 0; i < 40; i++) {
      InferenceReply reply = replies.get("r" + i);
      assertThat(reply.getError()).as("r%d", i).isNull();
      float[][] expected = DemoMlp.reference(inputs.get("r" + i), DemoMlp.adapterForServiceModel(reply.getServiceModel()).orElse(null), "1");
      float[][] actual = toRows(reply.getOutputs().get(0));
      assertThat(actual.length).isEqualTo(expected.length);
      for (int r = 0; r < expected.length; r++) {
        for (int c = 0; c < expected[r].length; c++) {
          assertThat(actual[r][c]).as("r%d %s [%d][%d]", i, reply.getServiceModel(), r, c).isCloseTo(expected[r][c], within(1e-4f));
        }
      }
    }
    // Batching happened, and every batch was tagged with one service model (hence one weight file).
    List<DistributionSummary> batches = new ArrayList<>(registry.find(WorkerMetrics.BATCH_SIZE).summaries());
    assertThat(batches).extracting(s -> s.getId().getTag(WorkerMetrics.TAG_SERVICE_MODEL))
        .containsExactlyInAnyOrderElementsOf(DemoMlp.SERVICE_MODELS);
    assertThat(batches.stream().mapToDouble(DistributionSummary::totalAmount).sum()).isEqualTo(40);
    assertThat(batches.stream().mapToDouble(DistributionSummary::max).max().orElse(0)).isGreaterThan(1);
    assertThat(answers.values()).containsOnly(1);
  }

  @Test
  void shouldAnswerInterleavedServiceModelsInBatchesMixingWeightFilesWhenTheModelQualifies() throws Exception {
    startDefault(300); // the demo model qualifies for the per-row LoRA form
    assertThat(slots.slots()).allSatisfy(s -> assertThat(s.session().perRow()).isTrue());
    Map<String, float[][]> inputs = new ConcurrentHashMap<>();
    for (int i = 0; i < 40; i++) {
      String model = DemoMlp.SERVICE_MODELS.get(i % DemoMlp.SERVICE_MODELS.size());
      float[][] x = DemoMlp.sampleInput(1 + i % 3, 100 + i);
      inputs.put("m" + i, x);
      submit(request("m" + i, model, "1", x), Long.MAX_VALUE);
    }
    awaitReplies(40);
    for (int i = 0; i < 40; i++) {
      InferenceReply reply = replies.get("m" + i);
      assertThat(reply.getError()).as("m%d", i).isNull();
      assertThat(reply.getServiceModel()).isEqualTo(DemoMlp.SERVICE_MODELS.get(i % DemoMlp.SERVICE_MODELS.size()));
      float[][] expected = DemoMlp.reference(inputs.get("m" + i), DemoMlp.adapterForServiceModel(reply.getServiceModel()).orElse(null), "1");
      float[][] actual = toRows(reply.getOutputs().get(0));
      assertThat(actual.length).isEqualTo(expected.length);
      for (int r = 0; r < expected.length; r++) {
        for (int c = 0; c < expected[r].length; c++) {
          assertThat(actual[r][c]).as("m%d %s [%d][%d]", i, reply.getServiceModel(), r, c).isCloseTo(expected[r][c], within(1e-4f));
        }
      }
    }
    // Batches mixing service models ran (tagged with the base model), larger than one request.
    List<DistributionSummary> batches = new ArrayList<>(registry.find(WorkerMetrics.BATCH_SIZE).summaries());
    assertThat(batches).extracting(s -> s.getId().getTag(WorkerMetrics.TAG_SERVICE_MODEL)).contains(DemoMlp.MODEL_NAME);
    assertThat(batches.stream().filter(s -> DemoMlp.MODEL_NAME.equals(s.getId().getTag(WorkerMetrics.TAG_SERVICE_MODEL)))
        .mapToDouble(DistributionSummary::max).max().orElse(0)).isGreaterThan(DemoMlp.SERVICE_MODELS.size());
    assertThat(batches.stream().mapToDouble(DistributionSummary::totalAmount).sum()).isEqualTo(40);
    assertThat(answers.values()).containsOnly(1);
  }

  @Test
  void shouldAnswerDeadlineExceededWithoutRunningARequestThatExpiresInTheQueue() throws Exception {
    startDefault(60_000); // nothing runs before the deadline passes
    submit(request("late", "demo-a", "1", DemoMlp.sampleInput(1, 1)), System.currentTimeMillis() + 50);
    awaitReplies(1);
    assertThat(replies.get("late").getError().getCode()).isEqualTo(ErrorCode.DEADLINE_EXCEEDED);
    assertThat(registry.find(WorkerMetrics.INFERENCE).timers()).as("nothing ran").isEmpty();
  }

  @Test
  void shouldRunWhatIsQueuedWhenStopping() throws Exception {
    startDefault(60_000);
    for (int i = 0; i < 5; i++) {
      submit(request("q" + i, "demo-b", null, DemoMlp.sampleInput(1, i)), Long.MAX_VALUE);
    }
    slots.stop(Duration.ofSeconds(30));
    assertThat(replies).hasSize(5);
    assertThat(replies.values()).allMatch(r -> r.getError() == null && r.getModelVersion().equals("2"));
  }

  @Test
  void shouldSayRetryWhenNoSlotOfAKnownServiceModelsBaseModelRunsHere() throws Exception {
    start(List.of(), 0, true); // the plan gave this worker no slot of demo-mlp, while it still owns some of its partitions
    submit(request("moving", "demo", null, DemoMlp.sampleInput(1, 1)), Long.MAX_VALUE);
    submit(request("unknown", "no-such-model", null, DemoMlp.sampleInput(1, 1)), Long.MAX_VALUE);
    awaitReplies(2);
    assertThat(replies.get("moving").getError().getCode()).isEqualTo(ErrorCode.NOT_READY);
    assertThat(replies.get("moving").getError().getMessage()).contains("no slot of base model 'demo-mlp'", "retry");
    assertThat(replies.get("unknown").getError().getCode()).isEqualTo(ErrorCode.NOT_FOUND);
    assertThat(replies.get("unknown").getError().getMessage()).contains("'no-such-model' is not served here");
  }

  @Test
  void shouldRefuseBadInputUnknownVersionsAndVersionsWithoutASlot() throws Exception {
    SlotAssignment onlyV1 = SlotAssignment.newBuilder().setHost("host-1").setSlot("s").setModel(DemoMlp.MODEL_NAME).setVersion("1")
        .setPool("cpu").setServiceModels(Assignments.read(writeList("[{\"slot\":\"s\",\"model\":\"demo-mlp\",\"version\":\"1\"}]"),
            index, "host-1").get(0).getServiceModels()).build();
    start(List.of(onlyV1), 0, true);
    submit(request("bad", "demo", new float[][] {{1f, 2f}}), Long.MAX_VALUE);
    submit(request("v9", "demo", "9", DemoMlp.sampleInput(1, 1)), Long.MAX_VALUE);
    submit(request("v2", "demo", "2", DemoMlp.sampleInput(1, 1)), Long.MAX_VALUE);
    submit(request("newest", "demo", null, DemoMlp.sampleInput(1, 1)), Long.MAX_VALUE);
    awaitReplies(4);
    assertThat(replies.get("bad").getError().getCode()).isEqualTo(ErrorCode.BAD_INPUT);
    assertThat(replies.get("bad").getError().getMessage()).contains("input 'input'.shape[1]");
    assertThat(replies.get("v9").getError().getCode()).isEqualTo(ErrorCode.NOT_FOUND);
    assertThat(replies.get("v2").getError().getCode()).isEqualTo(ErrorCode.NOT_READY);
    assertThat(replies.get("v2").getError().getMessage()).contains("no slot on this worker");
    assertThat(replies.get("newest").getModelVersion()).as("the newest version with a slot here").isEqualTo("1");
  }

  @Test
  void shouldShareOneSessionBetweenOneCoreSlotsOfAVersionWhenAsked() throws Exception {
    List<Integer> usable = Pinning.usableCpus();
    List<Integer> sizes = usable.size() >= 2 ? List.of(1, 1) : List.of(1);
    List<SlotAssignment> assignments = Assignments.fromSettings(index, DEFAULTS, sizes, -1, usable);

    Function<Slots, Map<String, String>> sessionBySlot = s -> {
      Map<String, String> out = new java.util.TreeMap<>();
      s.statuses().forEach(st -> out.put(st.getSlot(), st.getSession()));
      return out;
    };
    Map<String, String> shared = sessionBySlot.apply(start(assignments, 0, true));
    for (int i = 0; i < 20; i++) {
      submit(request("s" + i, DemoMlp.SERVICE_MODELS.get(i % 4), i % 2 == 0 ? "1" : "2", DemoMlp.sampleInput(2, i)), Long.MAX_VALUE);
    }
    awaitReplies(20);
    assertThat(replies.values()).allMatch(r -> r.getError() == null);
    for (SlotStatus status : slots.statuses()) {
      assertThat(status.getCpus()).hasSize(1);
      assertThat(status.getHealth()).isEqualTo("READY");
    }
    slots.close();
    Map<String, String> separate = sessionBySlot.apply(start(assignments, 0, false));

    assertThat(shared.values().stream().distinct()).hasSize(2); // one per version
    assertThat(separate.values().stream().distinct()).hasSize(separate.size()); // one per slot
  }

  @Test
  void shouldRefuseAWeightFileNamedByAUriWhenTheWorkerHasNoModelCacheAndNameTheSetting() throws Exception {
    String sha = index.serviceModel("demo-b").orElseThrow().weightFile().orElseThrow().sha256();
    Path file = writeList("""
        [{"slot": "s", "model": "demo-mlp", "version": "1", "serviceModels": ["demo",
          {"serviceModel": "demo-b", "weightFile": {"path": "http://models:8000/demo-mlp/adapters/b.onnx_adapter", "sha256": "%s"}}]}]
        """.formatted(sha));
    start(Assignments.read(file, index, "host-1"), 0, true);

    assertThat(slots.statuses().get(0).getServiceModels()).filteredOn(m -> m.getServiceModel().equals("demo-b"))
        .singleElement().satisfies(m -> {
          assertThat(m.getState()).isEqualTo("NOT_READY");
          assertThat(m.getReason()).contains("http://models:8000/demo-mlp/adapters/b.onnx_adapter").contains("worker.model.cache.dir");
        });
  }

  @Test
  void shouldKeepServingTheOthersWhenAWeightFileFailsToMount() throws Exception {
    Path file = writeList("""
        [{"slot": "s", "model": "demo-mlp", "version": "1", "serviceModels": ["demo", "demo-a",
          {"serviceModel": "demo-b", "weightFile": {"path": "demo-mlp/adapters/b.onnx_adapter", "sha256": "%s"}}]}]
        """.formatted("0".repeat(64)));
    start(Assignments.read(file, index, "host-1"), 0, true);
    submit(request("a", "demo-a", null, DemoMlp.sampleInput(1, 1)), Long.MAX_VALUE);
    submit(request("b", "demo-b", null, DemoMlp.sampleInput(1, 1)), Long.MAX_VALUE);
    awaitReplies(2);
    assertThat(replies.get("a").getError()).isNull();
    assertThat(replies.get("b").getError().getCode()).isEqualTo(ErrorCode.NOT_READY);
    assertThat(replies.get("b").getError().getMessage()).contains("sha256");

    SlotStatus status = slots.statuses().get(0);
    assertThat(status.getHealth()).isEqualTo("DEGRADED");
    assertThat(status.getServiceModels()).filteredOn(m -> m.getServiceModel().equals("demo-b"))
        .singleElement().satisfies(m -> {
          assertThat(m.getState()).isEqualTo("NOT_READY");
          assertThat(m.getReason()).contains("sha256");
        });
    assertThat(status.getServiceModels()).filteredOn(m -> m.getServiceModel().equals("demo-a"))
        .singleElement().satisfies(m -> assertThat(m.getState()).isEqualTo("READY"));
  }

  @Test
  void shouldMountAndUnmountAServiceModelOnARunningSlotWithoutReloadingTheBase() throws Exception {
    start(Assignments.read(writeList("[{\"slot\": \"s\", \"model\": \"demo-mlp\", \"version\": \"1\", \"serviceModels\": [\"demo\"]}]"),
        index, "host-1"), 0, true);
    Slot slot = slots.slot("s").orElseThrow();
    var session = slot.session();
    String path = io.partita.models.demo.DemoRepository.adapterPath("c");
    WeightFileMounts.Mount mount = slots.mount("s", "legal", "legal#1",
        new WeightFileRef(path, io.partita.models.repo.Sha256.of(repo.resolve(path))));
    assertThat(mount.state()).isEqualTo(WeightFileMounts.State.READY);
    assertThat(slot.session()).as("the base session is not reopened").isSameAs(session);

    float[][] x = DemoMlp.sampleInput(2, 5);
    submit(request("legal-1", "legal", null, x), Long.MAX_VALUE);
    awaitReplies(1);
    float[][] expected = DemoMlp.reference(x, DemoMlp.adapter("c"), "1");
    assertThat(toRows(replies.get("legal-1").getOutputs().get(0))[1][3]).isCloseTo(expected[1][3], within(1e-4f));
    assertThat(slots.statuses().get(0).getServiceModels()).extracting(m -> m.getServiceModel() + "=" + m.getState())
        .containsExactly("demo=READY", "legal=READY");

    assertThat(slots.unmount("s", "legal")).isTrue();
    assertThat(session.mounts().mount("legal")).isEmpty();
    submit(request("legal-2", "legal", null, x), Long.MAX_VALUE);
    awaitReplies(2);
    assertThat(replies.get("legal-2").getError().getCode()).isEqualTo(ErrorCode.NOT_FOUND);
  }

  @Test
  void shouldServeEveryServiceModelOfItsBaseModelByMountingOnDemandUnderTheBudget() throws Exception {
    long oneAdapter = java.nio.file.Files.size(repo.resolve(io.partita.models.demo.DemoRepository.adapterPath("a")));
    start(Assignments.read(writeList("[{\"slot\": \"s\", \"model\": \"demo-mlp\", \"version\": \"1\", \"memoryBudgetBytes\": "
        + (oneAdapter + oneAdapter / 2) + ", \"serviceModels\": [\"demo\"]}]"), index, "host-1"), 0, true);
    float[][] x = DemoMlp.sampleInput(2, 9);
    List<String> order = List.of("demo-a", "demo-b", "demo-c", "demo-a");
    for (int i = 0; i < order.size(); i++) {
      submit(request("od-" + i, order.get(i), null, x), Long.MAX_VALUE);
      awaitReplies(i + 1);
      InferenceReply reply = replies.get("od-" + i);
      assertThat(reply.getError()).as(order.get(i)).isNull();
      float[][] expected = DemoMlp.reference(x, DemoMlp.adapterForServiceModel(order.get(i)).orElseThrow(), "1");
      float[][] got = toRows(reply.getOutputs().get(0));
      for (int r = 0; r < expected.length; r++) {
        for (int c = 0; c < expected[r].length; c++) {
          assertThat(got[r][c]).isCloseTo(expected[r][c], within(1e-5f));
        }
      }
    }
    SlotStatus status = slots.statuses().get(0);
    // the budget holds one adapter: each new one evicted the least recently used
    assertThat(status.getMountedBytes()).isLessThanOrEqualTo(oneAdapter + oneAdapter / 2);
    assertThat(status.getServiceModels()).extracting(m -> m.getServiceModel() + "=" + m.getState())
        .containsExactly("demo=READY", "demo-a=READY", "demo-b=EVICTED", "demo-c=EVICTED");
    assertThat(status.getServiceModels()).filteredOn(m -> m.getServiceModel().equals("demo-b"))
        .singleElement().satisfies(m -> assertThat(m.getInstanceId()).isEqualTo("host-1/s/demo-b"));
  }

  @Test
  void shouldServeAServiceModelOnASlotWithNoInstanceOfItByMountingItsWeightFile() throws Exception {
    // s1 holds demo-a's instance; s2 holds only demo's. With s1 busy, demo-a's next request goes to s2.
    start(Assignments.read(writeList("""
        [{"slot": "s1", "model": "demo-mlp", "version": "1", "serviceModels": ["demo-a"]},
         {"slot": "s2", "model": "demo-mlp", "version": "1", "serviceModels": ["demo"]}]"""), index, "host-1"), 10_000, true);
    float[][] x = DemoMlp.sampleInput(1, 21);
    submit(request("first", "demo-a", null, x), Long.MAX_VALUE); // queued on s1 (it holds the file), waiting for its batch
    submit(request("second", "demo-a", null, x), Long.MAX_VALUE); // s1 has a row queued, s2 none: s2 mounts demo-a

    assertThat(slots.slot("s2").orElseThrow().serves("demo-a")).isTrue();
    assertThat(slots.slot("s2").orElseThrow().status(System.currentTimeMillis()).getServiceModels())
        .filteredOn(m -> m.getServiceModel().equals("demo-a")).singleElement().satisfies(m -> {
          assertThat(m.getState()).isEqualTo("READY");
          assertThat(m.getInstanceId()).isEqualTo("host-1/s2/demo-a");
        });
    slots.close(); // runs what is queued
    awaitReplies(2);
    float[][] expected = DemoMlp.reference(x, DemoMlp.adapter("a"), "1");
    for (String id : List.of("first", "second")) {
      assertThat(replies.get(id).getError()).as(id).isNull();
      assertThat(toRows(replies.get(id).getOutputs().get(0))[0][2]).as(id).isCloseTo(expected[0][2], within(1e-4f));
    }
    assertThat(replies.get("first").getInstance()).isEqualTo("host-1/s1");
    assertThat(replies.get("second").getInstance()).isEqualTo("host-1/s2");
  }

  @Test
  void shouldKeepEverySlotOfTheBaseModelBusyWithAJobOnOneServiceModel() throws Exception {
    // The plan put demo-a on s1 only (as partita local's plan put demo-a and demo-c on one slot, demo and demo-b on
    // the other). A job on demo-a whose rows come faster than one slot runs them: here they all arrive before any
    // batch is due (a long batching delay, batches larger than the job), so where each went is the router's choice alone.
    start(Assignments.read(writeList("""
        [{"slot": "s1", "model": "demo-mlp", "version": "1", "maxBatch": 4096, "serviceModels": ["demo-a", "demo-c"]},
         {"slot": "s2", "model": "demo-mlp", "version": "1", "maxBatch": 4096, "serviceModels": ["demo", "demo-b"]}]"""),
        index, "host-1"), 10_000, true);
    int requests = 200;
    for (int i = 0; i < requests; i++) {
      submit(request("job-" + i, "demo-a", null, DemoMlp.sampleInput(4, i)), Long.MAX_VALUE);
    }
    assertThat(slots.slots()).extracting(Slot::load).as("rows queued per slot").allMatch(rows -> rows >= requests * 4 / 3);
    slots.close(); // runs what each slot holds
    awaitReplies(requests);

    assertThat(replies.values()).allMatch(r -> r.getError() == null);
    Map<String, Long> perSlot = new java.util.TreeMap<>();
    replies.values().forEach(r -> perSlot.merge(r.getInstance(), 1L, Long::sum));
    assertThat(perSlot).containsOnlyKeys("host-1/s1", "host-1/s2");
    assertThat(perSlot.values()).as("answers per slot %s", perSlot).allMatch(n -> n >= requests / 3);
    Map<String, Long> answeredBySlot = new java.util.TreeMap<>();
    slots.statuses().forEach(st -> answeredBySlot.put(st.getSlot(), st.getAnswered()));
    assertThat(answeredBySlot).isEqualTo(Map.of("s1", perSlot.get("host-1/s1"), "s2", perSlot.get("host-1/s2")));
  }

  @Test
  void shouldLeaveTheServingWindowOfAWarmedUpSlotEmptySoThePlannerNeverCountsWarmUpRuns() throws Exception {
    List<SlotSpec> specs = Assignments.resolve(Assignments.read(writeList("""
        [{"slot": "s1", "model": "demo-mlp", "version": "1", "serviceModels": ["demo-a"]},
         {"slot": "s2", "model": "demo-mlp", "version": "1", "serviceModels": ["demo"]}]"""), index, "host-1"),
        index, DEFAULTS, Pinning.usableCpus(), "test");
    int warmUp = 40;
    slots = new Slots(index, specs, new Slots.Settings(1, true, true, java.util.Optional.empty(), java.util.Optional.empty(), warmUp),
        new SessionOpener(OrtEnvironment.getEnvironment(), SessionOpener.CudaFallback.TO_CPU), new WorkerMetrics(registry),
        System::currentTimeMillis, () -> { });
    slots.start(Duration.ofMinutes(1));

    slots.warmUp(warmUp); // as the worker does before its first status
    for (SlotStatus st : slots.statuses()) {
      assertThat(st.getAnswered()).as("%s ran its warm-up", st.getSlot()).isEqualTo(warmUp);
      assertThat(st.getServing().getBatches()).as("%s serving runs after the warm-up", st.getSlot()).isZero();
      assertThat(st.getServing().getItems()).isZero();
      assertThat(st.getServing().getBusyNanos()).isZero();
      assertThat(st.getServing().getSizes()).isEmpty();
    }

    // Slots opened for a new plan are warmed up before they take requests: theirs is empty too.
    List<SlotSpec> renamed = specs.stream().map(sp -> new SlotSpec(sp.host(), "p-" + sp.slot(), sp.version(), sp.pool(),
        sp.session(), sp.maxRows(), sp.budgetBytes(), sp.instances())).toList();
    assertThat(slots.apply(renamed, Duration.ofMinutes(1), Duration.ofSeconds(30)).applied()).isTrue();
    assertThat(slots.statuses()).extracting(SlotStatus::getSlot).containsExactlyInAnyOrder("p-s1", "p-s2");
    for (SlotStatus st : slots.statuses()) {
      assertThat(st.getAnswered()).as("%s ran its warm-up", st.getSlot()).isEqualTo(warmUp);
      assertThat(st.getServing().getBatches()).as("%s serving runs after the warm-up", st.getSlot()).isZero();
    }

    // What serves afterwards is counted.
    submit(request("real", "demo", null, DemoMlp.sampleInput(3, 1)), Long.MAX_VALUE);
    awaitReplies(1);
    assertThat(replies.get("real").getError()).isNull();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(slots.statuses())
        .extracting(st -> st.getServing().getItems()).containsExactlyInAnyOrder(3L, 0L));
  }

  @Test
  void shouldCountTheRunsOfServiceModelsMountedOnDemandInTheSlotsServingEvidence() throws Exception {
    // The slot's only instance is demo's; demo-a and demo-b are mounted when their requests come. Their runs are the
    // base model's runs on this slot's grouping, so its serving evidence counts them as any other.
    start(Assignments.read(writeList("[{\"slot\": \"s\", \"model\": \"demo-mlp\", \"version\": \"1\", \"serviceModels\": [\"demo\"]}]"),
        index, "host-1"), 0, true);
    List<String> order = List.of("demo-a", "demo-b", "demo-a", "demo-b", "demo-a");
    for (int i = 0; i < order.size(); i++) {
      submit(request("od-" + i, order.get(i), null, DemoMlp.sampleInput(2, i)), Long.MAX_VALUE);
      awaitReplies(i + 1); // one at a time: each runs as a batch of its own 2 rows
      assertThat(replies.get("od-" + i).getError()).as(order.get(i)).isNull();
    }
    SlotStatus status = slots.statuses().get(0);
    assertThat(status.getServiceModels()).extracting(m -> m.getServiceModel() + "=" + m.getInstanceId())
        .contains("demo-a=host-1/s/demo-a", "demo-b=host-1/s/demo-b");
    assertThat(status.getServing().getItems()).isEqualTo(2L * order.size());
    assertThat(status.getServing().getBatches()).isEqualTo(order.size());
    assertThat(status.getServing().getBusyNanos()).isPositive();
    assertThat(status.getServing().getSizes()).singleElement().satisfies(b -> {
      assertThat(b.getRows()).isEqualTo(2);
      assertThat(b.getRuns()).isEqualTo(order.size());
    });
  }

  @Test
  void shouldRunTheRestOfAMixedBatchAfterwardsWhenItsWeightFilesDoNotFitTheBudgetTogether() throws Exception {
    long oneAdapter = java.nio.file.Files.size(repo.resolve(io.partita.models.demo.DemoRepository.adapterPath("a")));
    start(Assignments.read(writeList("[{\"slot\": \"s\", \"model\": \"demo-mlp\", \"version\": \"1\", \"memoryBudgetBytes\": "
        + (oneAdapter + oneAdapter / 2) + ", \"serviceModels\": [\"demo\"]}]"), index, "host-1"), 300, true);
    List<String> order = List.of("demo-a", "demo-b", "demo", "demo-c", "demo-a", "demo-b");
    for (int i = 0; i < order.size(); i++) {
      submit(request("mix-" + i, order.get(i), null, DemoMlp.sampleInput(1, 50 + i)), Long.MAX_VALUE);
    }
    awaitReplies(order.size());
    for (int i = 0; i < order.size(); i++) {
      InferenceReply reply = replies.get("mix-" + i);
      assertThat(reply.getError()).as("mix-%d", i).isNull();
      float[][] expected = DemoMlp.reference(DemoMlp.sampleInput(1, 50 + i), DemoMlp.adapterForServiceModel(order.get(i)).orElse(null), "1");
      float[][] got = toRows(reply.getOutputs().get(0));
      for (int c = 0; c < expected[0].length; c++) {
        assertThat(got[0][c]).as("mix-%d", i).isCloseTo(expected[0][c], within(1e-4f));
      }
    }
    assertThat(answers.values()).containsOnly(1);
    assertThat(slots.statuses().get(0).getMountedBytes()).isLessThanOrEqualTo(oneAdapter + oneAdapter / 2);
  }

  private Path writeList(String json) throws Exception {
    Path file = dir.resolve("slots-" + System.nanoTime() + ".json");
    java.nio.file.Files.writeString(file, json);
    return file;
  }
}
