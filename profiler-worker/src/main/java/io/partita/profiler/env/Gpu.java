package io.partita.profiler.env;

import java.util.ArrayList;
import java.util.List;

/**
 * One GPU as nvidia-smi reports it.
 *
 * @param memoryBytes total device memory
 * @param computeCapability e.g. "9.0"
 */
public record Gpu(int index, String name, long memoryBytes, String computeCapability) {

  /** The nvidia-smi query whose output {@link #parseNvidiaSmi} reads. */
  public static final List<String> NVIDIA_SMI_QUERY =
      List.of("nvidia-smi", "--query-gpu=name,memory.total,compute_cap", "--format=csv,noheader,nounits");

  /**
   * Parses the output of {@link #NVIDIA_SMI_QUERY}: one line per GPU, {@code name, MiB, capability}.
   * Blank lines are skipped; any other malformed line is an error naming it.
   */
  public static List<Gpu> parseNvidiaSmi(String output) {
    List<Gpu> gpus = new ArrayList<>();
    for (String line : output.split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      // the name may itself contain commas in principle, so split from the right
      int last = line.lastIndexOf(',');
      int middle = last < 0 ? -1 : line.lastIndexOf(',', last - 1);
      if (middle < 0) {
        throw new IllegalArgumentException("unexpected nvidia-smi line (want 'name, MiB, capability'): " + line);
      }
      String name = line.substring(0, middle).trim();
      String mib = line.substring(middle + 1, last).trim();
      String capability = line.substring(last + 1).trim();
      long memory;
      try {
        memory = Long.parseLong(mib) * 1024 * 1024;
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("unexpected memory '" + mib + "' in nvidia-smi line: " + line, e);
      }
      gpus.add(new Gpu(gpus.size(), name, memory, capability));
    }
    return List.copyOf(gpus);
  }
}
