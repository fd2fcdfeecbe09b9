package io.partita.worker.batch;

import java.util.Objects;

/**
 * What requests must share to run in one batch: the service model (hence one weight file), the
 * model version, and the layout of their tensors (input names, datatypes and every dimension but
 * the leading one, and the outputs asked for). Requests whose keys differ never share a batch.
 *
 * @param serviceModel the service model; its weight file is the one activated for the batch
 * @param version the model version that runs the batch
 * @param layout everything else the requests must agree on, as one comparable string
 */
public record BatchKey(String serviceModel, String version, String layout) {
  public BatchKey {
    Objects.requireNonNull(serviceModel, "serviceModel");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(layout, "layout");
  }
}
