package io.partita.cluster;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * Apicurio Registry run from its Maven distribution ({@code io.apicurio:apicurio-registry-app:<v>:tar.gz:all},
 * unpacked by this module's build into {@code target/apicurio}) as a child JVM on a free port,
 * with its default in-memory storage. Nothing is downloaded here. When the distribution is missing
 * or does not come up, the calling test is skipped with the reason (JUnit assumption), never faked.
 */
final class ApicurioRegistry implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

  private final Process process;
  private final int port;
  private final Path log;

  private ApicurioRegistry(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
  }

  static ApicurioRegistry start() throws Exception {
    String dir = System.getProperty("partita.apicurio.dir");
    Assumptions.assumeTrue(dir != null, "partita.apicurio.dir is not set: run through Maven (cluster-tests/pom.xml unpacks the registry)");
    Path home = Path.of(dir);
    Optional<Path> runner = Optional.empty();
    if (Files.isDirectory(home)) {
      try (Stream<Path> files = Files.list(home)) {
        runner = files.filter(p -> p.getFileName().toString().endsWith("-runner.jar")).findFirst();
      }
    }
    Assumptions.assumeTrue(runner.isPresent(), "no Apicurio Registry runner jar under " + home
        + ": the build did not unpack io.apicurio:apicurio-registry-app:" + System.getProperty("partita.apicurio.version") + ":tar.gz:all");
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path log = home.resolve("registry-" + port + ".log");
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process process = new ProcessBuilder(List.of(java.toString(), "-Xmx384m", "-XX:TieredStopAtLevel=1",
            "-Dquarkus.http.port=" + port, "-Dquarkus.http.host=127.0.0.1", "-jar", runner.get().toString()))
        .directory(home.toFile())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
    ApicurioRegistry registry = new ApicurioRegistry(process, port, log);
    if (!registry.awaitReady()) {
      String tail = registry.logTail();
      registry.close();
      Assumptions.abort("Apicurio Registry from " + runner.get() + " did not answer on port " + port + " within " + START_TIMEOUT.toSeconds()
          + " s (process " + (process.isAlive() ? "still running" : "exited with " + process.exitValue()) + "); log tail:\n" + tail);
    }
    return registry;
  }

  private boolean awaitReady() throws InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    long end = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < end && process.isAlive()) {
      try {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(ccompatUrl() + "/subjects")).timeout(Duration.ofSeconds(2)).build(),
            HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return true;
        }
      } catch (IOException e) {
        // not listening yet
      }
      // Polling a child process that offers no readiness callback: wait a little between tries.
      process.onExit().completeOnTimeout(process, 250, java.util.concurrent.TimeUnit.MILLISECONDS).join();
    }
    return false;
  }

  /** The Confluent-compatible API: what {@code serde.registry.url} points at. */
  String ccompatUrl() {
    return "http://127.0.0.1:" + port + "/apis/ccompat/v7";
  }

  String get(String path) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(ccompatUrl() + path)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString()).body();
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
