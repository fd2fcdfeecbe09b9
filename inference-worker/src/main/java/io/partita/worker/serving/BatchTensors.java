package io.partita.worker.serving;

import io.partita.avro.Tensor;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Stacks the inputs of several requests along the leading (batch) dimension and splits a batched
 * output back into one tensor per request (and, for a request cut into parts, the reverse: its
 * inputs split, its parts' outputs concatenated). Row-major layout makes both plain byte concatenation
 * and slicing. Pure: no ONNX Runtime.
 */
public final class BatchTensors {
  private BatchTensors() {}

  /** The shape of the stacked tensor: the parts' leading dimensions summed, the rest as the first part's. */
  public static long[] stackedShape(List<Tensor> parts) {
    List<Long> first = parts.get(0).getShape();
    long[] shape = new long[first.size()];
    for (int i = 1; i < shape.length; i++) {
      shape[i] = first.get(i);
    }
    for (Tensor t : parts) {
      shape[0] += t.getShape().get(0);
    }
    return shape;
  }

  /** The parts' data, in order, for one stacked tensor. */
  public static List<ByteBuffer> data(List<Tensor> parts) {
    List<ByteBuffer> out = new ArrayList<>(parts.size());
    for (Tensor t : parts) {
      out.add(t.getData().duplicate());
    }
    return out;
  }

  /** One tensor of the parts stacked along the leading dimension, in order (its own bytes). */
  public static Tensor concat(List<Tensor> parts) {
    if (parts.size() == 1) {
      return parts.get(0);
    }
    long[] shape = stackedShape(parts);
    int bytes = 0;
    for (Tensor t : parts) {
      bytes += t.getData().remaining();
    }
    ByteBuffer all = ByteBuffer.allocate(bytes);
    for (Tensor t : parts) {
      all.put(t.getData().duplicate());
    }
    all.flip();
    List<Long> boxed = new ArrayList<>(shape.length);
    for (long s : shape) {
      boxed.add(s);
    }
    return Tensor.newBuilder(parts.get(0)).setShape(boxed).setData(all).build();
  }

  /**
   * Splits a batched output into one tensor per request, in order, {@code rows[i]} leading rows
   * each. The slices share the output's bytes.
   *
   * @throws IllegalArgumentException when the output's leading dimension is not the sum of the rows
   *     (a model whose output does not follow the batch), so the caller runs the requests alone
   */
  public static List<Tensor> split(Tensor batched, int[] rows) {
    List<Long> shape = batched.getShape();
    long total = 0;
    for (int r : rows) {
      total += r;
    }
    if (shape.isEmpty() || shape.get(0) != total) {
      throw new IllegalArgumentException("output '" + batched.getName() + "' has shape " + shape
          + "; a batch of " + total + " rows needs that many leading rows");
    }
    ByteBuffer data = batched.getData().duplicate();
    int rowBytes = total == 0 ? 0 : Math.toIntExact(data.remaining() / total);
    List<Tensor> out = new ArrayList<>(rows.length);
    int position = data.position();
    for (int r : rows) {
      ByteBuffer slice = data.duplicate();
      slice.position(position).limit(position + r * rowBytes);
      position += r * rowBytes;
      List<Long> partShape = new ArrayList<>(shape);
      partShape.set(0, (long) r);
      out.add(Tensor.newBuilder(batched).setShape(partShape).setData(slice.slice()).build());
    }
    return out;
  }
}
