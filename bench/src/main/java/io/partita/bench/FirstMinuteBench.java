package io.partita.bench;

import com.sun.net.httpserver.HttpServer;
import io.partita.profiler.stats.LatencySummary;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code partita local} as a user starts it, measured from the moment {@code /v2/health/ready}
 * says 200 ({@code ./partita bench --only first-minute}): its own JVM on free ports
 * ({@link LocalProcess}), the demo models, the start-up profiling, the planner's loop, nothing
 * warmed by the bench.
 *
 * <ol>
 *   <li>Start, and at ready start {@code clients} HTTP clients (closed loop, one JSON infer call of
 *       the base service model {@code demo} after another, HTTP/1.1, one connection each); count the
 *       answers per bucket of the first window, keep the load on, and count them again over a
 *       window at steady state.
 *   <li>With the load stopped, a batch job of {@code jobRows} rows on {@code demo-a} (a service model
 *       with a weight file) and the same job on {@code demo} (the base model), alternately.
 *   <li>A second start, and the same job on {@code demo-a} submitted the moment ready says 200.
 * </ol>
 */
final class FirstMinuteBench {
  static final String BASE = "demo";
  static final String ADAPTER = "demo-a";

  /**
   * @param bucket the width of one bucket of the first window
   * @param first the first window, from ready
   * @param steadyFrom when the steady window starts, from ready (the load runs all along)
   * @param steady the steady window's length
   * @param jobRows rows of each batch job
   * @param jobRepeats runs of each job at steady state (alternating demo-a and demo)
   */
  record Settings(int clients, Duration bucket, Duration first, Duration steadyFrom, Duration steady, int jobRows, int jobRepeats,
                  List<String> localArgs, Path logs) {
    static Settings full(Path logs) {
      return new Settings(16, Duration.ofSeconds(5), Duration.ofSeconds(60), Duration.ofSeconds(150), Duration.ofSeconds(30), 100_000, 3,
          List.of(), logs);
    }

    static Settings quick(Path logs) {
      return new Settings(4, Duration.ofSeconds(2), Duration.ofSeconds(10), Duration.ofSeconds(14), Duration.ofSeconds(4), 2_000, 1,
          List.of(), logs);
    }

    Settings withLocalArgs(List<String> args) {
      return new Settings(clients, bucket, first, steadyFrom, steady, jobRows, jobRepeats, List.copyOf(args), logs);
    }
  }

  /** Answers in one window: from..to seconds after ready. */
  record Window(double fromS, double toS, long answers, long errors, LatencySummary latency) {
    double perSecond() {
      return answers / (toS - fromS);
    }
  }

  /**
   * @param readyS seconds from the process's start to the first 200 of ready
   * @param buckets the first window, bucket by bucket
   * @param first the first window as a whole
   * @param steady the steady window
   * @param adapterRuns rows/s of the jobs on demo-a at steady state, in order
   * @param baseRuns rows/s of the jobs on demo at steady state, in order
   * @param atOnce rows/s of the job on demo-a submitted at ready of a second start
   * @param atOnceReadyS seconds from that start to its ready
   * @param profiledBy when the start-up profiling had published every model's points (seconds after ready, NaN: not by the end)
   * @param failedStarts starts that did not become ready (each was stopped and replaced by a fresh one)
   */
  record Outcome(double readyS, List<Window> buckets, Window first, Window steady, List<Double> adapterRuns, List<Double> baseRuns,
                 double atOnce, double atOnceReadyS, double profiledBy, List<String> failedStarts) {
    double adapterJob() {
      return median(adapterRuns);
    }

    double baseJob() {
      return median(baseRuns);
    }

    private static double median(List<Double> runs) {
      double[] sorted = runs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      return sorted.length == 0 ? Double.NaN : sorted[sorted.length / 2];
    }
  }

  private FirstMinuteBench() {}

  static Outcome run(Path scratch, Settings settings) throws Exception {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    double readyS;
    List<Window> buckets;
    Window firstWindow;
    Window steady;
    List<Double> adapterRuns = new ArrayList<>();
    List<Double> baseRuns = new ArrayList<>();
    double profiledBy;
    warmLoadGenerator(http, settings.clients());
    Started first = startReady(scratch, "first-minute", settings, http);
    Path dir = first.dir();
    try (LocalProcess local = first.local()) {
      readyS = first.readyS();
      long readyNanos = System.nanoTime();
      BenchModel demo = demoModel(dir, BASE);
      Load load = new Load(http, URI.create(local.base() + "/v2/models/" + demo.name() + "/infer"), demo.jsonBody(1, 1),
          settings.clients(), readyNanos);
      load.start();
      // a wall-clock schedule: the windows are spans of time after ready, not conditions to await
      long profiledAt = awaitLogged(local, "Profiled demo-mlp at start", readyNanos, settings.steadyFrom().plus(settings.steady()));
      sleepUntil(readyNanos + settings.steadyFrom().plus(settings.steady()).toNanos());
      load.stop();
      profiledBy = profiledAt < 0 ? Double.NaN : (profiledAt - readyNanos) / 1e9;
      buckets = new ArrayList<>();
      double width = settings.bucket().toNanos() / 1e9;
      for (double from = 0; from + width <= settings.first().toNanos() / 1e9 + 1e-9; from += width) {
        buckets.add(load.window(from, from + width));
      }
      firstWindow = load.window(0, settings.first().toNanos() / 1e9);
      steady = load.window(settings.steadyFrom().toNanos() / 1e9, settings.steadyFrom().plus(settings.steady()).toNanos() / 1e9);
      byte[] body = JobBench.lines(demo, settings.jobRows(), 13);
      for (int i = 0; i < settings.jobRepeats(); i++) {
        adapterRuns.add(JobBench.runJob(http, local.base(), ADAPTER, body, null, null)[0]);
        baseRuns.add(JobBench.runJob(http, local.base(), BASE, body, null, null)[0]);
      }
    } finally {
      keepLog(dir, settings.logs(), "first-minute-load.log");
    }
    double atOnce;
    double atOnceReady;
    Started started = startReady(scratch, "first-minute-job", settings, http);
    Path second = started.dir();
    try (LocalProcess local = started.local()) {
      atOnceReady = started.readyS();
      byte[] body = JobBench.lines(demoModel(second, BASE), settings.jobRows(), 13);
      atOnce = JobBench.runJob(http, local.base(), ADAPTER, body, null, null)[0];
    } finally {
      keepLog(second, settings.logs(), "first-minute-job.log");
    }
    List<String> failedStarts = new ArrayList<>(first.failedStarts());
    failedStarts.addAll(started.failedStarts());
    return new Outcome(readyS, buckets, firstWindow, steady, adapterRuns, baseRuns, atOnce, atOnceReady, profiledBy, failedStarts);
  }

  /** How long the load generator runs against a stub before the process starts (see {@link #warmLoadGenerator}). */
  static final Duration CLIENT_WARM_UP = Duration.ofSeconds(10);

  /**
   * Runs the load generator's clients for {@link #CLIENT_WARM_UP} against a stub HTTP server in this
   * JVM that answers every infer at once, before {@code partita local} starts: the JDK's HTTP client
   * and the load loop are compiled by then, so the first minute measures the process, not a cold
   * load generator taking the shared cores from it.
   */
  static void warmLoadGenerator(HttpClient http, int clients) throws Exception {
    byte[] answer = ("{\"model_name\":\"demo\",\"model_version\":\"1\",\"outputs\":[{\"name\":\"output\","
        + "\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[0.1,0.2,0.3,0.4]}]}").getBytes(StandardCharsets.UTF_8);
    HttpServer stub = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    ExecutorService threads = Executors.newFixedThreadPool(4);
    stub.setExecutor(threads);
    stub.createContext("/", exchange -> {
      try (exchange) {
        exchange.getRequestBody().readAllBytes();
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, answer.length);
        exchange.getResponseBody().write(answer);
      }
    });
    stub.start();
    try {
      URI target = URI.create("http://127.0.0.1:" + stub.getAddress().getPort() + "/v2/models/demo/infer");
      Load warm = new Load(http, target, "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],"
          + "\"data\":[1,2,3,4,5,6,7,8]}]}", clients, System.nanoTime());
      warm.start();
      // a fixed span, not a condition: the JIT compiles what has run often enough, and there is no
      // signal for "compiled" to wait for; 10 s is tens of thousands of calls on these cores
      Thread.sleep(CLIENT_WARM_UP.toMillis());
      warm.stop();
    } finally {
      stub.stop(0);
      threads.shutdownNow();
    }
  }

  /** A started process that said ready, {@code readyS} after it started; {@code failedStarts} starts before it did not. */
  private record Started(LocalProcess local, Path dir, double readyS, List<String> failedStarts) {}

  /**
   * Starts partita local in a fresh directory and waits for ready; a start that is not ready within
   * two minutes is stopped (its log kept) and started once more, fresh: the figures are of a start
   * that worked, and the report says how many did not.
   */
  private static Started startReady(Path scratch, String name, Settings settings, HttpClient http) throws Exception {
    List<String> failed = new ArrayList<>();
    while (true) {
      Path dir = Files.createTempDirectory(scratch, name);
      LocalProcess local = LocalProcess.start(dir, settings.localArgs());
      try {
        return new Started(local, dir, local.awaitReady(http, Duration.ofMinutes(2)), failed);
      } catch (IOException notReady) {
        local.close();
        String log = name + "-not-ready-" + failed.size() + ".log";
        keepLog(dir, settings.logs(), log);
        failed.add(notReady.getMessage().lines().findFirst().orElse("not ready") + " (log: " + settings.logs().resolve(log) + ")");
        if (failed.size() > 1) {
          throw new IOException("partita local did not become ready in " + failed.size() + " fresh starts: " + failed);
        }
      }
    }
  }

  /** Tables 1i and 1j. */
  static void report(Report report, Outcome o, Settings s, String command) {
    if (!o.failedStarts().isEmpty()) {
      report.note("partita local starts that never said ready", o.failedStarts().size() + " (replaced by fresh starts): "
          + String.join("; ", o.failedStarts()));
    }
    report.note("partita local logs of section 1i", s.logs().toString());
    List<List<String>> rows = new ArrayList<>();
    double steady = o.steady().perSecond();
    for (Window w : o.buckets()) {
      rows.add(windowRow(Report.fmt(w.fromS()) + "-" + Report.fmt(w.toS()) + " s", w, steady));
    }
    rows.add(windowRow("first " + Report.fmt(o.first().toS()) + " s", o.first(), steady));
    rows.add(windowRow("steady: " + Report.fmt(o.steady().fromS()) + "-" + Report.fmt(o.steady().toS()) + " s", o.steady(), steady));
    report.add(new Report.Table("1i. `partita local` as started, first " + Report.fmt(s.first().toSeconds()) + " s",
        "`java -Xmx2g -jar launcher/target/partita-launcher.jar local` (what ./partita runs, without its class-data-sharing "
            + "archive) in its own JVM on free ports and a fresh data directory: embedded broker, demo models, start-up "
            + "profiling, planner, worker and gateway. From the moment /v2/health/ready first said 200 (" + Report.fmt(o.readyS())
            + " s after the process started), " + s.clients() + " HTTP clients call `" + BASE + "` one JSON infer after another "
            + "(HTTP/1.1, one connection each) and keep calling to the end of the steady window; answers/s per window of time "
            + "after ready, and against the steady window. Before the process started, the load generator ran "
            + CLIENT_WARM_UP.toSeconds() + " s against a stub HTTP server in its own JVM, so that its own compilation is not "
            + "counted against the first minute. The start-up profiling had published every point "
            + (Double.isNaN(o.profiledBy()) ? "not by the end of the steady window" : Report.fmt(o.profiledBy()) + " s after ready")
            + ". The load generator shares the cores with the process.",
        List.of("window after ready", "answers/s", "errors", "p50 ms", "p99 ms", "vs steady"), rows, command));
    List<List<String>> jobs = new ArrayList<>();
    double base = o.baseJob();
    jobs.add(List.of(ADAPTER, "submitted when ready first said 200 (a second start, ready after " + Report.fmt(o.atOnceReadyS()) + " s)",
        Integer.toString(s.jobRows()), Report.fmt(o.atOnce()), Report.fmt(o.atOnce() / o.adapterJob()) + " of the steady job",
        Report.fmt(o.atOnce())));
    jobs.add(List.of(ADAPTER, "steady (after the load of 1i)", Integer.toString(s.jobRows()), Report.fmt(o.adapterJob()),
        Report.fmt(o.adapterJob() / base) + " of the job on " + BASE, runs(o.adapterRuns())));
    jobs.add(List.of(BASE, "steady (after the load of 1i)", Integer.toString(s.jobRows()), Report.fmt(base), "1.00", runs(o.baseRuns())));
    report.add(new Report.Table("1j. A batch job on one service model against its base model (`partita local`)",
        "One job of JSON lines through POST /v2/jobs on the process of 1i (rows packed 64 per request, as the gateway's default), "
            + "on `" + ADAPTER + "` (a weight file on the demo MLP) and on `" + BASE + "` (the base model), alternately, "
            + s.jobRepeats() + " time(s) each with no other load: items/s from the submission to DONE, the median run. Every slot "
            + "of a base model serves every one of its weight files, so the two should run at about the same rate. The first "
            + "row is the same job on `" + ADAPTER + "` submitted the moment a second, fresh start said ready.",
        List.of("service model", "when", "rows", "items/s", "ratio", "items/s of each run"), jobs, command));
  }

  private static List<String> windowRow(String label, Window w, double steady) {
    return List.of(label, Report.fmt(w.perSecond()), Long.toString(w.errors()),
        w.latency() == null ? "n/a" : Report.fmt(w.latency().p50Nanos() / 1e6),
        w.latency() == null ? "n/a" : Report.fmt(w.latency().p99Nanos() / 1e6), Report.fmt(w.perSecond() / steady));
  }

  private static String runs(List<Double> runs) {
    return String.join(" / ", runs.stream().map(Report::fmt).toList());
  }

  /** Copies the process's log out of the scratch space (deleted at the run's end), for reading after the run. */
  private static void keepLog(Path dataDir, Path logs, String name) {
    try {
      Files.createDirectories(logs);
      Files.copy(dataDir.resolve("local.log"), logs.resolve(name), StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      System.err.println("Could not keep partita local's log " + dataDir.resolve("local.log") + ": " + e.getMessage());
    }
  }

  /** The demo model of the started process's repository, driven under the service model name {@code serviceModel}. */
  private static BenchModel demoModel(Path dataDir, String serviceModel) throws IOException {
    return BenchModel.of(serviceModel, dataDir.resolve("models/demo-mlp/1/model.onnx"), Map.of(), "the demo MLP of partita local");
  }

  /** When a line containing {@code text} appeared in the log (System.nanoTime), looked at every second up to {@code within}; -1 if not. */
  private static long awaitLogged(LocalProcess local, String text, long fromNanos, Duration within) throws InterruptedException {
    long end = fromNanos + within.toNanos();
    while (System.nanoTime() < end) {
      if (local.logged(text)) {
        return System.nanoTime();
      }
      TimeUnit.SECONDS.sleep(1); // the log is a file: looked at once a second, the figure is to the second
    }
    return -1;
  }

  /** Waits for a point of the experiment's schedule (a time, not an event: nothing to be notified of). */
  private static void sleepUntil(long nanoTime) throws InterruptedException {
    long left;
    while ((left = nanoTime - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }

  /** {@code clients} threads calling one after another; every answer kept with its end time, for windows after the fact. */
  private static final class Load {
    private final HttpClient http;
    private final HttpRequest request;
    private final int clients;
    private final long zeroNanos;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<Thread> threads = new ArrayList<>();
    /** Per thread: {end nanos after zero, latency nanos, ok 1/0} triples. */
    private final List<long[][]> samples = new ArrayList<>();
    private final int[] counts;

    Load(HttpClient http, URI target, String body, int clients, long zeroNanos) {
      this.http = http;
      this.request = HttpRequest.newBuilder(target)
          .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
      this.clients = clients;
      this.zeroNanos = zeroNanos;
      this.counts = new int[clients];
    }

    void start() {
      for (int c = 0; c < clients; c++) {
        int lane = c;
        long[][] mine = {new long[3 << 14]};
        samples.add(mine);
        Thread t = new Thread(() -> loop(lane, mine), "first-minute-client-" + c);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
    }

    private void loop(int lane, long[][] mine) {
      while (running.get()) {
        long start = System.nanoTime();
        boolean ok;
        try {
          ok = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)).statusCode() == 200;
        } catch (IOException e) {
          ok = false;
        } catch (InterruptedException e) {
          return;
        }
        long end = System.nanoTime();
        int n = counts[lane];
        if (3 * n + 3 > mine[0].length) {
          mine[0] = Arrays.copyOf(mine[0], mine[0].length * 2);
        }
        mine[0][3 * n] = end - zeroNanos;
        mine[0][3 * n + 1] = end - start;
        mine[0][3 * n + 2] = ok ? 1 : 0;
        counts[lane] = n + 1;
      }
    }

    void stop() throws InterruptedException {
      running.set(false);
      for (Thread t : threads) {
        t.join(60_000);
      }
    }

    /** The calls that ended between {@code fromS} and {@code toS} after zero (after {@link #stop}). */
    Window window(double fromS, double toS) {
      long from = (long) (fromS * 1e9);
      long to = (long) (toS * 1e9);
      long answers = 0;
      long errors = 0;
      long[] latencies = new long[1024];
      for (int lane = 0; lane < clients; lane++) {
        long[] s = samples.get(lane)[0];
        for (int i = 0; i < counts[lane]; i++) {
          long end = s[3 * i];
          if (end < from || end >= to) {
            continue;
          }
          if (s[3 * i + 2] == 1) {
            if (answers == latencies.length) {
              latencies = Arrays.copyOf(latencies, latencies.length * 2);
            }
            latencies[(int) answers++] = s[3 * i + 1];
          } else {
            errors++;
          }
        }
      }
      return new Window(fromS, toS, answers, errors, answers == 0 ? null : LatencySummary.of(Arrays.copyOf(latencies, (int) answers)));
    }
  }
}
