package io.partita.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts a test's main class in a child JVM with the test's own class path, for tests that kill a
 * component with SIGKILL.
 *
 * <p>The class path goes in an argument file because ONNX Runtime 1.29 crashes (SIGSEGV) on start
 * when the process's command line is longer than about 4 KiB. Each child gets its own file, written
 * before it starts and never rewritten: the launcher reads the file after {@code start()} returns,
 * so a file shared between children could hand one of them the half-written class path of the next.
 */
public final class ChildJvm {

  private ChildJvm() {}

  /**
   * Starts {@code mainClass} with {@code args}, its output (stdout and stderr) in {@code log}; the
   * argument file lies beside the log, named after it.
   */
  public static Process start(Class<?> mainClass, String maxHeap, Path log, List<String> args) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Path dir = log.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    Path argFile = dir.resolve(log.getFileName() + ".args");
    Files.writeString(argFile, "-cp \"" + classpath.replace("\\", "\\\\") + "\"\n");
    List<String> command = new ArrayList<>(List.of(java, "-Xmx" + maxHeap, "@" + argFile, mainClass.getName()));
    command.addAll(args);
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }
}
