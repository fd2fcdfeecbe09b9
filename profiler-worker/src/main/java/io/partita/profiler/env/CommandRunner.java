package io.partita.profiler.env;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs an external command; a seam so tests can feed recorded output instead of running tools. */
@FunctionalInterface
public interface CommandRunner {

  /**
   * The command's standard output, or empty when it is not installed, exits non-zero or does not
   * finish within the timeout (it is then killed).
   */
  Optional<String> run(List<String> command, Duration timeout);

  /** Runs real processes. */
  static CommandRunner processes() {
    return (command, timeout) -> {
      Process process;
      try {
        process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      } catch (IOException notInstalled) {
        return Optional.empty();
      }
      try (InputStream stdout = process.getInputStream()) {
        CompletableFuture<byte[]> output = CompletableFuture.supplyAsync(() -> {
          try {
            return stdout.readAllBytes();
          } catch (IOException e) {
            return new byte[0];
          }
        });
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          process.destroyForcibly();
          return Optional.empty();
        }
        String text = new String(output.get(timeout.toMillis(), TimeUnit.MILLISECONDS), StandardCharsets.UTF_8);
        return process.exitValue() == 0 ? Optional.of(text) : Optional.empty();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
        return Optional.empty();
      } catch (Exception e) {
        process.destroyForcibly();
        return Optional.empty();
      }
    };
  }
}
