package io.partita.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.avro.SlotAssignment;
import io.partita.gateway.jobs.JobStages;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One batch job through the gateway's jobs API ({@code POST /v2/jobs}: JSON lines in, results
 * out), on an embedded broker, one worker and one gateway in this JVM: the rows are packed
 * {@code gateway.jobs.pack.rows} per request record. Warm-up jobs go first, then the measured job
 * a few times; the figure is the median run's items per second from the submission to the
 * job's DONE, and from its acceptance (201: lines parsed and written to Kafka) to DONE; each run's
 * results are read and counted.
 */
final class JobBench {
  private static final ObjectMapper JSON = new ObjectMapper();

  private JobBench() {}

  /**
   * @param fromSubmission items/s from the POST to DONE
   * @param fromAccepted items/s from the 201 to DONE
   * @param failed rows with an error result
   * @param cpu the CPU split from the submission to DONE
   * @param cpuMicrosPerRow the process's CPU time over that window, per row
   * @param stages the gateway's job stages for this job, from its metrics
   * @param runs items/s from submission of every measured run, in the order they ran (this outcome is the median one)
   */
  record Outcome(int rows, int packRows, double fromSubmission, double fromAccepted, int failed, long inputBytes,
      CpuSplit.Split cpu, double cpuMicrosPerRow, Stages stages, List<Double> runs) {
    Outcome withRuns(List<Double> all) {
      return new Outcome(rows, packRows, fromSubmission, fromAccepted, failed, inputBytes, cpu, cpuMicrosPerRow, stages, all);
    }
  }

  /**
   * Where the job's time went in the gateway's job runner ({@code partita_gateway_job_*} metrics, the
   * job's share: after it less before it).
   *
   * @param runSeconds from the job's acceptance to its DONE
   * @param seconds by stage label (read, pack, send, slot_wait, results)
   * @param requests request records sent
   * @param roundTripSeconds their round trips, summed
   */
  record Stages(double runSeconds, Map<String, Double> seconds, double requests, double roundTripSeconds) {}

  /**
   * Runs {@code warmups} warm-up jobs of {@code warmupRows}, then the measured job of {@code rows}
   * {@code repeats} times (each a new job with the same lines) and gives the run with the median
   * items/s from submission, its CPU split and stages, with every run's figure in
   * {@link Outcome#runs}: on two busy cores the JIT compiles the job paths for several jobs (after
   * one warm-up job, the packing stage took 3.5, 2.2 and 0.8 s in three runs of the same job).
   *
   * @param plan the plan's slots for the worker to follow (see {@link PipelineEnv}); empty: the worker's own slots
   */
  static Outcome run(Path workDir, BenchModel model, int rows, int warmupRows, int packRows,
      Map<String, String> workerSettings, List<SlotAssignment> plan, int warmups, int repeats) throws Exception {
    Path dir = Files.createTempDirectory(workDir, "job");
    Map<String, String> settings = new HashMap<>(workerSettings);
    settings.put("gateway.jobs.pack.rows", Integer.toString(packRows));
    settings.put("gateway.jobs.max.body.bytes", Long.toString(1L << 30));
    settings.put("gateway.dashboard.enabled", "false");
    CpuSplit cpu = new CpuSplit();
    try (PipelineEnv env = new PipelineEnv(dir, List.of(model), settings, plan, cpu)) {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      cpu.part("load generator");
      String base = "http://localhost:" + env.gateway.port();
      byte[] warmup = lines(model, warmupRows, 7);
      for (int i = 0; i < warmups; i++) {
        runJob(http, base, model, warmup, null, null);
      }
      byte[] body = lines(model, rows, 11);
      List<Outcome> outcomes = new ArrayList<>();
      for (int i = 0; i < Math.max(1, repeats); i++) {
        CpuSplit.Split[] split = new CpuSplit.Split[1];
        Map<String, Double> before = jobMetrics(http, base, model);
        double[] rates = runJob(http, base, model, body, cpu, window -> split[0] = window);
        Map<String, Double> after = jobMetrics(http, base, model);
        Map<String, Double> stageSeconds = new LinkedHashMap<>();
        for (JobStages.Stage stage : JobStages.Stage.values()) {
          String key = "stage:" + stage.label();
          stageSeconds.put(stage.label(), after.getOrDefault(key, 0.0) - before.getOrDefault(key, 0.0));
        }
        Stages stages = new Stages(rows / rates[1], stageSeconds,
            after.getOrDefault("requests", 0.0) - before.getOrDefault("requests", 0.0),
            after.getOrDefault("round trip", 0.0) - before.getOrDefault("round trip", 0.0));
        double seconds = rows / rates[0];
        outcomes.add(new Outcome(rows, packRows, rates[0], rates[1], (int) rates[2], body.length, split[0],
            split[0].coresBusy() * seconds * 1e6 / rows, stages, List.of()));
      }
      List<Double> runs = outcomes.stream().map(Outcome::fromSubmission).toList();
      Outcome median = outcomes.stream().sorted(Comparator.comparingDouble(Outcome::fromSubmission)).toList().get(outcomes.size() / 2);
      return median.withRuns(runs);
    }
  }

  private static final Pattern JOB_METRIC = Pattern.compile(
      "(?m)^partita_gateway_job_(stage_seconds|requests|request_round_trip_seconds)_total\\{model=\"([^\"]*)\"(?:,stage=\"([a-z_]+)\")?,?\\} ([0-9.eE+-]+)$");

  /** The gateway's job stage counters for the model, from its /metrics: "stage:read", ..., "requests", "round trip". */
  private static Map<String, Double> jobMetrics(HttpClient http, String base, BenchModel model) throws Exception {
    String text = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
    Map<String, Double> out = new HashMap<>();
    Matcher m = JOB_METRIC.matcher(text);
    while (m.find()) {
      if (!m.group(2).equals(model.name())) {
        continue;
      }
      String key = switch (m.group(1)) {
        case "stage_seconds" -> "stage:" + m.group(3);
        case "requests" -> "requests";
        default -> "round trip";
      };
      out.put(key, Double.parseDouble(m.group(4)));
    }
    return out;
  }

  static byte[] lines(BenchModel model, int rows, long seed) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < rows; i++) {
      b.append(model.jsonBody(1, seed * 1_000_003L + i)).append('\n');
    }
    return b.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Submits, waits for DONE, reads the results; {items/s from submission, from acceptance, failed
   * rows}. {@code cpuWindow} (when not null) gets the CPU split from the submission to DONE.
   */
  private static double[] runJob(HttpClient http, String base, BenchModel model, byte[] body, CpuSplit cpu,
      Consumer<CpuSplit.Split> cpuWindow) throws Exception {
    return runJob(http, base, model.name(), body, cpu, cpuWindow);
  }

  /** As {@link #runJob(HttpClient, String, BenchModel, byte[], CpuSplit, Consumer)}, on the service model named. */
  static double[] runJob(HttpClient http, String base, String serviceModel, byte[] body, CpuSplit cpu,
      Consumer<CpuSplit.Split> cpuWindow) throws Exception {
    Map<Long, Long> before = cpu == null ? null : cpu.snapshot();
    long start = System.nanoTime();
    HttpResponse<String> created = http.send(HttpRequest.newBuilder(URI.create(base + "/v2/jobs?model=" + serviceModel))
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
    if (cpu != null) {
      cpuWindow.accept(cpu.between(before, cpu.snapshot(), (end - start) / 1e9));
    }
    HttpResponse<InputStream> results = http.send(HttpRequest.newBuilder(URI.create(base + "/v2/jobs/" + id + "/results"))
        .build(), HttpResponse.BodyHandlers.ofInputStream());
    long lines = 0;
    try (var reader = new BufferedReader(new InputStreamReader(results.body(), StandardCharsets.UTF_8))) {
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
