package io.partita.profiler.measure;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The model version being measured and where its ONNX graph comes from: a file (external data
 * files beside it are found by ONNX Runtime) or bytes in memory (the reference model).
 */
public record ModelRef(String model, String version, Path file, byte[] bytes) {

  public ModelRef {
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(version, "version");
    if ((file == null) == (bytes == null)) {
      throw new IllegalArgumentException("exactly one of file and bytes must be given");
    }
  }

  public static ModelRef ofFile(String model, String version, Path file) {
    return new ModelRef(model, version, file, null);
  }

  public static ModelRef ofBytes(String model, String version, byte[] bytes) {
    return new ModelRef(model, version, null, bytes);
  }

  @Override
  public String toString() {
    return model + "/" + version + (file != null ? " (" + file + ")" : " (in memory)");
  }
}
