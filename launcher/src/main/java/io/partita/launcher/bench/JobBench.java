package io.partita.launcher.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One batch job through the gateway's jobs API ({@code POST /v2/jobs}: JSON lines in, results
 * out), on an embedded broker, one worker and one gateway in this JVM: the rows are packed
 * {@code gateway.jobs.pack.rows} per request record. A warm-up job goes first. The figure is items
 * per second from the submission to the job's DONE, and from its acceptance (201: lines parsed and
 * written to Kafka) to DONE; then the results are read and counted.
 */
final class JobBench {
  private static final ObjectMapper JSON = new ObjectMapper();

  private JobBench() {}

  /**
   * @param fromSubmission items/s from the POST to DONE
   * @param fromAccepted items/s from the 201 to DONE
   * @param failed rows with an error result
   */
  record Outcome(int rows, int packRows, double fromSubmission, double fromAccepted, int failed, long inputBytes) {}

  static Outcome run(Path workDir, BenchModel model, int rows, int warmupRows, int packRows,
      Map<String, String> workerSettings) throws Exception {
    Path dir = Files.createTempDirectory(workDir, "job");
    Map<String, String> settings = new HashMap<>(workerSettings);
    settings.put("gateway.jobs.pack.rows", Integer.toString(packRows));
    settings.put("gateway.jobs.max.body.bytes", Long.toString(1L << 30));
    settings.put("gateway.dashboard.enabled", "false");
    try (PipelineEnv env = new PipelineEnv(dir, List.of(model), settings, 0)) {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      String base = "http://localhost:" + env.gateway.port();
      runJob(http, base, model, lines(model, warmupRows, 7));
      byte[] body = lines(model, rows, 11);
      double[] rates = runJob(http, base, model, body);
      return new Outcome(rows, packRows, rates[0], rates[1], (int) rates[2], body.length);
    }
  }

  private static byte[] lines(BenchModel model, int rows, long seed) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < rows; i++) {
      b.append(model.jsonBody(1, seed * 1_000_003L + i)).append('\n');
    }
    return b.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** Submits, waits for DONE, reads the results; {items/s from submission, from acceptance, failed rows}. */
  private static double[] runJob(HttpClient http, String base, BenchModel model, byte[] body) throws Exception {
    long start = System.nanoTime();
    HttpResponse<String> created = http.send(HttpRequest.newBuilder(URI.create(base + "/v2/jobs?model=" + model.name()))
        .timeout(Duration.ofMinutes(5)).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (created.statusCode() != 201) {
      throw new IOException("job not accepted: HTTP " + created.statusCode() + ": " + created.body());
    }
    long accepted = System.nanoTime();
    String id = JSON.readTree(created.body()).get("id").asText();
    int total = JSON.readTree(created.body()).get("total").asInt();
    JsonNode status;
    long deadline = accepted + TimeUnit.MINUTES.toNanos(20);
    while (true) {
      status = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/v2/jobs/" + id)).build(),
          HttpResponse.BodyHandlers.ofString()).body());
      String state = status.get("state").asText();
      if (state.equals("DONE")) {
        break;
      }
      if (state.equals("FAILED") || state.equals("CANCELLED") || System.nanoTime() > deadline) {
        throw new IOException("job " + id + " ended " + state + ": " + status);
      }
      TimeUnit.MILLISECONDS.sleep(20); // polling the job's status, as a client of the API does
    }
    long end = System.nanoTime();
    HttpResponse<java.io.InputStream> results = http.send(HttpRequest.newBuilder(URI.create(base + "/v2/jobs/" + id + "/results"))
        .build(), HttpResponse.BodyHandlers.ofInputStream());
    long lines = 0;
    try (var reader = new java.io.BufferedReader(new java.io.InputStreamReader(results.body(), StandardCharsets.UTF_8))) {
      for (String line = reader.readLine(); line != null; line = reader.readLine()) {
        lines += line.isBlank() ? 0 : 1;
      }
    }
    if (lines != total) {
      throw new IOException("job " + id + ": " + lines + " result lines for " + total + " rows");
    }
    return new double[] {total / ((end - start) / 1e9), total / ((end - accepted) / 1e9), status.get("failed").asInt()};
  }
}
