package io.partita.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * {@code partita job ...}: batch jobs through a running gateway's HTTP API ({@code /v2/jobs}).
 * Submit a JSON-lines file (one Open Inference Protocol infer request per line), watch it with a
 * progress bar, fetch its results in input order, or cancel it.
 */
@Command(name = "job", mixinStandardHelpOptions = true,
    description = "Batch jobs on a running gateway: submit, status, results, cancel.",
    subcommands = {JobCommand.Submit.class, JobCommand.Status.class, JobCommand.Results.class, JobCommand.Cancel.class})
final class JobCommand implements Runnable {
  private static final ObjectMapper JSON = new ObjectMapper();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /** Options every job command shares. */
  static class Connection {
    @Option(names = "--url", defaultValue = "http://localhost:8080", description = "The gateway (default: ${DEFAULT-VALUE}).")
    String url;

    @Option(names = "--api-key", paramLabel = "KEY", description = "API key, sent as Authorization: Bearer (default: $PARTITA_API_KEY).")
    String apiKey;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    HttpRequest.Builder request(String path) {
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "") + path));
      String key = apiKey != null ? apiKey : System.getenv("PARTITA_API_KEY");
      if (key != null && !key.isBlank()) {
        b.header("Authorization", "Bearer " + key.strip());
      }
      return b;
    }

    JsonNode json(HttpRequest request, int expected) throws IOException, InterruptedException {
      HttpResponse<String> response = send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != expected) {
        throw new IllegalStateException(problem(response.statusCode(), response.body()));
      }
      return JSON.readTree(response.body());
    }

    <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) throws IOException, InterruptedException {
      try {
        return http.send(request, handler);
      } catch (ConnectException e) {
        throw new IllegalStateException("no gateway answers at " + url + " (start one with ./partita local, or pass --url)");
      }
    }
  }

  static String problem(int status, String body) {
    try {
      JsonNode error = JSON.readTree(body).get("error");
      return "HTTP " + status + ": " + (error != null ? error.asText() : body);
    } catch (IOException e) {
      return "HTTP " + status;
    }
  }

  // Not mixinStandardHelpOptions: its --version is the model version, so only --help is standard here.
  @Command(name = "submit", description = "Submit FILE (JSON lines, one infer request per line) as a job.")
  static final class Submit implements Callable<Integer> {
    @CommandLine.Mixin Connection connection = new Connection();

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    @Parameters(index = "0", paramLabel = "FILE", description = "JSON lines: one OIP infer request body per line.")
    Path file;

    @Option(names = "--model", required = true, description = "The service model every line is for.")
    String model;

    @Option(names = "--version", description = "Pin a model version (default: the worker chooses).")
    String version;

    @Option(names = "--wait", description = "Wait for the job to end, showing a progress bar.")
    boolean waitForEnd;

    @Override
    public Integer call() throws Exception {
      if (!Files.isRegularFile(file)) {
        throw new IllegalArgumentException("FILE " + file + ": no such file");
      }
      String query = "?model=" + URLEncoder.encode(model, StandardCharsets.UTF_8)
          + (version == null ? "" : "&version=" + URLEncoder.encode(version, StandardCharsets.UTF_8));
      JsonNode job = connection.json(connection.request("/v2/jobs" + query)
          .header("Content-Type", "application/x-ndjson").POST(HttpRequest.BodyPublishers.ofFile(file)).build(), 201);
      String id = job.get("id").asText();
      System.out.println(id);
      if (!waitForEnd) {
        System.err.printf("Job %s: %d items queued. Follow it with: partita job status %s%n", id, job.get("total").asInt(), id);
        return 0;
      }
      return watch(connection, id, System.err);
    }
  }

  /** Polls the job until it ends, drawing the progress bar; returns 0 when it is DONE. */
  static int watch(Connection connection, String id, PrintStream out) throws IOException, InterruptedException {
    boolean terminal = System.console() != null;
    int lastShown = -1;
    while (true) {
      JsonNode s = connection.json(connection.request("/v2/jobs/" + id).GET().build(), 200);
      String state = s.get("state").asText();
      int total = s.get("total").asInt();
      int done = s.get("done").asInt();
      boolean end = state.equals("DONE") || state.equals("CANCELLED") || state.equals("FAILED");
      String bar = progressBar(state, done, s.get("failed").asInt(), total, s.get("rate").asDouble(),
          s.get("eta_seconds").isNumber() ? s.get("eta_seconds").asLong() : -1, 30);
      int percent = total == 0 ? 100 : (int) (100L * done / total);
      if (terminal) {
        out.print("\r" + bar);
      } else if (end || percent / 10 != lastShown / 10) {
        out.println(bar);
        lastShown = percent;
      }
      if (end) {
        if (terminal) {
          out.println();
        }
        if (s.hasNonNull("message")) {
          out.println(s.get("message").asText());
        }
        out.printf("Results: partita job results %s%n", id);
        return state.equals("DONE") ? 0 : 1;
      }
      // The progress bar polls the job's status over HTTP: twice a second is live enough to watch
      // and costs the gateway nothing worth measuring.
      Thread.sleep(500);
    }
  }

  /** One line: {@code [#######.......]  2500/5000  50%  failed 3  812/s  ETA 4s  RUNNING}. */
  static String progressBar(String state, int done, int failed, int total, double rate, long etaSeconds, int width) {
    int filled = total == 0 ? width : (int) ((long) width * done / total);
    int percent = total == 0 ? 100 : (int) (100L * done / total);
    StringBuilder b = new StringBuilder("[");
    b.append("#".repeat(filled)).append(".".repeat(width - filled)).append("] ");
    b.append(String.format(Locale.ROOT, "%d/%d %3d%%", done, total, percent));
    if (failed > 0) {
      b.append("  failed ").append(failed);
    }
    if (rate > 0) {
      b.append(String.format(Locale.ROOT, "  %.0f/s", rate));
    }
    if (etaSeconds > 0) {
      b.append("  ETA ").append(duration(etaSeconds));
    }
    b.append("  ").append(state);
    return b.toString();
  }

  static String duration(long seconds) {
    if (seconds < 60) {
      return seconds + "s";
    }
    if (seconds < 3600) {
      return (seconds / 60) + "m" + String.format(Locale.ROOT, "%02d", seconds % 60) + "s";
    }
    return (seconds / 3600) + "h" + String.format(Locale.ROOT, "%02d", (seconds % 3600) / 60) + "m";
  }

  @Command(name = "status", mixinStandardHelpOptions = true, description = "Show a job's state and counts (JSON).")
  static final class Status implements Callable<Integer> {
    @CommandLine.Mixin Connection connection = new Connection();

    @Parameters(index = "0", paramLabel = "ID")
    String id;

    @Option(names = "--wait", description = "Wait for the job to end, showing a progress bar.")
    boolean waitForEnd;

    @Override
    public Integer call() throws Exception {
      if (waitForEnd) {
        return watch(connection, id, System.err);
      }
      System.out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(
          connection.json(connection.request("/v2/jobs/" + id).GET().build(), 200)));
      return 0;
    }
  }

  @Command(name = "results", mixinStandardHelpOptions = true,
      description = "Write a finished job's results: JSON lines in input order, one per item (result or error).")
  static final class Results implements Callable<Integer> {
    @CommandLine.Mixin Connection connection = new Connection();

    @Parameters(index = "0", paramLabel = "ID")
    String id;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "Write to FILE instead of standard output.")
    Path output;

    @Override
    public Integer call() throws Exception {
      HttpResponse<InputStream> response = connection.send(connection.request("/v2/jobs/" + id + "/results").GET().build(),
          HttpResponse.BodyHandlers.ofInputStream());
      try (InputStream in = response.body()) {
        if (response.statusCode() != 200) {
          throw new IllegalStateException(problem(response.statusCode(), new String(in.readAllBytes(), StandardCharsets.UTF_8)));
        }
        if (output == null) {
          in.transferTo(System.out);
          System.out.flush();
        } else {
          try (OutputStream out = Files.newOutputStream(output)) {
            in.transferTo(out);
          }
        }
      }
      return 0;
    }
  }

  @Command(name = "cancel", mixinStandardHelpOptions = true, description = "Cancel a job: items not yet sent are not run.")
  static final class Cancel implements Callable<Integer> {
    @CommandLine.Mixin Connection connection = new Connection();

    @Parameters(index = "0", paramLabel = "ID")
    String id;

    @Override
    public Integer call() throws Exception {
      JsonNode s = connection.json(connection.request("/v2/jobs/" + id).DELETE().build(), 202);
      System.out.printf("%s %s (%d of %d done)%n", id, s.get("state").asText(), s.get("done").asInt(), s.get("total").asInt());
      return 0;
    }
  }
}
