package io.partita.profiler.env;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * What /proc/cpuinfo says about the processor: its model name, the instruction-set flags that matter
 * for inference, and how many logical and physical cores exist (not how many this process may use;
 * see {@link ProbedHost#usableCores()}).
 *
 * @param flags the inference-relevant subset of the flags, sorted (see {@link #INFERENCE_FLAGS})
 */
public record CpuInfo(String model, List<String> flags, int logicalCores, int physicalCores) {

  /**
   * Flags that change which ONNX Runtime kernels run: x86 vector and matrix extensions and their
   * ARM counterparts. The full list has over a hundred entries that say nothing about inference
   * speed.
   */
  public static final Set<String> INFERENCE_FLAGS = Set.of(
      "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c",
      "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd", "avx512_vnni", "avx512_bf16", "avx512_fp16",
      "avx_vnni", "amx_tile", "amx_bf16", "amx_int8", "amx_fp16",
      "asimd", "asimdhp", "asimddp", "fphp", "sve", "sve2", "i8mm", "bf16");

  public CpuInfo {
    flags = List.copyOf(flags);
  }

  /**
   * Parses the text of /proc/cpuinfo (x86 or ARM). Physical cores are the distinct (physical id,
   * core id) pairs; where those fields are missing (ARM, some VMs) every logical CPU counts as a
   * core.
   */
  public static CpuInfo parse(String text) {
    int logical = 0;
    String model = null;
    Set<String> flags = new TreeSet<>();
    Set<String> cores = new HashSet<>();
    String physicalId = null;
    String coreId = null;
    List<String[]> blocks = new ArrayList<>();
    for (String line : text.split("\n")) {
      int colon = line.indexOf(':');
      if (colon < 0) {
        if (line.isBlank() && coreId != null) {
          blocks.add(new String[] {physicalId, coreId});
          physicalId = null;
          coreId = null;
        }
        continue;
      }
      String key = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String value = line.substring(colon + 1).trim();
      switch (key) {
        case "processor" -> logical++;
        case "model name" -> model = model == null ? value : model;
        case "hardware", "cpu model" -> model = model == null ? value : model;
        case "flags", "features" -> {
          for (String f : value.split("\\s+")) {
            if (INFERENCE_FLAGS.contains(f)) {
              flags.add(f);
            }
          }
        }
        case "physical id" -> physicalId = value;
        case "core id" -> coreId = value;
        default -> { }
      }
    }
    if (coreId != null) {
      blocks.add(new String[] {physicalId, coreId});
    }
    for (String[] b : blocks) {
      cores.add(b[0] + "/" + b[1]);
    }
    if (logical == 0) {
      throw new IllegalArgumentException("no 'processor' entries in cpuinfo");
    }
    int physical = cores.isEmpty() ? logical : cores.size();
    return new CpuInfo(model == null ? "unknown" : model, new ArrayList<>(flags), logical, physical);
  }
}
