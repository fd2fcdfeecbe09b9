package io.partita.launcher.cluster;

import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;

/**
 * What {@code up} waits for, with progress on standard error every few seconds (what is up, what
 * is still awaited): the brokers (each port open, then a Kafka admin client seeing all of them),
 * then every gateway ready ({@code /v2/health/ready} 200) and every service model of the repository
 * answering 200 through every gateway to one real infer built from its signature. A process that
 * exits meanwhile is started again, a few times ({@link #checkAlive}).
 */
final class Waiter {
  private static final long REPORT_EVERY_NANOS = 5_000_000_000L;

  /** How often a process that exits while the cluster starts is started again. */
  static final int MAX_RESTARTS = 3;

  ClusterState state;
  Duration firstAnswer;
  private final Map<String, Integer> restarts = new HashMap<>();
  private final Restarter restarter;
  private final PrintStream err;
  private final long started;
  private final long deadline;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private long lastReport;

  Waiter(ClusterState state, Restarter restarter, PrintStream err, long started, long deadline) {
    this.state = state;
    this.restarter = restarter;
    this.err = err;
    this.started = started;
    this.deadline = deadline;
    this.lastReport = System.nanoTime();
  }

  void awaitBrokers() throws InterruptedException {
    List<GroupRecord> brokers = state.groups(GroupKind.BROKER);
    while (true) {
      checkAlive();
      List<String> open = new ArrayList<>();
      List<String> closed = new ArrayList<>();
      for (GroupRecord b : brokers) {
        (portOpen(b.address(), b.port("client")) ? open : closed).add(b.name());
      }
      if (closed.isEmpty()) {
        int seen = brokersSeen();
        if (seen == brokers.size()) {
          say("brokers: all " + seen + " up, bootstrap=" + state.bootstrap());
          return;
        }
        progress("brokers: ports open on all " + brokers.size() + ", the cluster shows " + Math.max(0, seen) + " of them");
      } else {
        progress("brokers: listening " + (open.isEmpty() ? "none" : String.join(", ", open)) + "; waiting for " + String.join(", ", closed));
      }
      pause("the brokers");
    }
  }

  /** How many brokers a Kafka admin client sees; -1 when it cannot tell yet. */
  private int brokersSeen() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, state.bootstrap());
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "4000");
    try (Admin admin = Admin.create(p)) {
      return admin.describeCluster(new DescribeClusterOptions().timeoutMs(4000)).nodes().get(5, TimeUnit.SECONDS).size();
    } catch (Exception e) {
      return -1;
    }
  }

  void awaitModels(RepositoryIndex index) throws InterruptedException {
    Map<String, String> bodies = new LinkedHashMap<>();
    for (ServiceModelEntry s : index.serviceModels().values()) {
      bodies.put(s.name(), InferBodies.json(index.models().get(s.baseModel()).signature(), 1, Map.of(), 1));
    }
    List<GroupRecord> gateways = state.groups(GroupKind.GATEWAY);
    Map<String, String> answered = new LinkedHashMap<>(); // "gateway-1 demo" -> first 200 seen
    while (true) {
      checkAlive();
      List<String> waiting = new ArrayList<>();
      List<String> ready = new ArrayList<>();
      for (GroupRecord g : gateways) {
        String base = "http://" + g.address() + ":" + g.port("http");
        Answer health = get(base + "/v2/health/ready");
        if (health.status() != 200) {
          waiting.add(g.name() + " ready (" + shorten(health.toString()) + ")");
          continue;
        }
        ready.add(g.name());
        for (Map.Entry<String, String> model : bodies.entrySet()) {
          String key = g.name() + " " + model.getKey();
          if (answered.containsKey(key)) {
            continue;
          }
          Answer infer = post(base + "/v2/models/" + model.getKey() + "/infer", model.getValue());
          if (infer.status() == 200) {
            answered.put(key, "200");
            if (firstAnswer == null) {
              firstAnswer = Duration.ofNanos(System.nanoTime() - started);
              say(String.format(Locale.ROOT, "first 200: %s through %s after %.1f s", model.getKey(), g.name(), firstAnswer.toMillis() / 1000.0));
            }
          } else {
            waiting.add(model.getKey() + " through " + g.name() + " (" + shorten(infer.toString()) + ")");
          }
        }
      }
      if (waiting.isEmpty()) {
        return;
      }
      progress("gateways ready: " + (ready.isEmpty() ? "none" : String.join(", ", ready)) + "; " + answered.size() + " of "
          + gateways.size() * bodies.size() + " (model, gateway) pairs answered 200; waiting for "
          + String.join("; ", waiting.subList(0, Math.min(3, waiting.size())))
          + (waiting.size() > 3 ? " and " + (waiting.size() - 3) + " more" : ""));
      pause("every model to answer through every gateway");
    }
  }

  /**
   * Starts a process that exited again, up to {@link #MAX_RESTARTS} times, as compose's restart
   * policy does: a service stops loudly on a fault it cannot ride out (a broker that does not
   * answer within {@code kafka.default.api.timeout.ms} while a dozen JVMs start on two cores), and
   * is meant to be restarted. A process that keeps exiting fails the wait, with the end of its log.
   */
  private void checkAlive() {
    for (ProcessRecord p : state.processes()) {
      if (p.pid() > 0 && !Procs.alive(p.pid(), state.names().mark())) {
        int n = restarts.merge(p.name(), 1, Integer::sum);
        if (n > MAX_RESTARTS) {
          throw new IllegalStateException(p.name() + " (pid " + p.pid() + ") exited while the cluster was starting"
              + " (started again " + MAX_RESTARTS + " times); the end of " + p.log() + ":" + System.lineSeparator()
              + Procs.tail(p.log(), 15));
        }
        say(p.name() + " (pid " + p.pid() + ") exited: " + shorten(Procs.tail(p.log(), 1)) + "; starting it again ("
            + n + " of " + MAX_RESTARTS + ")");
        try {
          state = restarter.restart(state, p);
        } catch (IOException e) {
          throw new IllegalStateException("cannot start " + p.name() + " again: " + e.getMessage(), e);
        }
      }
    }
  }

  /** Starts one process of the cluster again; returns the state with its new pid. */
  interface Restarter {
    ClusterState restart(ClusterState state, ProcessRecord process) throws IOException;
  }

  private void pause(String what) throws InterruptedException {
    if (System.nanoTime() > deadline) {
      throw new IllegalStateException("timed out after " + Duration.ofNanos(System.nanoTime() - started).toSeconds()
          + " s waiting for " + what + " (raise --timeout; the logs are in " + Path.of(state.dir(), "logs") + ")");
    }
    // Readiness is asked of other processes over HTTP and Kafka, which notify nothing: a probe
    // every 500 ms keeps up with a start-up of tens of seconds without loading the infra core.
    Thread.sleep(500);
  }

  private void progress(String line) {
    if (System.nanoTime() - lastReport >= REPORT_EVERY_NANOS) {
      say(line);
    }
  }

  private void say(String line) {
    lastReport = System.nanoTime();
    err.printf(Locale.ROOT, "[%5.1f s] %s%n", (System.nanoTime() - started) / 1e9, line);
  }

  /** An answer cut to fit a progress line. */
  private static String shorten(String text) {
    return text.length() <= 90 ? text : text.substring(0, 87) + "...";
  }

  private static boolean portOpen(String host, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 1000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** An HTTP status with the start of its body, or 0 and why there was none. */
  record Answer(int status, String text) {
    @Override
    public String toString() {
      return status == 0 ? text : status + (text.isBlank() ? "" : " " + text);
    }
  }

  private Answer get(String url) {
    return send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build());
  }

  private Answer post(String url, String body) {
    return send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build());
  }

  private Answer send(HttpRequest request) {
    try {
      HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
      String text = r.body() == null ? "" : r.body().strip().replaceAll("\\s+", " ");
      return new Answer(r.statusCode(), r.statusCode() == 200 ? "" : text.substring(0, Math.min(120, text.length())));
    } catch (IOException e) {
      return new Answer(0, "no answer: " + e.getClass().getSimpleName());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Answer(0, "interrupted");
    }
  }
}
