package io.partita.profiler.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Finds a model file in a directory laid out as {@code <repo>/<model>/<version>/model.onnx}, the
 * stand-in until the models module offers a catalog. Versions compare numerically when both are
 * whole numbers ("10" after "9"), else as text.
 */
final class ModelRepository {

  private ModelRepository() {}

  record Located(String version, Path file) {}

  static Located locate(Path repo, String model, String version) throws UsageException {
    if (!Files.isDirectory(repo)) {
      throw new UsageException("--model-repo: " + repo + " is not a directory");
    }
    Path modelDir = repo.resolve(model).normalize();
    if (!modelDir.startsWith(repo.normalize()) || !Files.isDirectory(modelDir)) {
      throw new UsageException("--model: no model '" + model + "' in " + repo + " (expected a directory " + modelDir + ")");
    }
    if (version != null) {
      Path file = modelDir.resolve(version).resolve("model.onnx").normalize();
      if (!file.startsWith(modelDir) || !Files.isRegularFile(file)) {
        throw new UsageException("--version: no version '" + version + "' of " + model + " (expected " + file + ")");
      }
      return new Located(version, file);
    }
    try (Stream<Path> dirs = Files.list(modelDir)) {
      Optional<Path> highest = dirs
          .filter(d -> Files.isRegularFile(d.resolve("model.onnx")))
          .max(Comparator.comparing(d -> d.getFileName().toString(), ModelRepository::compareVersions));
      Path dir = highest.orElseThrow(() -> new UsageException(
          "--model: " + modelDir + " has no version directory holding model.onnx; add one or give --version"));
      return new Located(dir.getFileName().toString(), dir.resolve("model.onnx"));
    } catch (IOException e) {
      throw new UsageException("--model-repo: cannot list " + modelDir + ": " + e.getMessage());
    }
  }

  static int compareVersions(String a, String b) {
    boolean aNumeric = a.matches("\\d{1,18}");
    boolean bNumeric = b.matches("\\d{1,18}");
    if (aNumeric && bNumeric) {
      return Long.compare(Long.parseLong(a), Long.parseLong(b));
    }
    if (aNumeric != bNumeric) {
      return aNumeric ? -1 : 1;
    }
    return a.compareTo(b);
  }
}
