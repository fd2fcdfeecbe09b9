package io.partita.launcher.cluster;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the few system commands a cluster needs ({@code ip}, {@code id}) and says what failed. */
final class Shell {
  private Shell() {}

  record Result(int code, String output) {
    boolean ok() {
      return code == 0;
    }
  }

  /** Runs {@code command}, its standard output and error together; waits at most 30 s. */
  static Result run(List<String> command) {
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
      byte[] out = process.getInputStream().readAllBytes();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return new Result(-1, "timed out after 30 s");
      }
      return new Result(process.exitValue(), new String(out, StandardCharsets.UTF_8).strip());
    } catch (IOException e) {
      return new Result(-1, e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result(-1, "interrupted");
    }
  }

  /** Runs {@code command}; a failure is an error quoting the command and what it said. */
  static String check(List<String> command) {
    Result r = run(command);
    if (!r.ok()) {
      throw new IllegalStateException("`" + String.join(" ", command) + "` failed (exit " + r.code() + "): " + r.output());
    }
    return r.output();
  }

  /** Whether a command of this name is on the PATH. */
  static boolean has(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, name))) {
        return true;
      }
    }
    return false;
  }

  static boolean isRoot() {
    Result r = run(List.of("id", "-u"));
    return r.ok() && r.output().equals("0");
  }
}
