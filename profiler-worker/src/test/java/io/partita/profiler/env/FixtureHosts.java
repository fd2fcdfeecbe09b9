package io.partita.profiler.env;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Recorded host file trees under src/test/resources/hosts, and an nvidia-smi that replays nvidia-smi.csv. */
final class FixtureHosts {

  private FixtureHosts() {}

  static Path root(String host) {
    try {
      return Path.of(FixtureHosts.class.getResource("/hosts/" + host).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static String read(String host, String relative) {
    try {
      return Files.readString(root(host).resolve(relative));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Replays the fixture's nvidia-smi.csv for the GPU query; as if not installed when the file is absent. */
  static CommandRunner nvidiaSmi(String host) {
    return (command, timeout) -> {
      if (!command.equals(Gpu.NVIDIA_SMI_QUERY)) {
        return Optional.empty();
      }
      Path csv = root(host).resolve("nvidia-smi.csv");
      return Files.exists(csv) ? Optional.of(read(host, "nvidia-smi.csv")) : Optional.empty();
    };
  }

  static HostProbe probe(String host) {
    return new HostProbe(root(host), nvidiaSmi(host));
  }

  static final OrtInfo CPU_ONLY = new OrtInfo("1.29.0", List.of("CPU"), Map.of("CUDA", "OrtException: no CUDA"));
}
