package io.partita.worker.batch;

import java.util.Objects;

/**
 * What requests must share to run in one batch: the weights (one service model, hence one weight
 * file; or, on a slot whose session runs the per-row LoRA form, any service model of the base
 * model), the model version, and the layout of their tensors (input names, datatypes and every
 * dimension but the leading one, and the outputs asked for). Requests whose keys differ never share
 * a batch.
 *
 * @param weights which weights the batch runs with: see {@link #oneWeightFile} and {@link #acrossWeightFiles}
 * @param version the model version that runs the batch
 * @param layout everything else the requests must agree on, as one comparable string
 */
public record BatchKey(String weights, String version, String layout) {
  public BatchKey {
    Objects.requireNonNull(weights, "weights");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(layout, "layout");
  }

  /** Requests of one service model only: its weight file is the one activated for the batch. */
  public static BatchKey oneWeightFile(String serviceModel, String version, String layout) {
    return new BatchKey("service-model:" + serviceModel, version, layout);
  }

  /** Requests of every service model of a base model: each row runs with its own weight file. */
  public static BatchKey acrossWeightFiles(String baseModel, String version, String layout) {
    return new BatchKey("model:" + baseModel, version, layout);
  }
}
