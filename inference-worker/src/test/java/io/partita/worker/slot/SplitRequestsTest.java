package io.partita.worker.slot;

import static io.partita.worker.WorkerFixtures.request;
import static io.partita.worker.WorkerFixtures.toRows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.InferenceReply;
import io.partita.avro.SlotAssignment;
import io.partita.models.demo.DemoMlp;
import io.partita.models.repo.RepositoryIndex;
import io.partita.runtime.Pinning;
import io.partita.runtime.SessionOpener;
import io.partita.worker.WorkerFixtures;
import io.partita.worker.metrics.WorkerMetrics;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Requests that carry a batch larger than the slot's largest batch: cut into slot-sized runs, and
 * answered with one reply equal to one direct ONNX Runtime run of the whole batch.
 */
class SplitRequestsTest {
  private static final Assignments.Defaults DEFAULTS = new Assignments.Defaults("host-1", 1, 32, 0, true);
  private static final int SLOT_BATCH = 4;

  @TempDir Path repo;
  private RepositoryIndex index;
  private SimpleMeterRegistry registry;
  private Slots slots;
  private final Map<String, InferenceReply> replies = new ConcurrentHashMap<>();
  private final Map<String, Integer> answers = new ConcurrentHashMap<>();
  private final Map<String, Stages> stages = new ConcurrentHashMap<>();

  @BeforeEach
  void setUp() throws Exception {
    index = WorkerFixtures.demoRepository(repo);
    registry = new SimpleMeterRegistry();
    List<SlotAssignment> assignments = Assignments.fromSettings(index, DEFAULTS, List.of(), -1, Pinning.usableCpus()).stream()
        .map(a -> SlotAssignment.newBuilder(a).setMaxBatch(SLOT_BATCH).build()).toList();
    List<SlotSpec> specs = Assignments.resolve(assignments, index, DEFAULTS, Pinning.usableCpus(), "test");
    slots = new Slots(index, specs, new Slots.Settings(1, true, true),
        new SessionOpener(OrtEnvironment.getEnvironment(), SessionOpener.CudaFallback.TO_CPU), new WorkerMetrics(registry),
        System::currentTimeMillis, () -> { });
    slots.start(Duration.ofMinutes(1));
  }

  @AfterEach
  void tearDown() {
    if (slots != null) {
      slots.close();
    }
  }

  private void submit(String id, String serviceModel, float[][] x) {
    long now = System.currentTimeMillis();
    Stages s = Stages.readNow();
    s.decoded();
    stages.put(id, s);
    slots.submit(new Job(request(id, serviceModel, "1", x), now, now, System.nanoTime(), Long.MAX_VALUE, reply -> {
      replies.put(reply.getId(), reply);
      answers.merge(reply.getId(), 1, Integer::sum);
    }, s));
  }

  private static float[][] direct(Path model, float[][] x) throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    float[] flat = new float[x.length * x[0].length];
    for (int r = 0; r < x.length; r++) {
      System.arraycopy(x[r], 0, flat, r * x[0].length, x[0].length);
    }
    try (OrtSession session = env.createSession(model.toString());
         OnnxTensor input = OnnxTensor.createTensor(env, FloatBuffer.wrap(flat), new long[] {x.length, x[0].length});
         OrtSession.Result result = session.run(Map.of(DemoMlp.INPUT, input))) {
      return (float[][]) result.get(0).getValue();
    }
  }

  @Test
  void shouldAnswerARequestLargerThanTheSlotBatchWithOneReplyEqualToOneDirectOrtRun() throws Exception {
    float[][] x = DemoMlp.sampleInput(10, 42);

    submit("big", DemoMlp.BASE_SERVICE_MODEL, x);

    await().atMost(Duration.ofSeconds(30)).until(() -> replies.containsKey("big"));
    InferenceReply reply = replies.get("big");
    assertThat(reply.getError()).isNull();
    assertThat(reply.getOutputs().get(0).getShape()).containsExactly(10L, (long) DemoMlp.OUTPUT_SIZE);
    float[][] expected = direct(index.model(DemoMlp.MODEL_NAME).orElseThrow().version("1").orElseThrow().modelFile(), x);
    float[][] actual = toRows(reply.getOutputs().get(0));
    for (int r = 0; r < expected.length; r++) {
      for (int c = 0; c < expected[r].length; c++) {
        assertThat(actual[r][c]).as("[%d][%d]", r, c).isCloseTo(expected[r][c], within(1e-5f));
      }
    }
    assertThat(answers).containsExactly(Map.entry("big", 1));
    // It ran as three slot-sized runs (4 + 4 + 2 rows), none larger than the slot's batch.
    List<DistributionSummary> batches = List.copyOf(registry.find(WorkerMetrics.BATCH_SIZE).summaries());
    assertThat(batches.stream().mapToLong(DistributionSummary::count).sum()).isEqualTo(3);
    Map<String, Long> stamps = parse(stages.get("big").header());
    assertThat(stamps.get("run-start")).isLessThanOrEqualTo(stamps.get("run-end"));
  }

  @Test
  void shouldAnswerASplitRequestAndSmallRequestsQueuedBesideItEachOnceWithTheirOwnRows() throws Exception {
    float[][] big = DemoMlp.sampleInput(6, 7);
    float[][] small = DemoMlp.sampleInput(1, 8);
    Path model = index.model(DemoMlp.MODEL_NAME).orElseThrow().version("1").orElseThrow().modelFile();

    submit("six", DemoMlp.BASE_SERVICE_MODEL, big);
    for (int i = 0; i < 5; i++) {
      submit("one-" + i, DemoMlp.BASE_SERVICE_MODEL, small);
    }

    await().atMost(Duration.ofSeconds(30)).until(() -> replies.size() == 6);
    float[][] expectedBig = direct(model, big);
    float[][] actualBig = toRows(replies.get("six").getOutputs().get(0));
    assertThat(actualBig.length).isEqualTo(6);
    for (int r = 0; r < 6; r++) {
      for (int c = 0; c < DemoMlp.OUTPUT_SIZE; c++) {
        assertThat(actualBig[r][c]).isCloseTo(expectedBig[r][c], within(1e-5f));
      }
    }
    float[][] expectedSmall = direct(model, small);
    for (int i = 0; i < 5; i++) {
      float[][] actual = toRows(replies.get("one-" + i).getOutputs().get(0));
      for (int c = 0; c < DemoMlp.OUTPUT_SIZE; c++) {
        assertThat(actual[0][c]).isCloseTo(expectedSmall[0][c], within(1e-5f));
      }
    }
    assertThat(answers.values()).containsOnly(1);
  }

  @Test
  void shouldCutRowsIntoSlotSizedPartsWithTheRestLast() {
    assertThat(SplitJob.sizes(10, 4)).containsExactly(4, 4, 2);
    assertThat(SplitJob.sizes(8, 4)).containsExactly(4, 4);
    assertThat(SplitJob.sizes(3, 4)).containsExactly(3);
  }

  @Test
  void shouldAnswerTheFirstPartsErrorWhenAnyPartFails() {
    InferenceReply ok = InferenceReply.newBuilder().setId("r#0").setServiceModel("demo").setModelVersion("1")
        .setOutputs(List.of(WorkerFixtures.floats("output", new float[][] {{1, 2}}))).build();
    InferenceReply failed = InferenceReply.newBuilder().setId("r#1").setServiceModel("demo").setModelVersion("1")
        .setOutputs(List.of()).setError(new InferenceError(ErrorCode.DEADLINE_EXCEEDED, "late")).build();

    InferenceReply merged = SplitJob.merge("r", new InferenceReply[] {ok, failed});

    assertThat(merged.getId()).isEqualTo("r");
    assertThat(merged.getError().getCode()).isEqualTo(ErrorCode.DEADLINE_EXCEEDED);
  }

  static Map<String, Long> parse(String header) {
    Map<String, Long> out = new java.util.LinkedHashMap<>();
    for (String part : header.split(";")) {
      String[] kv = part.split("=");
      out.put(kv[0], Long.parseLong(kv[1]));
    }
    return out;
  }
}
