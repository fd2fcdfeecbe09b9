package io.partita.common.coalescing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.common.packing.PackRule;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The coalescing mechanism against a wire the test answers by hand: what goes out, in which
 * request, and how each call ends. No Kafka: the packing rule's own cases are in CallPackerTest.
 */
class CallCoalescerTest {
  private static final ModelSignature DYNAMIC = new ModelSignature(
      List.of(TensorSpec.of("x", ElementType.FLOAT, -1, 2)), List.of(TensorSpec.of("y", ElementType.FLOAT, -1, 2)));
  private static final ModelSignature FIXED_FIRST = new ModelSignature(
      List.of(TensorSpec.of("x", ElementType.FLOAT, 1, 2)), List.of(TensorSpec.of("y", ElementType.FLOAT, 1, 2)));
  private static final PackRule RULE = new PackRule(DYNAMIC, 64, 1 << 20);
  private static final long LONG_WINDOW_US = 60_000_000;

  /** One request the coalescer handed to the wire. */
  private record Sent(InferenceRequest request, long timeoutMs, List<String> callers, int rows, CompletableFuture<InferenceReply> reply) {}

  /** How one call ended. */
  private record End(InferenceReply reply, Throwable failure) {}

  private final BlockingQueue<Sent> sent = new LinkedBlockingQueue<>();
  private final Map<String, CompletableFuture<End>> ends = new ConcurrentHashMap<>();
  private final AtomicInteger splits = new AtomicInteger();
  private final CallCoalescer.Wire<String> wire = new CallCoalescer.Wire<>() {
    @Override
    public CompletableFuture<InferenceReply> send(InferenceRequest request, long timeoutMs, List<String> callers, int rows) {
      CompletableFuture<InferenceReply> reply = new CompletableFuture<>();
      sent.add(new Sent(request, timeoutMs, List.copyOf(callers), rows, reply));
      return reply;
    }

    @Override
    public void finish(String caller, InferenceReply reply, Throwable failure) {
      if (!ends.computeIfAbsent(caller, c -> new CompletableFuture<>()).complete(new End(reply, failure))) {
        throw new AssertionError(caller + " ended twice");
      }
    }

    @Override
    public void splitting(String serviceModel, int calls, String why) {
      splits.incrementAndGet();
    }
  };
  private CallCoalescer<String> coalescer = new CallCoalescer<>(LONG_WINDOW_US, wire, "test-coalescer");

  @AfterEach
  void close() {
    coalescer.close();
  }

  @Test
  void shouldSendACallAloneAndUnchangedWhenNothingOfItsKindIsInFlight() throws Exception {
    InferenceRequest request = request("a", 1.0f);
    assertThat(coalescer.offer("a", request, RULE, 5_000)).isTrue();

    Sent first = next();
    assertThat(first.request()).isSameAs(request);
    assertThat(first.callers()).containsExactly("a");
    first.reply().complete(doubled(request));
    assertThat(end("a").reply().getId()).isEqualTo("a");
    assertThat(floats(end("a").reply().getOutputs().get(0))).containsExactly(2f, 2f);
    assertThat(coalescer.waiting()).isZero();
  }

  @Test
  void shouldSendUpToItsDepthAloneAndPackOnlyWhileThatManyAreInFlight() throws Exception {
    coalescer.close();
    coalescer = new CallCoalescer<>(LONG_WINDOW_US, 2, wire, "test-coalescer");
    coalescer.offer("a", request("a", 1f), RULE, 5_000);
    coalescer.offer("b", request("b", 2f), RULE, 5_000);
    Sent a = next();
    Sent b = next();
    assertThat(List.of(a.callers(), b.callers())).containsExactly(List.of("a"), List.of("b"));
    coalescer.offer("c", request("c", 3f), RULE, 5_000);
    coalescer.offer("d", request("d", 4f), RULE, 5_000);
    assertThat(sent).as("two in flight: held").isEmpty();

    b.reply().complete(doubled(b.request()));
    Sent pack = next();
    assertThat(pack.callers()).containsExactly("c", "d");
    pack.reply().complete(doubled(pack.request()));
    a.reply().complete(doubled(a.request()));
    for (String id : List.of("a", "b", "c", "d")) {
      assertThat(end(id).reply().getId()).isEqualTo(id);
    }
    assertThat(floats(end("d").reply().getOutputs().get(0))).containsExactly(8f, 8f);
    assertThat(coalescer.waiting()).isZero();
  }

  @Test
  void shouldPackCallsHeldWhileTheirKindIsInFlightAndAnswerEachWithItsOwnRows() throws Exception {
    coalescer.offer("a", request("a", 1f), RULE, 5_000);
    Sent alone = next();
    coalescer.offer("b", request("b", 10f, 11f), RULE, 5_000); // two rows
    coalescer.offer("c", request("c", 20f), RULE, 5_000);
    coalescer.offer("d", request("d", 30f), RULE, 5_000);
    assertThat(sent).as("held until the call in flight is answered").isEmpty();

    alone.reply().complete(doubled(alone.request()));
    Sent pack = next();
    assertThat(pack.callers()).containsExactly("b", "c", "d");
    assertThat(pack.rows()).isEqualTo(4);
    assertThat(pack.request().getId()).startsWith("pack-");
    assertThat(pack.request().getInputs().get(0).getShape()).containsExactly(4L, 2L);
    pack.reply().complete(doubled(pack.request()));

    assertThat(end("b").reply().getId()).isEqualTo("b");
    assertThat(end("b").reply().getOutputs().get(0).getShape()).containsExactly(2L, 2L);
    assertThat(floats(end("b").reply().getOutputs().get(0))).containsExactly(20f, 20f, 22f, 22f);
    assertThat(floats(end("c").reply().getOutputs().get(0))).containsExactly(40f, 40f);
    assertThat(end("d").reply().getId()).isEqualTo("d");
    assertThat(floats(end("d").reply().getOutputs().get(0))).containsExactly(60f, 60f);
    assertThat(coalescer.waiting()).isZero();
  }

  @Test
  void shouldSendAPackTheWorkerRefusedAgainOneCallPerRequestSoOnlyTheBadCallFails() throws Exception {
    coalescer.offer("a", request("a", 1f), RULE, 5_000);
    Sent alone = next();
    coalescer.offer("good", request("good", 5f), RULE, 5_000);
    coalescer.offer("bad", request("bad", -1f), RULE, 5_000);
    alone.reply().complete(doubled(alone.request()));
    Sent pack = next();
    pack.reply().complete(error(pack.request().getId(), ErrorCode.BAD_INPUT, "row 1 is negative"));

    Sent retryGood = next();
    Sent retryBad = next();
    assertThat(List.of(retryGood.callers(), retryBad.callers())).containsExactly(List.of("good"), List.of("bad"));
    assertThat(retryGood.request().getId()).isEqualTo("good");
    assertThat(splits).hasValue(1);
    retryGood.reply().complete(doubled(retryGood.request()));
    retryBad.reply().complete(error("bad", ErrorCode.BAD_INPUT, "row 0 is negative"));

    assertThat(floats(end("good").reply().getOutputs().get(0))).containsExactly(10f, 10f);
    assertThat(end("bad").reply().getError().getCode()).isEqualTo(ErrorCode.BAD_INPUT);
    assertThat(end("bad").reply().getId()).isEqualTo("bad");
  }

  @Test
  void shouldSendAPackWhoseOutputsCannotBeCutBackAgainOneCallPerRequest() throws Exception {
    coalescer.offer("a", request("a", 1f), RULE, 5_000);
    Sent alone = next();
    coalescer.offer("b", request("b", 1f), RULE, 5_000);
    coalescer.offer("c", request("c", 2f), RULE, 5_000);
    alone.reply().complete(doubled(alone.request()));
    Sent pack = next();
    pack.reply().complete(doubled(request(pack.request().getId(), 1f))); // one row back for two
    assertThat(List.of(next().callers(), next().callers())).containsExactly(List.of("b"), List.of("c"));
    assertThat(splits).hasValue(1);
  }

  @Test
  void shouldFailACallAtItsOwnDeadlineAndAnswerTheRestOfItsPack() throws Exception {
    coalescer.offer("a", request("a", 1f), RULE, 5_000);
    Sent alone = next();
    coalescer.offer("hurried", request("hurried", 1f), RULE, 50);
    coalescer.offer("patient", request("patient", 2f), RULE, 5_000);

    assertThat(end("hurried").failure()).isInstanceOf(TimeoutException.class);
    alone.reply().complete(doubled(alone.request()));
    Sent pack = next();
    assertThat(pack.callers()).as("a call that ended is not sent").containsExactly("patient");
    pack.reply().complete(doubled(pack.request()));
    assertThat(floats(end("patient").reply().getOutputs().get(0))).containsExactly(4f, 4f);
  }

  @Test
  void shouldSendAnOpenPackWhenItsWindowEndsThoughTheCallInFlightIsNotAnswered() throws Exception {
    coalescer.close();
    coalescer = new CallCoalescer<>(20_000, wire, "test-coalescer");
    coalescer.offer("a", request("a", 1f), RULE, 5_000);
    next();
    coalescer.offer("b", request("b", 1f), RULE, 5_000);
    coalescer.offer("c", request("c", 1f), RULE, 5_000);
    assertThat(next().callers()).containsExactly("b", "c");
  }

  @Test
  void shouldFailEveryCallOfAPackWithItsSendFailure() throws Exception {
    coalescer.offer("a", request("a", 1f), RULE, 5_000);
    Sent alone = next();
    coalescer.offer("b", request("b", 1f), RULE, 5_000);
    coalescer.offer("c", request("c", 1f), RULE, 5_000);
    alone.reply().complete(doubled(alone.request()));
    IllegalStateException down = new IllegalStateException("broker down");
    next().reply().completeExceptionally(down);
    assertThat(end("b").failure()).isSameAs(down);
    assertThat(end("c").failure()).isSameAs(down);
  }

  @Test
  void shouldNotTakeACallThatCannotShareARequest() {
    assertThat(coalescer.offer("fixed", request("fixed", 1f), new PackRule(FIXED_FIRST, 64, 1 << 20), 5_000)).isFalse();
    InferenceRequest withParameters = InferenceRequest.newBuilder(request("p", 1f)).setParameters(Map.of("temperature", "0")).build();
    assertThat(coalescer.offer("p", withParameters, RULE, 5_000)).isFalse();
    assertThat(sent).isEmpty();
    assertThat(coalescer.waiting()).isZero();
  }

  @Test
  void shouldRefuseASecondCallWithAnIdStillWaiting() throws Exception {
    coalescer.offer("a", request("same", 1f), RULE, 5_000);
    assertThatThrownBy(() -> coalescer.offer("b", request("same", 2f), RULE, 5_000))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("already in flight");
  }

  @Test
  void shouldEndEveryHeldCallWhenItCloses() throws Exception {
    coalescer.offer("a", request("a", 1f), RULE, 5_000);
    next();
    coalescer.offer("b", request("b", 1f), RULE, 5_000);
    coalescer.close();
    assertThat(end("a").failure()).isInstanceOf(CallCoalescer.Closed.class);
    assertThat(end("b").failure()).isInstanceOf(CallCoalescer.Closed.class);
  }

  private Sent next() throws InterruptedException {
    Sent s = sent.poll(5, TimeUnit.SECONDS);
    assertThat(s).as("a request sent within 5 s").isNotNull();
    return s;
  }

  private End end(String caller) throws Exception {
    return ends.computeIfAbsent(caller, c -> new CompletableFuture<>()).get(5, TimeUnit.SECONDS);
  }

  /** A call of demo shape [rows, 2], every value of row i being {@code rows[i]}. */
  private static InferenceRequest request(String id, float... rows) {
    ByteBuffer b = ByteBuffer.allocate(rows.length * 8).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : rows) {
      b.putFloat(v).putFloat(v);
    }
    b.flip();
    Tensor x = Tensor.newBuilder().setName("x").setDatatype("FP32").setShape(List.of((long) rows.length, 2L)).setData(b).build();
    return InferenceRequest.newBuilder().setId(id).setServiceModel("m").setVersion(null).setInputs(List.of(x)).build();
  }

  /** What a model doubling every value would answer. */
  private static InferenceReply doubled(InferenceRequest request) {
    Tensor x = request.getInputs().get(0);
    float[] in = floats(x);
    ByteBuffer b = ByteBuffer.allocate(in.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : in) {
      b.putFloat(2 * v);
    }
    b.flip();
    Tensor y = Tensor.newBuilder().setName("y").setDatatype("FP32").setShape(x.getShape()).setData(b).build();
    return InferenceReply.newBuilder().setId(request.getId()).setServiceModel("m").setModelVersion("1").setOutputs(List.of(y)).build();
  }

  private static InferenceReply error(String id, ErrorCode code, String message) {
    return InferenceReply.newBuilder().setId(id).setServiceModel("m").setModelVersion("1").setOutputs(List.of())
        .setError(InferenceError.newBuilder().setCode(code).setMessage(message).build()).build();
  }

  private static float[] floats(Tensor t) {
    ByteBuffer b = t.getData().duplicate().order(ByteOrder.LITTLE_ENDIAN);
    List<Float> out = new ArrayList<>();
    while (b.remaining() >= 4) {
      out.add(b.getFloat());
    }
    float[] f = new float[out.size()];
    for (int i = 0; i < f.length; i++) {
      f[i] = out.get(i);
    }
    return f;
  }
}
