package io.partita.worker.serving;

import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.models.repo.TensorSpec;
import io.partita.models.repo.VersionEntry;
import io.partita.models.tensor.TensorValidator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks a request against the signature of the version that will run it, and works out how it
 * can be batched. No ONNX Runtime, no Kafka.
 */
public final class RequestCheck {
  private RequestCheck() {}

  /** Why the request does not fit the version (a BAD_INPUT message naming the field), if it does not. */
  public static Optional<String> problem(VersionEntry version, InferenceRequest request) {
    Map<String, TensorSpec> specs = new LinkedHashMap<>();
    version.signature().inputs().forEach(s -> specs.put(s.name(), s));
    String problem = TensorValidator.check(specs, request.getInputs().stream()
        .map(t -> new TensorValidator.Sent(t.getName(), t.getDatatype(), t.getShape(), t.getData().remaining()))
        .toList());
    if (problem != null) {
      return Optional.of(problem);
    }
    for (String out : new TreeSet<>(request.getOutputs())) {
      if (version.signature().output(out).isEmpty()) {
        return Optional.of("output '" + out + "': unknown output; the model gives "
            + version.signature().outputs().stream().map(TensorSpec::name).toList());
      }
    }
    return Optional.empty();
  }

  /**
   * How a checked request batches.
   *
   * @param rows its leading dimension, or 1 when it cannot be batched
   * @param layout what another request must match to share its batch; null when it must run alone
   */
  public record Batching(int rows, String layout) {}

  /**
   * A request can share a batch when every input of the model has a dynamic leading dimension and
   * the request's inputs all have the same leading size; the layout then lists, in name order,
   * each input's datatype and remaining dimensions, and the outputs asked for.
   */
  public static Batching batching(VersionEntry version, InferenceRequest request) {
    if (!batchable(version) || request.getInputs().isEmpty()) {
      return new Batching(1, null);
    }
    long rows = -1;
    Map<String, String> parts = new TreeMap<>();
    for (Tensor t : request.getInputs()) {
      List<Long> shape = t.getShape();
      if (shape.isEmpty()) {
        return new Batching(1, null);
      }
      if (rows >= 0 && shape.get(0) != rows) {
        return new Batching(1, null);
      }
      rows = shape.get(0);
      parts.put(t.getName(), t.getDatatype() + shape.subList(1, shape.size()));
    }
    if (rows < 1 || rows > Integer.MAX_VALUE) {
      return new Batching(1, null);
    }
    return new Batching((int) rows, parts + "->" + new TreeSet<>(request.getOutputs()));
  }

  /** Whether the version's inputs and outputs all have a dynamic leading dimension (the batch). */
  public static boolean batchable(VersionEntry version) {
    return dynamicLead(version.signature().inputs()) && dynamicLead(version.signature().outputs());
  }

  private static boolean dynamicLead(List<TensorSpec> specs) {
    for (TensorSpec s : specs) {
      if (s.shape().isEmpty() || s.shape().get(0) != -1L) {
        return false;
      }
    }
    return !specs.isEmpty();
  }
}
