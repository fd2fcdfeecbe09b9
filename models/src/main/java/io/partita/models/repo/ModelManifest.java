package io.partita.models.repo;

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * The parsed content of {@code <repo>/<model>/model.yaml} (or {@code model.json}). Only the shape
 * of the content is checked here (see {@link ManifestReader}); whether versions and weight files
 * exist is checked by {@link ModelRepository#scan}.
 *
 * @param file where it was read from, for error messages
 * @param versions version id to what the manifest declares about it, in file order
 * @param serviceModels service model name to its weight file, in file order; empty means "serve
 *     the model under its directory name with no weight file"
 */
public record ModelManifest(
    Path file, Map<String, Version> versions, Map<String, ServiceModel> serviceModels) {

  public ModelManifest {
    versions = Collections.unmodifiableMap(new LinkedHashMap<>(versions));
    serviceModels = Collections.unmodifiableMap(new LinkedHashMap<>(serviceModels));
  }

  /**
   * What a manifest declares about one version.
   *
   * @param precision weight precision ({@code precision}, default fp32)
   * @param providers execution providers the version needs, ONNX Runtime names such as {@code CPU},
   *     {@code CUDA} ({@code providers}, default [CPU])
   * @param accuracy optional accuracy score ({@code accuracy})
   * @param memoryBytes optional declared memory per instance ({@code memoryBytes})
   * @param sha256 optional expected sha256 of {@code model.onnx} ({@code sha256})
   */
  public record Version(
      Precision precision,
      List<String> providers,
      OptionalDouble accuracy,
      OptionalLong memoryBytes,
      Optional<String> sha256) {

    public Version {
      providers = List.copyOf(providers);
    }

    /** What an undeclared version gets: fp32 on CPU, nothing else known. */
    public static Version defaults() {
      return new Version(
          Precision.FP32, List.of("CPU"), OptionalDouble.empty(), OptionalLong.empty(),
          Optional.empty());
    }
  }

  /**
   * One service model declared on the model.
   *
   * @param weightFile path of the weight file relative to the repository root, if any
   * @param sha256 its sha256 (required when there is a weight file)
   * @param instances instances wanted ({@code instances}, default 1): each goes to its own slot
   * @param requirements what it asks of the version a host runs ({@code objective},
   *     {@code latencyObjectiveMs}, {@code minAccuracy}, {@code memoryCapBytes}; default none)
   */
  public record ServiceModel(
      Optional<String> weightFile, Optional<String> sha256, int instances, ServiceRequirements requirements) {

    public ServiceModel {
      Objects.requireNonNull(requirements, "requirements");
    }

    public ServiceModel(Optional<String> weightFile, Optional<String> sha256, int instances) {
      this(weightFile, sha256, instances, ServiceRequirements.NONE);
    }

    public ServiceModel(Optional<String> weightFile, Optional<String> sha256) {
      this(weightFile, sha256, 1);
    }
  }
}
