package io.partita.common.packing;

import io.partita.avro.Tensor;
import io.partita.models.repo.ElementType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The one place where requests are stacked along their first (batch) dimension and replies cut
 * back per part: batch job rows ({@code jobs.Pack}) and online calls ({@link CallPacker}) both use
 * it. Pure: no Kafka, no clock.
 */
public final class Rows {
  private Rows() {}

  /**
   * What parts must share to be stacked together, or null when this part cannot share: input names
   * (in name order), datatypes and every dimension after the first, and the set of outputs wanted.
   */
  public static String layout(List<Tensor> inputs, List<String> outputs) {
    if (inputs.isEmpty()) {
      return null;
    }
    Map<String, String> byName = new TreeMap<>();
    for (Tensor t : inputs) {
      if (t.getShape().isEmpty()) {
        return null;
      }
      String previous = byName.put(t.getName(), t.getDatatype() + t.getShape().subList(1, t.getShape().size()));
      if (previous != null) {
        return null; // the same name twice: nothing to stack it by
      }
    }
    Set<String> wanted = new TreeSet<>(outputs);
    if (wanted.size() != outputs.size()) {
      return null;
    }
    return byName + "->" + wanted;
  }

  /** The first dimension all the inputs share, or -1 when they disagree (or there is none). */
  public static int rows(List<Tensor> inputs) {
    Set<Long> leading = new HashSet<>();
    for (Tensor t : inputs) {
      if (t.getShape().isEmpty()) {
        return -1;
      }
      leading.add(t.getShape().get(0));
    }
    if (leading.size() != 1) {
      return -1;
    }
    long rows = leading.iterator().next();
    return rows < 1 || rows > Integer.MAX_VALUE ? -1 : (int) rows;
  }

  /** The tensor bytes of these inputs. */
  public static long bytes(List<Tensor> inputs) {
    return inputs.stream().mapToLong(t -> t.getData().remaining()).sum();
  }

  /**
   * Each input of the first part, with every part's rows of it concatenated in order: the leading
   * dimension becomes {@code totalRows}. One part is returned as it is.
   *
   * @param parts the inputs of each part, all of one {@link #layout}
   */
  public static List<Tensor> stack(List<List<Tensor>> parts, int totalRows) {
    if (parts.size() == 1) {
      return parts.get(0);
    }
    List<Tensor> stacked = new ArrayList<>();
    for (Tensor first : parts.get(0)) {
      List<Tensor> same = new ArrayList<>(parts.size());
      int bytes = 0;
      for (int i = 0; i < parts.size(); i++) {
        Tensor part = named(parts.get(i), first.getName());
        if (part == null) {
          throw new IllegalStateException("part " + i + " has no input '" + first.getName() + "'");
        }
        same.add(part);
        bytes = Math.addExact(bytes, part.getData().remaining());
      }
      ByteBuffer data = ByteBuffer.allocate(bytes);
      for (Tensor part : same) {
        data.put(part.getData().duplicate());
      }
      data.flip();
      List<Long> shape = new ArrayList<>(first.getShape());
      shape.set(0, (long) totalRows);
      stacked.add(Tensor.newBuilder().setName(first.getName()).setDatatype(first.getDatatype()).setShape(shape).setData(data).build());
    }
    return stacked;
  }

  private static Tensor named(List<Tensor> inputs, String name) {
    for (Tensor t : inputs) {
      if (t.getName().equals(name)) {
        return t;
      }
    }
    return null;
  }

  /**
   * Cuts a reply's outputs back per part, in part order: part {@code i} gets, of every output, the
   * {@code rows[i]} leading rows that follow those of the parts before it. One part gets the
   * outputs as they came.
   *
   * @throws IllegalArgumentException when an output does not have one leading row per input row
   *     (the model does not keep the batch), so the parts must be sent alone
   */
  public static List<List<Tensor>> split(List<Tensor> outputs, int[] rows) {
    if (rows.length == 1) {
      return List.of(outputs);
    }
    int total = 0;
    for (int r : rows) {
      total += r;
    }
    List<List<Tensor>> perPart = new ArrayList<>(rows.length);
    for (int i = 0; i < rows.length; i++) {
      perPart.add(new ArrayList<>(outputs.size()));
    }
    for (Tensor out : outputs) {
      List<Long> shape = out.getShape();
      ByteBuffer data = out.getData().duplicate();
      if (shape.isEmpty() || shape.get(0) != total || data.remaining() % total != 0) {
        throw new IllegalArgumentException("output '" + out.getName() + "' has shape " + shape + " and " + data.remaining()
            + " bytes; " + total + " packed rows need that many leading rows");
      }
      int rowBytes = data.remaining() / total;
      long perRowElements = 1;
      for (int d = 1; d < shape.size(); d++) {
        perRowElements *= shape.get(d);
      }
      ElementType type = ElementType.fromOipDatatype(out.getDatatype()).orElse(ElementType.OTHER);
      if (type.byteSize() > 0 && perRowElements * type.byteSize() != rowBytes) {
        throw new IllegalArgumentException("output '" + out.getName() + "' has shape " + shape + " but "
            + data.remaining() + " bytes of " + out.getDatatype());
      }
      int position = data.position();
      for (int i = 0; i < rows.length; i++) {
        ByteBuffer slice = ByteBuffer.allocate(rows[i] * rowBytes);
        ByteBuffer source = data.duplicate();
        source.position(position).limit(position + rows[i] * rowBytes);
        slice.put(source).flip();
        position += rows[i] * rowBytes;
        List<Long> partShape = new ArrayList<>(shape);
        partShape.set(0, (long) rows[i]);
        perPart.get(i).add(new Tensor(out.getName(), out.getDatatype(), partShape, slice)); // per row: no builder
      }
    }
    return perPart;
  }
}
