package io.partita.common.packing;

import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.util.List;

/**
 * How the rows of one model may be packed into one request: the rows of a batch job
 * ({@code RowPacker}) and concurrent online calls ({@link CallPacker}) alike.
 *
 * <p>A model can take packed rows only when every input and every output is a tensor whose first
 * dimension is dynamic (-1): the rows are concatenated along it, and every output must come back
 * with one leading row per input row so that it can be cut back. A model with a fixed first
 * dimension (or an output without one) gets {@link #maxRows} 1: every row is sent alone. Without a
 * signature ({@link #declared}) the caller's word stands.
 *
 * @param signature the model's inputs and outputs (all versions of a model share one)
 * @param maxRows the most rows one packed request carries ({@code gateway.jobs.pack.rows} for jobs,
 *     {@code gateway.coalesce.max.rows} for online calls); 1 = no packing
 * @param maxBytes the most tensor bytes one packed request may carry, inputs or expected outputs,
 *     whichever is larger (from {@code gateway.max.body.bytes}, the producer's {@code max.request.size}
 *     and the reply topic's {@code max.message.bytes})
 * @param seenOutputBytesPerRow output bytes per row a reply of this job showed (0: none seen yet);
 *     counted where the signature leaves an output dimension open ({@link #seenOutput})
 */
public record PackRule(ModelSignature signature, int maxRows, long maxBytes, long seenOutputBytesPerRow) {
  public PackRule(ModelSignature signature, int maxRows, long maxBytes) {
    this(signature, maxRows, maxBytes, 0);
  }

  public PackRule {
    if (maxRows < 1) {
      throw new IllegalArgumentException("maxRows must be at least 1, got " + maxRows);
    }
    if (maxBytes < 1) {
      throw new IllegalArgumentException("maxBytes must be at least 1, got " + maxBytes);
    }
    if (signature != null && !batchable(signature)) {
      maxRows = 1;
    }
  }

  /**
   * This rule, counting at least {@code bytesPerRow} of output per row: what a reply of the job
   * showed. A model whose outputs have an open dimension past the first (PaddleOCR's sequence
   * length) gives no expected size in its signature; without this, packs of rows whose replies are
   * each near the record limit would all be refused and sent again row by row.
   */
  public PackRule seenOutput(long bytesPerRow) {
    return bytesPerRow <= seenOutputBytesPerRow ? this : new PackRule(signature, maxRows, maxBytes, bytesPerRow);
  }

  /**
   * A rule for a model whose signature the packer does not know: the caller vouches that every
   * input and output has a dynamic first dimension (a client told so by its user). Output bytes per
   * row are then known only from what replies showed ({@link #seenOutput}); a pack the worker
   * refuses is the owner's to send again row by row.
   */
  public static PackRule declared(int maxRows, long maxBytes) {
    return new PackRule(null, maxRows, maxBytes);
  }

  /**
   * The most tensor bytes one packed request may carry within the given record limits (the
   * producer's {@code max.request.size}, the reply topic's {@code max.message.bytes}, a body
   * limit): half of the smallest, leaving room for the record's own fields and for a reply larger
   * than its request. The gateway and {@code PartitaClient} both bound their packs by it.
   */
  public static long bytesWithin(long... recordLimits) {
    long smallest = Long.MAX_VALUE;
    for (long limit : recordLimits) {
      smallest = Math.min(smallest, limit);
    }
    return Math.max(1, smallest / 2);
  }

  /** A rule that sends every row alone. */
  public static PackRule alone() {
    return new PackRule(null, 1, Long.MAX_VALUE);
  }

  /** Whether rows may be packed at all. */
  public boolean packs() {
    return maxRows > 1;
  }

  /** Whether every input and output of the model has a dynamic first dimension. */
  public static boolean batchable(ModelSignature signature) {
    return !signature.inputs().isEmpty() && !signature.outputs().isEmpty()
        && leadingDynamic(signature.inputs()) && leadingDynamic(signature.outputs());
  }

  private static boolean leadingDynamic(List<TensorSpec> specs) {
    return specs.stream().allMatch(s -> !s.shape().isEmpty() && s.shape().get(0) == -1 && s.type().byteSize() > 0);
  }

  /**
   * Bytes of output one row is expected to produce, for the outputs asked for (all when none are
   * named), where the signature fixes every other dimension; 0 for an output it does not (the
   * reply is then bounded by the worker: a reply over its limit is an error, and the rows are
   * sent again one by one); at least what a reply of the job showed ({@link #seenOutput}).
   */
  public long outputBytesPerRow(List<String> wanted) {
    if (signature == null) {
      return 0;
    }
    long bytes = 0;
    for (TensorSpec out : signature.outputs()) {
      if (!wanted.isEmpty() && !wanted.contains(out.name())) {
        continue;
      }
      long elements = 1;
      for (int i = 1; i < out.shape().size() && elements > 0; i++) {
        long d = out.shape().get(i);
        elements = d < 0 ? 0 : elements * d;
      }
      bytes += elements * out.type().byteSize();
    }
    return Math.max(bytes, seenOutputBytesPerRow);
  }
}
