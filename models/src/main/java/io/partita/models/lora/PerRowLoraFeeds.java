package io.partita.models.lora;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The extra inputs of a {@link PerRowLora per-row model} for one batch: each pair's adapter
 * matrices stacked over the batch's distinct adapters, and the row index that names each row's
 * adapter. Pure: plain arrays, no ONNX Runtime.
 *
 * <p>Adapters of different ranks share a stack: each is padded with zero columns of A and zero
 * rows of B up to the largest rank, which adds exact zeros to the product, so a row's result is
 * the same as with its own adapter alone. A row without adapter (the base model), or an adapter
 * that does not set a pair, takes the pair's defaults, as the original graph would. The stacks are
 * at least rank 1 (a zero block when no row has an adapter), so no tensor has an empty dimension.
 * They are written into direct buffers in native order, which ONNX Runtime's Java API takes
 * without another copy.
 */
public final class PerRowLoraFeeds {

  /** One extra input: its name, row-major values (a direct buffer, position 0) and shape. */
  public record Stacked(String name, FloatBuffer data, long[] shape) {}

  /**
   * Where the stacks are written: a direct buffer in native order of at least {@code floats} values
   * for input {@code name}, its position 0 and limit {@code floats}. A caller that runs batches one
   * after another on one thread can hand back the same buffers each time (every value is written).
   */
  @FunctionalInterface
  public interface Buffers {
    FloatBuffer floats(String name, int floats);

    /** A new buffer every time. */
    Buffers FRESH = (name, floats) -> ByteBuffer.allocateDirect(floats * Float.BYTES).order(ByteOrder.nativeOrder()).asFloatBuffer();

    /** Buffers kept per input name and grown when too small: one instance per thread. */
    static Buffers reused() {
      Map<String, FloatBuffer> kept = new HashMap<>();
      return (name, floats) -> {
        FloatBuffer b = kept.get(name);
        if (b == null || b.capacity() < floats) {
          b = FRESH.floats(name, Math.max(floats, b == null ? 0 : b.capacity() * 2));
          kept.put(name, b);
        }
        b.clear().limit(floats);
        return b;
      };
    }
  }

  private PerRowLoraFeeds() {}

  /**
   * The stacked inputs of every pair, for a batch whose distinct adapters are {@code adapters}
   * (row index value {@code j} selects {@code adapters.get(j)}; a null entry is the base model).
   *
   * @throws IllegalArgumentException when an adapter's matrices do not fit a pair ([d, r] and [r, k])
   */
  public static List<Stacked> stacks(PerRowLora.Rewritten model, List<LoraAdapter> adapters) {
    return stacks(model, adapters, Buffers.FRESH);
  }

  /** As {@link #stacks(PerRowLora.Rewritten, List)}, written into {@code buffers}. */
  public static List<Stacked> stacks(PerRowLora.Rewritten model, List<LoraAdapter> adapters, Buffers buffers) {
    if (adapters.isEmpty()) {
      throw new IllegalArgumentException("a batch needs at least one adapter entry (null for the base model)");
    }
    List<Stacked> out = new ArrayList<>(2 * model.pairs().size());
    int m = adapters.size();
    for (PerRowLora.Pair p : model.pairs()) {
      int d = Math.toIntExact(p.in());
      int k = Math.toIntExact(p.out());
      LoraTensor[] as = new LoraTensor[m];
      LoraTensor[] bs = new LoraTensor[m];
      int[] ranks = new int[m];
      int rank = 1;
      for (int j = 0; j < m; j++) {
        LoraAdapter adapter = adapters.get(j);
        LoraTensor a = adapter != null && adapter.parameters().containsKey(p.a()) ? adapter.parameter(p.a()) : p.aDefault();
        LoraTensor b = adapter != null && adapter.parameters().containsKey(p.b()) ? adapter.parameter(p.b()) : p.bDefault();
        long[] sa = a.shape();
        long[] sb = b.shape();
        if (sa.length != 2 || sb.length != 2 || sa[0] != d || sb[1] != k || sa[1] != sb[0]) {
          throw new IllegalArgumentException("adapter " + j + " of the batch gives '" + p.a() + "' " + Arrays.toString(sa)
              + " and '" + p.b() + "' " + Arrays.toString(sb) + "; the model needs [" + d + ", r] and [r, " + k + "]");
        }
        ranks[j] = Math.toIntExact(sa[1]);
        rank = Math.max(rank, ranks[j]);
        as[j] = a;
        bs[j] = b;
      }
      FloatBuffer aStack = buffers.floats(p.aStack(), m * d * rank);
      FloatBuffer bStack = buffers.floats(p.bStack(), m * rank * k);
      for (int j = 0; j < m; j++) {
        int r = ranks[j];
        if (r == rank) {
          as[j].copyTo(aStack, 0, d * r);
        } else {
          for (int i = 0; i < d; i++) {
            as[j].copyTo(aStack, i * r, r);
            zeros(aStack, rank - r);
          }
        }
        // B's rows are contiguous: its r rows, then rank - r zero rows.
        bs[j].copyTo(bStack, 0, r * k);
        zeros(bStack, (rank - r) * k);
      }
      aStack.rewind();
      bStack.rewind();
      out.add(new Stacked(p.aStack(), aStack, new long[] {m, d, rank}));
      out.add(new Stacked(p.bStack(), bStack, new long[] {m, rank, k}));
    }
    return out;
  }

  private static void zeros(FloatBuffer b, int count) {
    for (int i = 0; i < count; i++) {
      b.put(0f);
    }
  }

  /**
   * The row index of one input: request {@code i} contributes {@code rows[i]} leading rows, all
   * with adapter {@code adapterOf[i]}.
   */
  public static long[] rowIndex(int[] rows, int[] adapterOf) {
    if (rows.length != adapterOf.length) {
      throw new IllegalArgumentException("rows has " + rows.length + " requests but adapterOf has " + adapterOf.length);
    }
    int total = 0;
    for (int r : rows) {
      total += r;
    }
    long[] index = new long[total];
    int at = 0;
    for (int i = 0; i < rows.length; i++) {
      Arrays.fill(index, at, at + rows[i], adapterOf[i]);
      at += rows[i];
    }
    return index;
  }
}
