package io.partita.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.bench.OpenLoad.Caller;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.kafka.KafkaClients;
import io.partita.launcher.cluster.Cluster;
import io.partita.models.demo.DemoMlp;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * The faults a cluster meets, each injected through {@code partita cluster fault} while open-loop
 * load runs from a Kafka client and over HTTP and gRPC through both gateways: a quiet lead-in, the
 * fault, its end (the target resumed, healed, restored or started again), and a tail. What each
 * fault did to the calls ({@link Result}): sent, answered OK, answered with an error by code, lost,
 * duplicates, how long until the answers per second were back, latency during and after. The
 * {@code faults} benchmark prints them; the cluster tests' {@code ManyHostsIT} holds them to what Partita
 * promises.
 */
public final class FaultSuite {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The faults, as the reliability table names them. */
  public enum Fault {
    HOST_KILL("kill -9 a worker host (worker and profiler), started again after the fault"),
    HOST_PAUSE("pause a worker host (cgroup freezer), then resume it"),
    HOST_PARTITION("cut a worker host's network link, then heal it"),
    HOST_SLOW("slow a worker host to a tenth of its CPU quota, then restore it"),
    BROKER_REQUESTS("kill -9 the broker leading most request partitions, started again after the fault"),
    BROKER_REPLIES("kill -9 the broker leading the gateways' reply topic, started again after the fault"),
    PLANNER_ACTIVE("kill -9 the active planner just after a model is added to the catalog, started again after the fault"),
    GATEWAY("kill -9 the gateway running a batch job while online calls flow, started again after the fault");

    private final String what;

    Fault(String what) {
      this.what = what;
    }

    public String what() {
      return what;
    }
  }

  /**
   * How long each part of a fault's run lasts, and the load. The slowed host's fault and the time
   * after it last at least {@link #SLOW_PHASE} each ({@link #of}): its share is read from two
   * serving windows into each.
   */
  public record Timing(Duration before, Duration fault, Duration after, double loadShare) {
    public static final Timing FULL = new Timing(Duration.ofSeconds(20), Duration.ofSeconds(60), Duration.ofSeconds(60), 0.4);

    long faultAtS() {
      return before.toSeconds();
    }

    long endAtS() {
      return before.toSeconds() + fault.toSeconds();
    }

    Duration total() {
      return before.plus(fault).plus(after);
    }

    /** The timing of one fault's run: the slowed host's phases lengthened to {@link #SLOW_PHASE}. */
    Timing of(Fault f) {
      if (f != Fault.HOST_SLOW) {
        return this;
      }
      return new Timing(before, longest(fault, SLOW_PHASE), longest(after, SLOW_PHASE), loadShare);
    }

    private static Duration longest(Duration a, Duration b) {
      return a.compareTo(b) >= 0 ? a : b;
    }
  }

  /**
   * The window of serving evidence a slot reports ({@code ServingWindow.DEFAULT_WINDOW_MS}). The
   * planner uses each window once, so a slowed host's figure moves at most once per window: the
   * first window after the slowing (or the restore) still holds runs from before it, the second
   * shows it whole.
   */
  static final Duration SERVING_WINDOW = Duration.ofSeconds(30);
  /** The slowed host's share is read from {@code 2 x SERVING_WINDOW} into the fault and after the restore, for 30 s. */
  static final Duration SLOW_SHARE_FROM = SERVING_WINDOW.multipliedBy(2);
  static final Duration SLOW_PHASE = SLOW_SHARE_FROM.plusSeconds(30);

  /**
   * What one fault did.
   *
   * @param target what the fault hit ({@code host-2}, {@code broker-1}, ...)
   * @param rate the offered load, calls per second
   * @param replyDuplicates replies written more than once for one request on the reply topics read (a
   *     request answered twice: by a worker that was paused or cut off and by its partitions' next owner)
   * @param clientDuplicatesDropped duplicate replies the Kafka client dropped (they never reached a caller)
   * @param deliveredTwice answers the Kafka client handed to a caller for a call it had already answered
   * @param retriedOnAnotherGateway HTTP and gRPC calls sent again to the other gateway (theirs unreachable)
   * @param recoverySeconds from the fault until the OK answers per second are back within 10 % of before; -1 never
   * @param note what else the fault shows (the batch job's rows, when the added model was placed, the
   *     slowed host's share)
   * @param checks named facts for the tests (e.g. {@code jobRowsWithOneResult}, {@code modelPlacedAfterMs})
   */
  public record Result(Fault fault, String target, double rate, Calls calls, long replyDuplicates, long clientDuplicatesDropped,
      long deliveredTwice, long retriedOnAnotherGateway, int recoverySeconds, double p50During, double p99During, double p50After, double p99After,
      String note, Map<String, Long> checks) {}

  private final ManyHosts cluster;
  private final Timing timing;
  private final double capacity;
  private final String host;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /**
   * @param capacity the cluster's measured capacity for the demo model (calls per second); the load
   *     runs at {@code timing.loadShare()} of it
   * @param host the worker host the host faults hit
   */
  public FaultSuite(ManyHosts cluster, Timing timing, double capacity, String host) {
    this.cluster = cluster;
    this.timing = timing;
    this.capacity = capacity;
    this.host = host;
  }

  /** Runs one fault under load and says what it did. */
  public Result run(Fault fault) throws Exception {
    Timing timing = this.timing.of(fault);
    double rate = timing.loadShare() * capacity;
    // The gateway answers 504 at its deadline (30 s): the client waits longer, so a late call shows as that answer.
    Callers.Http httpCaller = new Callers.Http(http, cluster.gateways(), ManyHosts.LOAD_SERVICE_MODEL, ManyHosts.demoBody(3),
        Duration.ofSeconds(45));
    Callers.Grpc grpcCaller = new Callers.Grpc(cluster.grpcTargets(), ManyHosts.LOAD_SERVICE_MODEL, ManyHosts.demoRow(3).get(0),
        Duration.ofSeconds(30));
    Map<String, Caller> callers = new LinkedHashMap<>();
    callers.put("kafka", Callers.kafka(cluster.client(), ManyHosts.LOAD_MODEL, ManyHosts.LOAD_SERVICE_MODEL, ManyHosts.demoRow(3)));
    callers.put("http", httpCaller);
    callers.put("grpc", grpcCaller);
    long droppedBefore = cluster.client().duplicatesDropped();
    long twiceBefore = cluster.deliveredTwice();
    long startMs = System.currentTimeMillis();
    Injection injection = injection(fault);
    List<Throwable> failures = new ArrayList<>();
    LongConsumer steps = second -> {
      if (second == timing.faultAtS()) {
        async(injection::start, failures);
      } else if (second == timing.endAtS()) {
        async(injection::end, failures);
      }
    };
    Calls calls;
    try {
      calls = OpenLoad.run(callers, rate, timing.total(), Duration.ofSeconds(60), steps);
    } finally {
      grpcCaller.close();
    }
    injection.awaitDone();
    if (!failures.isEmpty()) {
      throw new IllegalStateException("injecting " + fault + " failed: " + failures.get(0), failures.get(0));
    }
    int f = (int) timing.faultAtS();
    int e = (int) timing.endAtS();
    int end = (int) timing.total().toSeconds();
    double baseline = calls.okRate(Math.min(5, f), f);
    String note = injection.note(calls); // before the checks are copied: a note may add to them
    Map<String, Long> checks = new LinkedHashMap<>(injection.checks());
    return new Result(fault, injection.target(), rate, calls, replyDuplicates(startMs), cluster.client().duplicatesDropped() - droppedBefore,
        cluster.deliveredTwice() - twiceBefore, httpCaller.retries() + grpcCaller.retries(), calls.recoverySeconds(f, baseline, 0.1, 5),
        calls.okLatencyMs(50, f, e), calls.okLatencyMs(99, f, e), calls.okLatencyMs(50, e, end), calls.okLatencyMs(99, e, end),
        note, checks);
  }

  /**
   * A soak: one open-loop load for {@code length} with a fault drawn at random (from {@code seed})
   * every two minutes: injected 30 s into its period, ended 60 s later. The planner and gateway
   * faults are left out (they add a model or run a job each time); every other fault can be drawn.
   *
   * @param onFault told each fault drawn, with the second it starts at
   */
  public SoakResult soak(Duration length, long seed, BiConsumer<Long, Fault> onFault) throws Exception {
    Random random = new Random(seed);
    long droppedBefore = cluster.client().duplicatesDropped();
    long twiceBefore = cluster.deliveredTwice();
    long startMs = System.currentTimeMillis();
    List<Fault> drawable = List.of(Fault.HOST_KILL, Fault.HOST_PAUSE, Fault.HOST_PARTITION, Fault.HOST_SLOW,
        Fault.BROKER_REQUESTS, Fault.BROKER_REPLIES);
    Map<Long, Injection> running = new ConcurrentHashMap<>();
    List<Throwable> failures = new ArrayList<>();
    Callers.Grpc grpcCaller = new Callers.Grpc(cluster.grpcTargets(), ManyHosts.LOAD_SERVICE_MODEL, ManyHosts.demoRow(5).get(0),
        Duration.ofSeconds(30));
    Map<String, Caller> callers = new LinkedHashMap<>();
    callers.put("kafka", Callers.kafka(cluster.client(), ManyHosts.LOAD_MODEL, ManyHosts.LOAD_SERVICE_MODEL, ManyHosts.demoRow(5)));
    Callers.Http httpCaller = new Callers.Http(http, cluster.gateways(), ManyHosts.LOAD_SERVICE_MODEL, ManyHosts.demoBody(5),
        Duration.ofSeconds(30));
    callers.put("http", httpCaller);
    callers.put("grpc", grpcCaller);
    Calls calls;
    try {
      calls = OpenLoad.run(callers, timing.loadShare() * capacity, length, Duration.ofSeconds(60), second -> {
        long inPeriod = second % 120;
        if (inPeriod == 30 && second + 90 <= length.toSeconds()) {
          Fault fault = drawable.get(random.nextInt(drawable.size()));
          onFault.accept(second, fault);
          try {
            Injection injection = injection(fault);
            running.put(second / 120, injection);
            async(injection::start, failures);
          } catch (Exception e) {
            failures.add(e);
          }
        } else if (inPeriod == 90) {
          Injection injection = running.remove(second / 120);
          if (injection != null) {
            async(injection::end, failures);
          }
        }
      });
    } finally {
      grpcCaller.close();
      if (!failures.isEmpty()) {
        throw new IllegalStateException("a soak fault failed: " + failures.get(0), failures.get(0));
      }
    }
    return new SoakResult(calls, replyDuplicates(startMs), cluster.client().duplicatesDropped() - droppedBefore,
        cluster.deliveredTwice() - twiceBefore, httpCaller.retries() + grpcCaller.retries());
  }

  /**
   * A soak's figures, the fault table's columns summed over it: the calls, replies written twice on
   * the reply topics, duplicates the Kafka client dropped, answers handed to a caller twice (must be
   * 0), and calls retried on the other gateway.
   */
  public record SoakResult(Calls calls, long replyDuplicates, long clientDuplicatesDropped, long deliveredTwice,
      long retriedOnOtherGateway) {}

  private static void async(ThrowingRunnable step, List<Throwable> failures) {
    CompletableFuture.runAsync(() -> {
      try {
        step.run();
      } catch (Exception ex) {
        synchronized (failures) {
          failures.add(ex);
        }
      }
    });
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  /** How a fault is started and ended, and what it notes. */
  private abstract static class Injection {
    private final CompletableFuture<Void> started = new CompletableFuture<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    final Map<String, Long> checks = new TreeMap<>();

    abstract String target();

    abstract void inject() throws Exception;

    abstract void recover() throws Exception;

    void start() throws Exception {
      try {
        inject();
      } finally {
        started.complete(null);
      }
    }

    /** Ends the fault, after its start: a start that took longer than the fault's phase is not undone before it happened. */
    void end() throws Exception {
      try {
        started.get(5, TimeUnit.MINUTES);
        recover();
      } finally {
        done.complete(null);
      }
    }

    void awaitDone() throws Exception {
      done.get(5, TimeUnit.MINUTES);
      after();
    }

    /** Work after the load ended (e.g. waiting for a job to finish). */
    void after() throws Exception {}

    String note(Calls calls) {
      return "";
    }

    Map<String, Long> checks() {
      return checks;
    }
  }

  private Injection injection(Fault fault) throws Exception {
    return switch (fault) {
      case HOST_KILL -> simple(host, Cluster.Fault.KILL, Cluster.Fault.START, null);
      case HOST_PAUSE -> simple(host, Cluster.Fault.PAUSE, Cluster.Fault.RESUME, null);
      case HOST_PARTITION -> simple(host, Cluster.Fault.PARTITION, Cluster.Fault.HEAL, null);
      case HOST_SLOW -> slow();
      case BROKER_REQUESTS -> simple(leaderOf(new Topics(cluster.topicPrefix()).requests(ManyHosts.LOAD_MODEL)),
          Cluster.Fault.KILL, Cluster.Fault.START, null);
      case BROKER_REPLIES -> simple(leaderOf(new Topics(cluster.topicPrefix()).replies(cluster.gatewayIds().get(0))),
          Cluster.Fault.KILL, Cluster.Fault.START, null);
      case PLANNER_ACTIVE -> planner();
      case GATEWAY -> gateway();
    };
  }

  private Injection simple(String target, Cluster.Fault in, Cluster.Fault out, Double cpus) {
    return new Injection() {
      @Override
      String target() {
        return target;
      }

      @Override
      void inject() throws Exception {
        cluster.fault(in, target, cpus);
      }

      @Override
      void recover() throws Exception {
        cluster.fault(out, target, null);
      }
    };
  }

  /** The host at a tenth of its quota; notes its share of the answers before, late in the fault, and after. */
  private Injection slow() throws IOException {
    double quota = cluster.quota(host);
    return new Injection() {
      @Override
      String target() {
        return host;
      }

      @Override
      void inject() throws Exception {
        cluster.fault(Cluster.Fault.SLOW, host, quota / 10);
      }

      @Override
      void recover() throws Exception {
        cluster.fault(Cluster.Fault.RESTORE, host, null);
      }

      @Override
      String note(Calls calls) {
        Timing t = timing.of(Fault.HOST_SLOW);
        long f = t.faultAtS();
        long e = t.endAtS();
        double before = calls.sentBetween(0, f).share(host);
        double late = calls.sentBetween(f + SLOW_SHARE_FROM.toSeconds(), e).share(host);
        double after = calls.sentBetween(e + SLOW_SHARE_FROM.toSeconds(), t.total().toSeconds()).share(host);
        checks.put("sharePerMilleBefore", Math.round(before * 1000));
        checks.put("sharePerMilleLateInFault", Math.round(late * 1000));
        checks.put("sharePerMilleAfter", Math.round(after * 1000));
        return String.format(Locale.ROOT, "%s's share of the answers: %.2f before, %.2f from %d s into the fault,"
            + " %.2f from %d s after the restore", host, before, late, SLOW_SHARE_FROM.toSeconds(), after,
            SLOW_SHARE_FROM.toSeconds());
      }
    };
  }

  /** Copies a new model into the repository, then kills the planner running the plan's tasks. */
  private Injection planner() throws Exception {
    String model = "extra-mlp-" + Long.toString(System.currentTimeMillis() % 100_000, 36);
    String[] target = new String[1];
    long[] addedAt = new long[1];
    return new Injection() {
      @Override
      String target() {
        return target[0] == null ? "the active planner" : target[0];
      }

      @Override
      void inject() throws Exception {
        target[0] = activePlanner();
        Path dir = cluster.modelRepo().resolve(model).resolve("1");
        Files.createDirectories(dir.getParent());
        Path tmp = Files.createTempDirectory(cluster.modelRepo(), ".adding-");
        Files.createDirectories(tmp.resolve("1"));
        Files.write(tmp.resolve("1").resolve("model.onnx"), DemoMlp.modelBytes(DemoMlp.VERSION_FP32));
        Files.delete(dir.getParent());
        Files.move(tmp, dir.getParent()); // the model appears whole, as a deployment tool would place it
        addedAt[0] = System.nanoTime();
        cluster.fault(Cluster.Fault.KILL, target[0], null);
        placed = CompletableFuture.supplyAsync(() -> {
          try {
            cluster.await("the added model " + model + " placed in the plan", Duration.ofMinutes(4),
                s -> s.assignments().values().stream().anyMatch(a -> a.getModel().equals(model)));
            return (System.nanoTime() - addedAt[0]) / 1_000_000;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1L;
          }
        });
      }

      private CompletableFuture<Long> placed = CompletableFuture.completedFuture(-1L);

      @Override
      void recover() throws Exception {
        cluster.fault(Cluster.Fault.START, target[0], null);
      }

      @Override
      void after() throws Exception {
        checks.put("modelPlacedAfterMs", placed.get(5, TimeUnit.MINUTES));
        HttpResponse<String> answer = awaitAnswer(model);
        checks.put("addedModelAnswered", answer != null && answer.statusCode() == 200 ? 1L : 0L);
      }

      @Override
      String note(Calls calls) {
        long ms = checks.getOrDefault("modelPlacedAfterMs", -1L);
        return "model " + model + " added to the repository, then " + target[0] + " (running the plan's tasks) killed: the"
            + " model was " + (ms < 0 ? "not placed" : "placed in the plan " + Report.fmt(ms / 1000.0) + " s after it was added")
            + (checks.getOrDefault("addedModelAnswered", 0L) == 1 ? " and answered" : ", not answered");
      }
    };
  }

  /** Submits a batch job to the gateway that runs jobs, then kills that gateway while it runs the job. */
  private Injection gateway() throws Exception {
    int rows = 20_000;
    String[] target = new String[1];
    String[] job = new String[1];
    Map<String, Integer> failures = new TreeMap<>();
    return new Injection() {
      @Override
      String target() {
        return target[0] == null ? "the gateway running the job" : target[0];
      }

      @Override
      void inject() throws Exception {
        job[0] = submitJob(rows);
        target[0] = awaitRunner(job[0]);
        cluster.fault(Cluster.Fault.KILL, target[0], null);
      }

      @Override
      void recover() throws Exception {
        cluster.fault(Cluster.Fault.START, target[0], null);
      }

      @Override
      void after() throws Exception {
        JsonNode status = awaitJobEnd(job[0], Duration.ofMinutes(5));
        Map<Long, Integer> perIndex = new HashMap<>();
        long ok = 0;
        for (String line : results(job[0])) {
          JsonNode r = JSON.readTree(line);
          perIndex.merge(r.get("index").asLong(), 1, Integer::sum);
          if (r.get("outputs") != null) {
            ok++;
          } else {
            failures.merge(r.path("code").asText("?") + " (" + r.path("error").asText("") + ")", 1, Integer::sum);
          }
        }
        checks.put("jobRows", (long) rows);
        checks.put("jobRowsWithOneResult", perIndex.values().stream().filter(n -> n == 1).count());
        checks.put("jobRowsWithSeveralResults", perIndex.values().stream().filter(n -> n > 1).count());
        checks.put("jobRowsOk", ok);
        checks.put("jobDone", "DONE".equals(status.path("state").asText()) ? 1L : 0L);
      }

      @Override
      String note(Calls calls) {
        return "job " + job[0] + " of " + rows + " rows ran on " + target[0] + " when it was killed: "
            + checks.getOrDefault("jobRowsWithOneResult", -1L) + " rows with exactly one result, "
            + checks.getOrDefault("jobRowsWithSeveralResults", -1L) + " with several, " + checks.getOrDefault("jobRowsOk", -1L) + " OK"
            + (failures.isEmpty() ? "" : "; failed rows by error: " + failures);
      }
    };
  }

  // --- finding what to hit ---

  private Admin admin() {
    return Admin.create(KafkaClients.base(cluster.bootstrap(), new Properties()));
  }

  /** The broker leading most partitions of {@code topic}, as {@code broker-N}. */
  private String leaderOf(String topic) throws Exception {
    try (Admin admin = admin()) {
      TopicDescription d = admin.describeTopics(Set.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
      Map<Integer, Integer> led = new TreeMap<>();
      for (TopicPartitionInfo p : d.partitions()) {
        if (p.leader() != null) {
          led.merge(p.leader().id(), 1, Integer::sum);
        }
      }
      int node = led.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
      return "broker-" + node;
    }
  }

  /**
   * The planner whose Streams consumer holds the input partitions (the active tasks), as
   * {@code planner-N}. Asked again for up to {@link #FIND_PLANNER}: right after a broker fault the
   * group's coordinator may still be moving (a describe that times out) or the group rebalancing
   * (no member holding the tasks).
   */
  private String activePlanner() throws Exception {
    String group = cluster.topicPrefix() + "-planner";
    long end = System.nanoTime() + FIND_PLANNER.toNanos();
    String last;
    try (Admin admin = admin()) {
      while (true) {
        try {
          ConsumerGroupDescription d = admin.describeConsumerGroups(Set.of(group)).all().get(20, TimeUnit.SECONDS).get(group);
          for (MemberDescription m : d.members()) {
            if (!m.assignment().topicPartitions().isEmpty() && m.groupInstanceId().isPresent()) {
              String id = m.groupInstanceId().get();
              return id.substring(0, id.indexOf('-', "planner-".length()) < 0 ? id.length() : id.indexOf('-', "planner-".length()));
            }
          }
          last = "no member holds the planner's tasks: " + d.members();
        } catch (TimeoutException | ExecutionException e) {
          last = "describing the group failed: " + e;
        }
        if (System.nanoTime() > end) {
          throw new IllegalStateException("no active planner in " + group + " found within " + FIND_PLANNER.toSeconds() + " s; " + last);
        }
        TimeUnit.SECONDS.sleep(2);
      }
    }
  }

  private static final Duration FIND_PLANNER = Duration.ofSeconds(90);

  // --- batch jobs over HTTP ---

  /** The first answer from any gateway, tried in turn, that {@code accept} takes; null when none did. */
  private HttpResponse<String> anyGateway(Function<URI, HttpRequest> request,
      Predicate<HttpResponse<String>> accept) throws InterruptedException {
    HttpResponse<String> last = null;
    for (URI g : cluster.gateways()) {
      try {
        last = http.send(request.apply(g), HttpResponse.BodyHandlers.ofString());
        if (accept.test(last)) {
          return last;
        }
      } catch (IOException e) {
        // that gateway is down: the next one
      }
    }
    return null;
  }

  private String submitJob(int rows) throws Exception {
    StringBuilder body = new StringBuilder();
    for (int i = 0; i < rows; i++) {
      body.append(new String(ManyHosts.demoBody(i), StandardCharsets.UTF_8)).append('\n');
    }
    HttpResponse<String> r = anyGateway(g -> HttpRequest.newBuilder(g.resolve("/v2/jobs?model=" + ManyHosts.LOAD_SERVICE_MODEL))
        .POST(HttpRequest.BodyPublishers.ofString(body.toString())).timeout(Duration.ofSeconds(60)).build(),
        a -> a.statusCode() / 100 == 2);
    if (r == null) {
      throw new IllegalStateException("no gateway took the job");
    }
    return JSON.readTree(r.body()).get("id").asText();
  }

  private JsonNode jobStatus(String id) throws Exception {
    HttpResponse<String> r = anyGateway(g -> HttpRequest.newBuilder(g.resolve("/v2/jobs/" + id)).timeout(Duration.ofSeconds(10)).build(),
        a -> a.statusCode() == 200);
    if (r == null) {
      throw new IllegalStateException("no gateway answered the status of job " + id);
    }
    return JSON.readTree(r.body());
  }

  /** The gateway running the job once it runs, as {@code gateway-N}. */
  private String awaitRunner(String id) throws Exception {
    long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < end) {
      JsonNode s = jobStatus(id);
      String runner = s.path("runner").asText("");
      if (s.path("state").asText().equals("RUNNING") && cluster.gatewayIds().contains(runner)) {
        return runner;
      }
      TimeUnit.MILLISECONDS.sleep(200);
    }
    throw new IllegalStateException("job " + id + " did not start running within 60 s: " + jobStatus(id));
  }

  private JsonNode awaitJobEnd(String id, Duration timeout) throws Exception {
    long end = System.nanoTime() + timeout.toNanos();
    while (true) {
      JsonNode s = jobStatus(id);
      if (s.path("state").asText().matches("DONE|FAILED|CANCELLED")) {
        return s;
      }
      if (System.nanoTime() > end) {
        throw new IllegalStateException("job " + id + " did not end within " + timeout.toSeconds() + " s: " + s);
      }
      TimeUnit.SECONDS.sleep(1);
    }
  }

  private List<String> results(String id) throws Exception {
    HttpResponse<String> r = anyGateway(g -> HttpRequest.newBuilder(g.resolve("/v2/jobs/" + id + "/results"))
        .timeout(Duration.ofSeconds(60)).build(), a -> a.statusCode() == 200);
    if (r == null) {
      throw new IllegalStateException("no gateway gave the results of job " + id);
    }
    return r.body().lines().filter(l -> !l.isBlank()).toList();
  }

  /** An answer of the model through any gateway (200), waiting up to two minutes; the last answer, or null. */
  private HttpResponse<String> awaitAnswer(String model) throws Exception {
    long end = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (System.nanoTime() < end) {
      HttpResponse<String> r = anyGateway(g -> HttpRequest.newBuilder(g.resolve("/v2/models/" + model + "/infer"))
          .POST(HttpRequest.BodyPublishers.ofByteArray(ManyHosts.demoBody(1))).timeout(Duration.ofSeconds(10)).build(),
          a -> a.statusCode() == 200);
      if (r != null) {
        return r;
      }
      TimeUnit.SECONDS.sleep(2);
    }
    return null;
  }

  // --- duplicates on the reply topics ---

  /** Replies written more than once for one request id since {@code sinceMs}, over every reply topic. */
  private long replyDuplicates(long sinceMs) throws Exception {
    List<String> topics = new ArrayList<>();
    Topics t = new Topics(cluster.topicPrefix());
    topics.add(cluster.client().replyTopic());
    cluster.gatewayIds().forEach(g -> topics.add(t.replies(g)));
    Map<String, Integer> seen = new HashMap<>();
    Properties p = KafkaClients.consumer(cluster.bootstrap(), new Properties());
    try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (String topic : topics) {
        consumer.partitionsFor(topic, Duration.ofSeconds(30)).forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
      }
      consumer.assign(partitions);
      Map<TopicPartition, Long> starts = new HashMap<>();
      consumer.offsetsForTimes(partitions.stream().collect(Collectors.toMap(tp -> tp, tp -> sinceMs)))
          .forEach((tp, o) -> starts.put(tp, o == null ? -1 : o.offset()));
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      for (TopicPartition tp : partitions) {
        if (starts.get(tp) < 0) {
          consumer.seek(tp, ends.get(tp));
        } else {
          consumer.seek(tp, starts.get(tp));
        }
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
          String id = KafkaHeaders.get(r.headers(), KafkaHeaders.CORRELATION_ID);
          seen.merge(r.topic() + "/" + (id != null ? id : r.key()), 1, Integer::sum);
        }
      }
    }
    return seen.values().stream().filter(n -> n > 1).mapToLong(n -> n - 1).sum();
  }

  /** The results, as a table's rows (one per fault). */
  public static List<String> row(Result r) {
    List<String> row = new ArrayList<>();
    SortedMap<String, Long> errors = r.calls().errors();
    row.add(r.fault().name().toLowerCase(Locale.ROOT).replace('_', ' '));
    row.add(r.target());
    row.add(Report.fmt(r.rate()));
    row.add(Long.toString(r.calls().sent()));
    row.add(Long.toString(r.calls().ok()));
    StringBuilder e = new StringBuilder(errors.isEmpty() ? "0" : errors.toString());
    for (String code : errors.keySet()) {
      if (code.equals("FAILED") || code.equals("TIMEOUT") || code.equals("CONNECTION")) {
        e.append("; ").append(code).append(": ").append(r.calls().firstDetail(code));
      }
    }
    row.add(e.toString());
    row.add(Long.toString(r.calls().lost()));
    row.add(Long.toString(r.replyDuplicates()));
    row.add(r.deliveredTwice() + " (" + r.clientDuplicatesDropped() + " dropped)");
    row.add(Long.toString(r.retriedOnAnotherGateway()));
    row.add(r.recoverySeconds() < 0 ? "not in the run" : Integer.toString(r.recoverySeconds()));
    row.add(Report.fmt(r.p50During()) + " / " + Report.fmt(r.p99During()));
    row.add(Report.fmt(r.p50After()) + " / " + Report.fmt(r.p99After()));
    row.add((r.note().isEmpty() ? "" : r.note() + "; ") + "OK answers by caller and host " + r.calls().okByCallerAndHost());
    return row;
  }

  public static final List<String> COLUMNS = List.of("fault", "target", "offered/s", "sent", "OK", "errors by code", "lost",
      "reply duplicates", "duplicates to callers", "retried on the other gateway", "s to throughput back",
      "p50 / p99 ms during", "p50 / p99 ms after", "notes");
}
