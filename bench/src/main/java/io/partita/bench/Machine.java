package io.partita.bench;

import ai.onnxruntime.OrtEnvironment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The machine a benchmark ran on, for the report's header. */
final class Machine {
  private Machine() {}

  static String describe() {
    String cpu = "unknown CPU";
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          cpu = line.substring(line.indexOf(':') + 1).strip();
          break;
        }
      }
    } catch (IOException e) {
      // not Linux: keep "unknown CPU"
    }
    long memory = Runtime.getRuntime().maxMemory();
    return "Machine: " + Runtime.getRuntime().availableProcessors() + " cores (" + cpu + "), Java "
        + System.getProperty("java.version") + ", ONNX Runtime " + OrtEnvironment.getEnvironment().getVersion()
        + ", JVM heap limit " + (memory >> 20) + " MiB, " + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ".";
  }
}
