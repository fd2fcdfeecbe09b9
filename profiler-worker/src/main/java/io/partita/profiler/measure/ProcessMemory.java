package io.partita.profiler.measure;

import io.partita.profiler.env.ProcFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** This process's resident memory (VmRSS of /proc/self/status), which counts native ONNX Runtime memory. */
final class ProcessMemory {

  private ProcessMemory() {}

  /** Resident bytes, or -1 where /proc is not available. */
  static long residentBytes() {
    try {
      return ProcFiles.kibField(Files.readString(Path.of("/proc/self/status")), "VmRSS").orElse(-1);
    } catch (IOException e) {
      return -1;
    }
  }
}
