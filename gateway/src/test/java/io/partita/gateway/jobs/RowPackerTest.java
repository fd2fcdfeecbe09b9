package io.partita.gateway.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.JobItem;
import io.partita.avro.Tensor;
import io.partita.common.packing.PackRule;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RowPackerTest {
  private static final ModelSignature DYNAMIC = new ModelSignature(
      List.of(TensorSpec.of("x", ElementType.FLOAT, -1, 8)), List.of(TensorSpec.of("y", ElementType.FLOAT, -1, 4)));
  private static final ModelSignature FIXED_FIRST = new ModelSignature(
      List.of(TensorSpec.of("x", ElementType.FLOAT, 1, 8)), List.of(TensorSpec.of("y", ElementType.FLOAT, 1, 4)));
  private static final ModelSignature ANY_WIDTH = new ModelSignature(
      List.of(TensorSpec.of("x", ElementType.FLOAT, -1, -1)), List.of(TensorSpec.of("y", ElementType.FLOAT, -1, -1)));

  @Test
  void shouldSendEveryRowAloneWhenTheModelFixesItsFirstDimension() {
    PackRule rule = new PackRule(FIXED_FIRST, 64, 1 << 20);
    assertThat(rule.packs()).isFalse();
    List<Pack> packs = packAll(rule, rows(10, 8, 1));
    assertThat(packs).hasSize(10).allMatch(Pack::single);
    assertThat(packs.stream().map(Pack::firstIndex).toList()).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
  }

  @Test
  void shouldSendRowsAloneWhenAnOutputFixesItsFirstDimension() {
    ModelSignature sumOverBatch = new ModelSignature(
        List.of(TensorSpec.of("x", ElementType.FLOAT, -1, 8)), List.of(TensorSpec.of("total", ElementType.FLOAT, 4)));
    assertThat(new PackRule(sumOverBatch, 64, 1 << 20).packs()).isFalse();
  }

  @Test
  void shouldPackRowsOfADynamicFirstDimensionUpToThePackSizeInInputOrder() {
    List<Pack> packs = packAll(new PackRule(DYNAMIC, 4, 1 << 20), rows(10, 8, 1));
    assertThat(packs.stream().map(Pack::rows).toList()).containsExactly(4, 4, 2);
    assertThat(packs.get(1).members().stream().map(Pack.Member::index).toList()).containsExactly(4, 5, 6, 7);
    Tensor stacked = packs.get(0).inputs().get(0);
    assertThat(stacked.getShape()).containsExactly(4L, 8L);
    assertThat(stacked.getData().remaining()).isEqualTo(4 * 8 * 4);
  }

  @Test
  void shouldPackOnlyRowsWhoseOtherDimensionsAreEqual() {
    List<JobItem> items = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      items.add(item("x", 1, i % 3 == 0 ? 5 : 3, i)); // widths 5,3,3,5,3,3,...
    }
    List<Pack> packs = packAll(new PackRule(ANY_WIDTH, 64, 1 << 20), items);
    assertThat(packs).hasSize(2);
    for (Pack pack : packs) {
      long width = pack.members().get(0).item().getInputs().get(0).getShape().get(1);
      assertThat(pack.members()).allMatch(m -> m.item().getInputs().get(0).getShape().get(1) == width);
      assertThat(pack.inputs().get(0).getShape()).containsExactly((long) pack.rows(), width);
    }
    assertThat(packs.get(0).members().stream().map(Pack.Member::index).toList()).containsExactly(0, 3, 6, 9);
    assertEveryIndexOnce(packs, 12);
  }

  @Test
  void shouldNotPackRowsThatAskForDifferentOutputs() {
    JobItem all = item("x", 1, 8, 1);
    JobItem onlyY = JobItem.newBuilder(item("x", 1, 8, 2)).setOutputs(List.of("y")).build();
    List<Pack> packs = packAll(new PackRule(DYNAMIC, 64, 1 << 20), List.of(all, onlyY, all, onlyY));
    assertThat(packs).hasSize(2);
    assertThat(packs.get(0).members().stream().map(Pack.Member::index).toList()).containsExactly(0, 2);
    assertThat(packs.get(1).outputs()).containsExactly("y");
  }

  @Test
  void shouldSendAloneARowWhoseInputsDisagreeOnTheirFirstDimension() {
    ModelSignature twoInputs = new ModelSignature(
        List.of(TensorSpec.of("a", ElementType.FLOAT, -1, 2), TensorSpec.of("b", ElementType.FLOAT, -1, 2)),
        List.of(TensorSpec.of("y", ElementType.FLOAT, -1, 2)));
    JobItem odd = JobItem.newBuilder().setClientId(null).setError(null).setOutputs(List.of())
        .setInputs(List.of(tensor("a", 1, 2, 0), tensor("b", 2, 2, 0))).build();
    JobItem even = JobItem.newBuilder(odd).setInputs(List.of(tensor("a", 1, 2, 1), tensor("b", 1, 2, 1))).build();
    RowPacker packer = new RowPacker(new PackRule(twoInputs, 64, 1 << 20));
    assertThat(packer.add(0, odd)).singleElement().satisfies(p -> assertThat(p.single()).isTrue());
    assertThat(packer.add(1, even)).isEmpty();
    assertThat(packer.add(2, even)).isEmpty();
    List<Pack> rest = packer.flush();
    assertThat(rest).singleElement().satisfies(p -> assertThat(p.rows()).isEqualTo(2));
    assertThat(rest.get(0).inputs().stream().map(t -> t.getShape().get(0)).toList()).containsExactly(2L, 2L);
  }

  @Test
  void shouldCutPacksAtTheByteLimitCountingExpectedOutputs() {
    // 8 inputs of 4 bytes = 32 bytes a row; outputs 4 x 4 = 16: inputs rule. 100 bytes hold 3 rows.
    List<Pack> packs = packAll(new PackRule(DYNAMIC, 64, 100), rows(7, 8, 1));
    assertThat(packs.stream().map(Pack::rows).toList()).containsExactly(3, 3, 1);
    // outputs bigger than inputs: 1 input, 64 outputs a row (256 bytes)
    ModelSignature widening = new ModelSignature(
        List.of(TensorSpec.of("x", ElementType.FLOAT, -1, 1)), List.of(TensorSpec.of("y", ElementType.FLOAT, -1, 64)));
    assertThat(packAll(new PackRule(widening, 64, 600), rows(5, 1, 1)).stream().map(Pack::rows).toList()).containsExactly(2, 2, 1);
  }

  @Test
  void shouldCutPacksByTheOutputBytesARowWasSeenToGiveWhereTheSignatureLeavesADimensionOpen() {
    // y's second dimension is open (a sequence length): the signature expects nothing per row
    ModelSignature open = new ModelSignature(
        List.of(TensorSpec.of("x", ElementType.FLOAT, -1, 1)), List.of(TensorSpec.of("y", ElementType.FLOAT, -1, -1)));
    PackRule rule = new PackRule(open, 64, 600);
    assertThat(packAll(rule, rows(5, 1, 1)).stream().map(Pack::rows).toList()).containsExactly(5);
    // a reply showed 256 bytes of y per row: 600 bytes hold 2 rows
    PackRule seen = rule.seenOutput(256);
    assertThat(packAll(seen, rows(5, 1, 1)).stream().map(Pack::rows).toList()).containsExactly(2, 2, 1);
    // a smaller reply later never loosens it; a row bigger than a pack goes alone
    assertThat(seen.seenOutput(100)).isSameAs(seen);
    assertThat(packAll(rule.seenOutput(700), rows(3, 1, 1)).stream().map(Pack::rows).toList()).containsExactly(1, 1, 1);
  }

  @Test
  void shouldSendAloneARowBiggerThanAPack() {
    RowPacker packer = new RowPacker(new PackRule(DYNAMIC, 4, 1 << 20));
    assertThat(packer.add(0, item("x", 1, 8, 0))).isEmpty();
    List<Pack> big = packer.add(1, item("x", 6, 8, 1));
    assertThat(big).singleElement().satisfies(p -> {
      assertThat(p.single()).isTrue();
      assertThat(p.rows()).isEqualTo(6);
    });
    assertThat(packer.flush()).singleElement().satisfies(p -> assertThat(p.firstIndex()).isZero());
  }

  @Test
  void shouldSplitOutputsBackPerRowExactly() {
    // members of 1, 2 and 3 rows; the "model" doubles each input row's first four values and adds its row number
    List<JobItem> items = List.of(item("x", 1, 8, 10), item("x", 2, 8, 20), item("x", 3, 8, 30));
    List<Pack> packs = packAll(new PackRule(DYNAMIC, 64, 1 << 20), items);
    assertThat(packs).singleElement();
    Pack pack = packs.get(0);
    Tensor in = pack.inputs().get(0);
    float[] x = floats(in);
    int rows = pack.rows();
    assertThat(rows).isEqualTo(6);
    float[] y = new float[rows * 4];
    for (int r = 0; r < rows; r++) {
      for (int c = 0; c < 4; c++) {
        y[r * 4 + c] = 2 * x[r * 8 + c] + r;
      }
    }
    List<List<Tensor>> split = pack.split(List.of(tensor("y", List.of((long) rows, 4L), y)));
    assertThat(split).hasSize(3);
    int row = 0;
    for (int m = 0; m < 3; m++) {
      Tensor out = split.get(m).get(0);
      float[] mine = floats(items.get(m).getInputs().get(0));
      int memberRows = m + 1;
      assertThat(out.getShape()).containsExactly((long) memberRows, 4L);
      float[] got = floats(out);
      assertThat(got).hasSize(memberRows * 4);
      for (int r = 0; r < memberRows; r++, row++) {
        for (int c = 0; c < 4; c++) {
          assertThat(got[r * 4 + c]).isEqualTo(2 * mine[r * 8 + c] + row); // bit for bit: a slice, no arithmetic
        }
      }
    }
  }

  @Test
  void shouldRefuseToSplitOutputsThatDoNotKeepOneRowPerInputRow() {
    Pack pack = packAll(new PackRule(DYNAMIC, 64, 1 << 20), rows(3, 8, 1)).get(0);
    assertThatThrownBy(() -> pack.split(List.of(tensor("y", List.of(1L, 4L), new float[4]))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("3 packed rows");
    assertThatThrownBy(() -> pack.split(List.of(tensor("y", List.of(3L, 4L), new float[11]))))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldKeepASingleRowsOutputsAsTheyCame() {
    Pack alone = Pack.alone(7, item("x", 1, 8, 0));
    Tensor y = tensor("y", List.of(1L, 4L), new float[] {1, 2, 3, 4});
    assertThat(alone.split(List.of(y))).containsExactly(List.of(y));
    assertThat(alone.inputs()).isSameAs(alone.members().get(0).item().getInputs());
  }

  @Test
  void shouldGiveEveryRowExactlyOnePackWhateverTheMix() {
    Random random = new Random(7);
    List<JobItem> items = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      items.add(item("x", 1 + random.nextInt(3), 2 + random.nextInt(3), i));
    }
    for (int maxRows : new int[] {1, 5, 64}) {
      List<Pack> packs = packAll(new PackRule(ANY_WIDTH, maxRows, 512), items);
      assertEveryIndexOnce(packs, items.size());
      for (Pack p : packs) {
        assertThat(p.single() || p.rows() <= maxRows).isTrue();
        assertThat(p.members().stream().mapToInt(Pack.Member::index)).isSorted();
      }
    }
  }

  private static void assertEveryIndexOnce(List<Pack> packs, int total) {
    BitSet seen = new BitSet();
    int count = 0;
    for (Pack p : packs) {
      for (Pack.Member m : p.members()) {
        assertThat(seen.get(m.index())).as("row %d in two packs", m.index()).isFalse();
        seen.set(m.index());
        count++;
      }
    }
    assertThat(count).isEqualTo(total);
    assertThat(seen.cardinality()).isEqualTo(total);
  }

  private static List<Pack> packAll(PackRule rule, List<JobItem> items) {
    RowPacker packer = new RowPacker(rule);
    List<Pack> packs = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      packs.addAll(packer.add(i, items.get(i)));
    }
    packs.addAll(packer.flush());
    return packs;
  }

  private static List<JobItem> rows(int n, int width, int rows) {
    List<JobItem> items = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      items.add(item("x", rows, width, i));
    }
    return items;
  }

  private static JobItem item(String name, int rows, int width, int seed) {
    return JobItem.newBuilder().setClientId("c" + seed).setError(null).setOutputs(List.of())
        .setInputs(List.of(tensor(name, rows, width, seed))).build();
  }

  private static Tensor tensor(String name, int rows, int width, int seed) {
    float[] v = new float[rows * width];
    for (int i = 0; i < v.length; i++) {
      v[i] = seed * 1000 + i + 0.25f;
    }
    return tensor(name, List.of((long) rows, (long) width), v);
  }

  private static Tensor tensor(String name, List<Long> shape, float[] v) {
    ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float f : v) {
      b.putFloat(f);
    }
    b.flip();
    return Tensor.newBuilder().setName(name).setDatatype("FP32").setShape(shape).setData(b).build();
  }

  private static float[] floats(Tensor t) {
    ByteBuffer b = t.getData().duplicate().order(ByteOrder.LITTLE_ENDIAN);
    float[] v = new float[b.remaining() / 4];
    for (int i = 0; i < v.length; i++) {
      v[i] = b.getFloat();
    }
    return v;
  }
}
