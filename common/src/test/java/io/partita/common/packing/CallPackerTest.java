package io.partita.common.packing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.Tensor;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CallPackerTest {
  private static final ModelSignature DYNAMIC = new ModelSignature(
      List.of(TensorSpec.of("x", ElementType.FLOAT, -1, -1)), List.of(TensorSpec.of("y", ElementType.FLOAT, -1, 2)));
  private static final ModelSignature FIXED_FIRST = new ModelSignature(
      List.of(TensorSpec.of("x", ElementType.FLOAT, 1, 3)), List.of(TensorSpec.of("y", ElementType.FLOAT, 1, 2)));
  private static final PackRule RULE = new PackRule(DYNAMIC, 64, 1 << 20);

  private final CallPacker<String> packer = new CallPacker<>();

  @Test
  void shouldSendACallAloneAtOnceWhenNothingOfItsKindIsInFlight() {
    CallPacker.Key key = key(null, input(1, 3, 0), List.of());
    CallPacker.Offer<String> offer = packer.offer(key, call("a", input(1, 3, 0), 100), RULE);
    assertThat(offer.opened()).isEqualTo(-1);
    assertThat(offer.send()).hasSize(1);
    assertThat(offer.send().get(0).single()).isTrue();
    assertThat(packer.inFlight(key)).isEqualTo(1);
    assertThat(packer.held()).isZero();
  }

  @Test
  void shouldHoldCallsWhileTheirKindIsInFlightAndHandThemOutWhenItIsAnswered() {
    CallPacker.Key key = key(null, input(1, 3, 0), List.of());
    packer.offer(key, call("first", input(1, 3, 0), 100), RULE);
    CallPacker.Offer<String> second = packer.offer(key, call("second", input(1, 3, 1), 100), RULE);
    CallPacker.Offer<String> third = packer.offer(key, call("third", input(1, 3, 2), 100), RULE);
    assertThat(second.send()).isEmpty();
    assertThat(second.opened()).isPositive();
    assertThat(third.opened()).isEqualTo(-1); // joined the pack the second call opened
    assertThat(packer.held()).isEqualTo(2);

    CallPacker.Pack<String> next = packer.answered(key);
    assertThat(next.calls().stream().map(CallPacker.Call::caller).toList()).containsExactly("second", "third");
    assertThat(packer.inFlight(key)).isEqualTo(1);
    assertThat(packer.windowEnded(key, second.opened())).as("a pack already handed out has no window left").isNull();
    assertThat(packer.answered(key)).isNull();
    assertThat(packer.inFlight(key)).isZero();
  }

  @Test
  void shouldSendAloneUpToItsDepthOfRequestsInFlightAndHandOutThePackWhenOneIsAnswered() {
    CallPacker<String> deep = new CallPacker<>(2);
    CallPacker.Key key = key(null, input(1, 3, 0), List.of());
    assertThat(deep.offer(key, call("first", input(1, 3, 0), 100), RULE).send()).hasSize(1);
    assertThat(deep.offer(key, call("second", input(1, 3, 1), 100), RULE).send()).as("one in flight, depth 2").hasSize(1);
    CallPacker.Offer<String> third = deep.offer(key, call("third", input(1, 3, 2), 100), RULE);
    deep.offer(key, call("fourth", input(1, 3, 3), 100), RULE);
    assertThat(third.send()).as("two in flight: the third waits for company").isEmpty();
    assertThat(deep.held()).isEqualTo(2);

    CallPacker.Pack<String> next = deep.answered(key);
    assertThat(next.calls()).extracting(CallPacker.Call::caller).containsExactly("third", "fourth");
    assertThat(deep.inFlight(key)).isEqualTo(2);
    assertThat(deep.answered(key)).as("nothing held").isNull();
    assertThat(deep.offer(key, call("fifth", input(1, 3, 4), 100), RULE).send()).as("one in flight again").hasSize(1);
    assertThat(deep.inFlight(key)).isEqualTo(2);
  }

  @Test
  void shouldRefuseADepthBelowOne() {
    assertThatThrownBy(() -> new CallPacker<String>(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1, got 0");
  }

  @Test
  void shouldHandOutAnOpenPackWhenItsWindowEnds() {
    CallPacker.Key key = key(null, input(1, 3, 0), List.of());
    packer.offer(key, call("first", input(1, 3, 0), 100), RULE);
    CallPacker.Offer<String> held = packer.offer(key, call("second", input(1, 3, 1), 100), RULE);
    assertThat(packer.windowEnded(key, held.opened() + 1)).as("another pack's window").isNull();
    CallPacker.Pack<String> pack = packer.windowEnded(key, held.opened());
    assertThat(pack.calls()).extracting(CallPacker.Call::caller).containsExactly("second");
    assertThat(packer.inFlight(key)).isEqualTo(2);
  }

  @Test
  void shouldSplitRowsBackToTheRightCallersInOrderWithTheirShapes() {
    CallPacker.Key key = key(null, input(1, 3, 0), List.of());
    packer.offer(key, call("busy", input(1, 3, 9), 100), RULE);
    int[] rows = {1, 3, 2};
    for (int i = 0; i < rows.length; i++) {
      packer.offer(key, call("c" + i, input(rows[i], 3, 10 * (i + 1)), 100), RULE);
    }
    CallPacker.Pack<String> pack = packer.answered(key);
    assertThat(pack.rows()).isEqualTo(6);
    Tensor stacked = pack.inputs().get(0);
    assertThat(stacked.getShape()).containsExactly(6L, 3L);

    List<List<Tensor>> perCall = pack.split(List.of(rowSums(stacked)));
    assertThat(perCall).hasSize(3);
    for (int i = 0; i < rows.length; i++) {
      Tensor out = perCall.get(i).get(0);
      assertThat(out.getName()).isEqualTo("y");
      assertThat(out.getShape()).containsExactly((long) rows[i], 2L);
      float[] values = floats(out);
      for (int r = 0; r < rows[i]; r++) {
        // call i's row r holds 10*(i+1) + r + column: its sum is 3*(10*(i+1) + r) + 3, its first value 10*(i+1) + r
        float base = 10 * (i + 1) + r;
        assertThat(values[2 * r]).as("call %d row %d sum", i, r).isEqualTo(3 * base + 3);
        assertThat(values[2 * r + 1]).as("call %d row %d first", i, r).isEqualTo(base);
      }
    }
  }

  @Test
  void shouldNeverExceedMaxRowsOrMaxBytesAndCarryEveryCallOnce() {
    Random random = new Random(7);
    for (int round = 0; round < 200; round++) {
      int maxRows = 2 + random.nextInt(12); // 1 row would mean no packing at all
      long maxBytes = 12L * (1 + random.nextInt(40)); // 12 bytes a row of width 3
      PackRule rule = new PackRule(DYNAMIC, maxRows, maxBytes);
      CallPacker<Integer> p = new CallPacker<>();
      CallPacker.Key key = CallPacker.key("m", null, input(1, 3, 0), List.of(), rule);
      List<CallPacker.Pack<Integer>> sent = new ArrayList<>();
      Map<Long, Boolean> windows = new HashMap<>();
      int calls = 50 + random.nextInt(50);
      for (int i = 0; i < calls; i++) {
        List<Tensor> in = input(1 + random.nextInt(4), 3, i);
        CallPacker.Offer<Integer> offer = p.offer(key, CallPacker.call(i, in, List.of(), rule, 100), rule);
        sent.addAll(offer.send());
        if (offer.opened() >= 0) {
          windows.put(offer.opened(), true);
        }
        int event = random.nextInt(4);
        if (event == 0 && p.inFlight(key) > 0) {
          CallPacker.Pack<Integer> next = p.answered(key);
          if (next != null) {
            sent.add(next);
          }
        } else if (event == 1 && !windows.isEmpty()) {
          long number = windows.keySet().iterator().next();
          windows.remove(number);
          CallPacker.Pack<Integer> next = p.windowEnded(key, number);
          if (next != null) {
            sent.add(next);
          }
        }
      }
      while (p.inFlight(key) > 0) {
        CallPacker.Pack<Integer> next = p.answered(key);
        if (next != null) {
          sent.add(next);
        }
      }
      assertThat(p.held()).isZero();
      Set<Integer> seen = new HashSet<>();
      for (CallPacker.Pack<Integer> pack : sent) {
        if (!pack.single()) {
          assertThat(pack.rows()).as("rows of a pack, max %d", maxRows).isLessThanOrEqualTo(maxRows);
          assertThat(pack.bytes()).as("bytes of a pack, max %d", maxBytes).isLessThanOrEqualTo(maxBytes);
        }
        pack.calls().forEach(c -> assertThat(seen.add(c.caller())).as("call %d sent twice", c.caller()).isTrue());
      }
      assertThat(seen).hasSize(calls);
    }
  }

  @Test
  void shouldCountExpectedOutputBytesAgainstMaxBytes() {
    ModelSignature wideOutput = new ModelSignature(
        List.of(TensorSpec.of("x", ElementType.FLOAT, -1, 3)), List.of(TensorSpec.of("y", ElementType.FLOAT, -1, 100)));
    PackRule rule = new PackRule(wideOutput, 64, 1000); // 400 output bytes a row: two rows fit, three do not
    CallPacker.Key key = CallPacker.key("m", null, input(1, 3, 0), List.of(), rule);
    packer.offer(key, CallPacker.call("busy", input(1, 3, 0), List.of(), rule, 100), rule);
    List<CallPacker.Pack<String>> sent = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      sent.addAll(packer.offer(key, CallPacker.call("c" + i, input(1, 3, i), List.of(), rule, 100), rule).send());
    }
    assertThat(sent).extracting(CallPacker.Pack::rows).containsExactly(2, 2);
  }

  @Test
  void shouldNeverShareAPackAcrossVersionsLayoutsOrOutputs() {
    CallPacker.Key base = key(null, input(1, 3, 0), List.of());
    List<CallPacker.Key> others = List.of(
        key("2", input(1, 3, 0), List.of()), // a pinned version
        key(null, input(1, 4, 0), List.of()), // another width
        key(null, List.of(new Tensor("x", "FP64", List.of(1L, 3L), ByteBuffer.allocate(24))), List.of()), // another datatype
        key(null, input(1, 3, 0), List.of("y")), // other outputs asked for
        CallPacker.key("other", null, input(1, 3, 0), List.of(), RULE)); // another service model
    assertThat(new HashSet<>(others)).hasSize(others.size()).doesNotContain(base);
    assertThat(key(null, input(5, 3, 9), List.of())).as("the first dimension is not part of the layout").isEqualTo(base);

    // Every key busy, then two calls of each: each key's open pack holds only its own calls.
    List<CallPacker.Key> all = new ArrayList<>(others);
    all.add(base);
    for (CallPacker.Key k : all) {
      packer.offer(k, call(k + "/busy", input(1, 3, 0), 100), RULE);
    }
    for (int round = 0; round < 2; round++) {
      for (CallPacker.Key k : all) {
        assertThat(packer.offer(k, call(k + "/" + round, input(1, 3, round), 100), RULE).send()).isEmpty();
      }
    }
    for (CallPacker.Key k : all) {
      CallPacker.Pack<String> pack = packer.answered(k);
      assertThat(pack.key()).isEqualTo(k);
      assertThat(pack.calls()).extracting(CallPacker.Call::caller).containsExactly(k + "/0", k + "/1");
    }
  }

  @Test
  void shouldNeverPackAModelWhoseFirstDimensionIsFixed() {
    PackRule fixed = new PackRule(FIXED_FIRST, 64, 1 << 20);
    assertThat(fixed.packs()).isFalse();
    assertThat(CallPacker.key("m", null, input(1, 3, 0), List.of(), fixed)).isNull();
  }

  @Test
  void shouldNotPackCallsWhoseInputsDisagreeOnTheirFirstDimension() {
    List<Tensor> ragged = List.of(input(2, 3, 0).get(0), new Tensor("z", "FP32", List.of(3L, 3L), ByteBuffer.allocate(36)));
    assertThat(CallPacker.key("m", null, ragged, List.of(), RULE)).isNull();
  }

  @Test
  void shouldDropOnlyTheExpiredCallAndKeepTheLatestDeadlineOfTheOthers() {
    CallPacker.Key key = key(null, input(1, 3, 0), List.of());
    packer.offer(key, call("busy", input(1, 3, 0), 1_000), RULE);
    packer.offer(key, call("early", input(1, 3, 10), 50), RULE);
    packer.offer(key, call("late", input(2, 3, 20), 900), RULE);
    packer.offer(key, call("middle", input(1, 3, 30), 400), RULE);
    CallPacker.Pack<String> pack = packer.answered(key);
    assertThat(pack.deadlineNanos()).isEqualTo(900);

    CallPacker.Pack<String> live = pack.live(100);
    assertThat(live.calls()).extracting(CallPacker.Call::caller).containsExactly("late", "middle");
    assertThat(live.deadlineNanos()).isEqualTo(900);
    assertThat(live.rows()).isEqualTo(3);
    List<List<Tensor>> perCall = live.split(List.of(rowSums(live.inputs().get(0))));
    assertThat(floats(perCall.get(0).get(0))).containsExactly(63, 20, 66, 21); // "late": its own two rows
    assertThat(floats(perCall.get(1).get(0))).containsExactly(93, 30); // "middle"
    assertThat(pack.live(900)).as("every deadline passed").isNull();
    assertThat(pack.live(10)).isSameAs(pack);
  }

  private static CallPacker.Key key(String version, List<Tensor> inputs, List<String> outputs) {
    return CallPacker.key("m", version, inputs, outputs, RULE);
  }

  private static CallPacker.Call<String> call(String caller, List<Tensor> inputs, long deadline) {
    return CallPacker.call(caller, inputs, List.of(), RULE, deadline);
  }

  /** Input "x" of {@code rows} rows and {@code width} columns: row r, column c holds {@code start + r + c}. */
  private static List<Tensor> input(int rows, int width, int start) {
    ByteBuffer data = ByteBuffer.allocate(rows * width * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (int r = 0; r < rows; r++) {
      for (int c = 0; c < width; c++) {
        data.putFloat(start + r + c);
      }
    }
    data.flip();
    return List.of(new Tensor("x", "FP32", List.of((long) rows, (long) width), data));
  }

  /** What a row-wise model gives: output "y" with, per row, the row's sum and its first value. */
  private static Tensor rowSums(Tensor x) {
    int rows = x.getShape().get(0).intValue();
    int width = x.getShape().get(1).intValue();
    float[] in = floats(x);
    ByteBuffer out = ByteBuffer.allocate(rows * 2 * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (int r = 0; r < rows; r++) {
      float sum = 0;
      for (int c = 0; c < width; c++) {
        sum += in[r * width + c];
      }
      out.putFloat(sum).putFloat(in[r * width]);
    }
    out.flip();
    return new Tensor("y", "FP32", List.of((long) rows, 2L), out);
  }

  private static float[] floats(Tensor t) {
    ByteBuffer data = t.getData().duplicate().order(ByteOrder.LITTLE_ENDIAN);
    float[] out = new float[data.remaining() / 4];
    for (int i = 0; i < out.length; i++) {
      out[i] = data.getFloat();
    }
    return out;
  }
}
