package io.partita.models.lora;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A LoRA adapter: parameter name to float tensor. Each name must match a graph input of the base
 * model that has a default initializer; ONNX Runtime binds the tensor to that input while the adapter
 * is active. The map is immutable and sorted by name, so writing the same adapter twice gives the
 * same bytes.
 *
 * @param parameters parameter name to tensor; at least one
 * @param adapterVersion free-form version stamped into the file ({@code adapter_version})
 * @param modelVersion the base model version the adapter was made for ({@code model_version});
 *     ONNX Runtime stores but does not check it
 */
public record LoraAdapter(Map<String, LoraTensor> parameters, int adapterVersion, int modelVersion) {

  public LoraAdapter {
    Objects.requireNonNull(parameters, "parameters");
    if (parameters.isEmpty()) {
      throw new IllegalArgumentException("a LoRA adapter needs at least one parameter");
    }
    TreeMap<String, LoraTensor> sorted = new TreeMap<>();
    parameters.forEach(
        (name, tensor) -> {
          if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("LoRA parameter names must not be empty");
          }
          sorted.put(name, Objects.requireNonNull(tensor, "tensor for " + name));
        });
    parameters = Collections.unmodifiableMap(sorted);
  }

  /** An adapter with version stamps 1 / 1. */
  public static LoraAdapter of(Map<String, LoraTensor> parameters) {
    return new LoraAdapter(parameters, 1, 1);
  }

  /** The tensor for {@code name}. */
  public LoraTensor parameter(String name) {
    LoraTensor t = parameters.get(name);
    if (t == null) {
      throw new IllegalArgumentException(
          "adapter has no parameter '" + name + "'; it has " + parameters.keySet());
    }
    return t;
  }
}
