package io.partita.launcher.cluster;

import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Open Inference Protocol v2 JSON infer bodies built from a model's signature: every input, its
 * dynamic dimensions filled in (the first with the batch size, others from {@code dims} or 1).
 * Floating-point inputs get random values in [-1, 1) from a seed, integer inputs 0 and booleans
 * {@code false}, which every model accepts as an index or a flag. The benchmark's bodies and
 * {@code partita cluster up}'s probe of each model come from here.
 */
public final class InferBodies {
  private InferBodies() {}

  /** The concrete shape of {@code input} for {@code batch} rows. */
  public static long[] shape(TensorSpec input, int batch, Map<Integer, Long> dims) {
    List<Long> spec = input.shape();
    long[] shape = new long[spec.size()];
    for (int d = 0; d < shape.length; d++) {
      long s = spec.get(d);
      shape[d] = d == 0 && s < 0 ? batch : s >= 0 ? s : dims.getOrDefault(d, 1L);
    }
    return shape;
  }

  public static long elements(long[] shape) {
    long n = 1;
    for (long s : shape) {
      n *= s;
    }
    return n;
  }

  /** {@code n} random floats in [-1, 1), the same for the same seed. */
  public static float[] randomFloats(long n, long seed) {
    float[] data = new float[Math.toIntExact(n)];
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = 0; i < data.length; i++) {
      data[i] = (float) random.nextDouble(-1, 1);
    }
    return data;
  }

  /** A JSON body for every input of {@code signature}; input {@code i} uses seed {@code seed + i}. */
  public static String json(ModelSignature signature, int batch, Map<Integer, Long> dims, long seed) {
    StringBuilder b = new StringBuilder("{\"inputs\":[");
    List<TensorSpec> inputs = signature.inputs();
    for (int i = 0; i < inputs.size(); i++) {
      b.append(i == 0 ? "" : ",");
      tensor(b, inputs.get(i), shape(inputs.get(i), batch, dims), seed + i);
    }
    return b.append("]}").toString();
  }

  private static void tensor(StringBuilder b, TensorSpec input, long[] shape, long seed) {
    ElementType type = input.type();
    if (type == ElementType.STRING || type == ElementType.OTHER) {
      throw new IllegalArgumentException("input " + input.name() + " has type " + type + ", which a JSON body cannot carry here");
    }
    b.append("{\"name\":\"").append(input.name()).append("\",\"datatype\":\"").append(type.oipDatatype()).append("\",\"shape\":[");
    for (int i = 0; i < shape.length; i++) {
      b.append(i == 0 ? "" : ",").append(shape[i]);
    }
    b.append("],\"data\":[");
    long n = elements(shape);
    boolean floating = type == ElementType.FLOAT || type == ElementType.FLOAT16 || type == ElementType.BFLOAT16
        || type == ElementType.DOUBLE;
    float[] data = floating ? randomFloats(n, seed) : null;
    for (int i = 0; i < n; i++) {
      b.append(i == 0 ? "" : ",");
      if (floating) {
        b.append(data[i]);
      } else {
        b.append(type == ElementType.BOOL ? "false" : "0");
      }
    }
    b.append("]}");
  }
}
