package io.partita.bench;

import io.partita.launcher.Partita;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code partita local} as a user starts it: its own JVM ({@code java -Xmx2g -jar
 * partita-launcher.jar local}, the options {@code ./partita} passes, without its class-data-sharing
 * archive), on free ports and a data directory of its own, with its output in {@code local.log}
 * there. {@link #awaitReady} polls {@code /v2/health/ready} as a user's script would.
 */
final class LocalProcess implements AutoCloseable {
  private final Process process;
  private final int httpPort;
  private final Path log;
  private final long startedNanos = System.nanoTime();

  private LocalProcess(Process process, int httpPort, Path log) {
    this.process = process;
    this.httpPort = httpPort;
    this.log = log;
  }

  /**
   * Starts {@code partita local} in {@code dataDir}.
   *
   * @param extra more arguments after {@code local} (say {@code --set k=v})
   */
  static LocalProcess start(Path dataDir, List<String> extra) throws IOException {
    Files.createDirectories(dataDir);
    int kafka = PipelineEnv.freePortPair();
    int http = freePort();
    List<String> command = new ArrayList<>(List.of(java(), "-Xmx2g", "-jar", launcherJar().toString(), "local",
        "--kafka-port", Integer.toString(kafka), "--http-port", Integer.toString(http), "--grpc-port", "-1",
        "--data-dir", dataDir.toString()));
    command.addAll(extra);
    return spawn(command, dataDir.resolve("local.log"), http);
  }

  /**
   * Starts any command (another {@code partita} role, say) with its output in {@code log}.
   *
   * @param httpPort the port {@link #awaitReady} polls, or -1 when it has none
   */
  static LocalProcess spawn(List<String> command, Path log, int httpPort) throws IOException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    return new LocalProcess(p, httpPort, log);
  }

  /** Fails naming the exit code and the log's tail when the process has ended. */
  void checkAlive(String what) throws IOException {
    if (!process.isAlive()) {
      throw new IOException(what + " ended with " + process.exitValue() + ": " + tail());
    }
  }

  /** The JVM running this bench (the same Java a user's {@code ./partita} finds first on the path is not known here). */
  static String java() {
    return ProcessHandle.current().info().command().orElse("java");
  }

  /**
   * The launcher jar this bench runs from, or {@code launcher/target/partita-launcher.jar} under the
   * working directory. The launcher's jar, not the bench's own: the bench sits in its own jar on the
   * launcher's class path.
   */
  static Path launcherJar() {
    try {
      Path self = Path.of(Partita.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isRegularFile(self) && self.toString().endsWith(".jar")) {
        return self;
      }
    } catch (URISyntaxException | SecurityException e) {
      // fall through to the build's path
    }
    Path built = Path.of("launcher/target/partita-launcher.jar").toAbsolutePath();
    if (!Files.isRegularFile(built)) {
      throw new IllegalStateException("the first-minute bench starts partita local from " + built
          + ", which is missing: build it first (./mvnw -B -q -DskipTests package)");
    }
    return built;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  int httpPort() {
    return httpPort;
  }

  String base() {
    return "http://localhost:" + httpPort;
  }

  /**
   * Waits until {@code /v2/health/ready} answers 200, polling every 50 ms.
   *
   * @return seconds from the process's start to that answer
   * @throws IOException when the process ends first or the wait runs out (the log's tail is in the message)
   */
  double awaitReady(HttpClient http, Duration timeout) throws IOException, InterruptedException {
    HttpRequest ready = HttpRequest.newBuilder(URI.create(base() + "/v2/health/ready")).timeout(Duration.ofSeconds(2)).build();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      checkAlive("partita local, before it was ready,");
      try {
        if (http.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return (System.nanoTime() - startedNanos) / 1e9;
        }
      } catch (IOException notYet) {
        // the gateway's port is not open yet
      }
      TimeUnit.MILLISECONDS.sleep(50); // polling, as a user's readiness probe does
    }
    throw new IOException("partita local was not ready within " + timeout.toSeconds() + " s: " + tail());
  }

  /** The last lines of the process's output, for error messages. */
  String tail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no output: " + e.getMessage() + ")";
    }
  }

  /** Whether the process's output has a line containing {@code text}. */
  boolean logged(String text) {
    try (var lines = Files.lines(log)) {
      return lines.anyMatch(l -> l.contains(text));
    } catch (IOException | UncheckedIOException e) {
      return false;
    }
  }

  /** Stops it as Ctrl-C does (SIGTERM), then forcibly after 30 s. */
  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
