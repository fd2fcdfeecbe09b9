package io.partita.models.repo;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * One version of a model found on disk, with what its manifest says (or the defaults: fp32 on CPU).
 *
 * @param model the model name (its directory)
 * @param version the version id (its directory)
 * @param modelFile absolute path of {@code model.onnx}
 * @param relativePath {@code <model>/<version>/model.onnx}, relative to the repository root
 * @param sha256 sha256 of {@code model.onnx}, computed at scan time
 * @param precision weight precision
 * @param providers execution providers it needs
 * @param accuracy optional accuracy score
 * @param memoryBytes optional declared memory per instance
 * @param signature inputs and outputs as ONNX Runtime reports them
 */
public record VersionEntry(
    String model,
    String version,
    Path modelFile,
    String relativePath,
    String sha256,
    Precision precision,
    List<String> providers,
    OptionalDouble accuracy,
    OptionalLong memoryBytes,
    ModelSignature signature) {

  public VersionEntry {
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(modelFile, "modelFile");
    Objects.requireNonNull(sha256, "sha256");
    Objects.requireNonNull(precision, "precision");
    providers = List.copyOf(providers);
    Objects.requireNonNull(signature, "signature");
  }
}
