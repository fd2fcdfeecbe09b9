package io.partita.bench;

import io.partita.avro.Tensor;
import io.partita.client.PartitaClient;
import io.partita.models.repo.Sha256;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * Requests spread over many service models (LoRA weight files) of one base model against all on
 * one, through Kafka (Java client) and through HTTP (gateway), one worker slot with dynamic
 * batching. Each row prints the broker's partition count of the request topics, which must not
 * grow with service models (one topic per base model). A targeted run:
 *
 * <pre>
 * ./mvnw -B -o -q -pl bench -am compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp
 * CLASSPATH="bench/target/classes:$(cat /tmp/cp)" java io.partita.bench.WeightSpreadBench \
 *     /tmp/bench-weights 16 256 3 10 100 1000
 * </pre>
 * (the class path goes through the environment: ONNX Runtime crashes on a command line over 4 KiB).
 * arguments: work dir, clients, requests in flight (0: none), warm-up s, measured s, then the spreads
 * (1 is always measured first).
 */
public final class WeightSpreadBench {
  static final int WIDTH = 512;
  static final int RANK = 16;
  static final String BASE = "lora";

  private WeightSpreadBench() {}

  /** One row: path, service models spread over, the load, throughput, latency, ratio to all-on-one, partitions. */
  record Row(String path, int spread, String load, LoadRunner.Result result, double vsOne, int partitions) {}

  /**
   * Runs every spread at two loads: a closed loop of {@code clients} threads, and {@code inFlight}
   * requests kept outstanding from one caller (skipped when 0). "vs one" compares with all on one
   * service model on the same path at the same load.
   */
  static List<Row> run(Path workDir, List<Integer> spreads, int clients, int inFlight, Duration warmup, Duration measured,
      Map<String, String> workerSettings) throws Exception {
    int files = spreads.stream().mapToInt(Integer::intValue).max().orElse(1);
    Path dir = Files.createTempDirectory(workDir, "weights");
    Path repo = dir.resolve("repo");
    Path version = repo.resolve(BASE).resolve("1");
    Files.createDirectories(version);
    Files.write(version.resolve("model.onnx"), LoraModels.base(WIDTH));
    Files.createDirectories(repo.resolve(BASE + "/adapters"));
    StringBuilder manifest = new StringBuilder("serviceModels:\n");
    List<String> names = new ArrayList<>();
    for (int i = 0; i < files; i++) {
      String name = String.format("lora-%04d", i);
      byte[] bytes = LoraModels.adapter(WIDTH, RANK, i);
      String rel = BASE + "/adapters/" + name + ".onnx_adapter";
      Files.write(repo.resolve(rel), bytes);
      manifest.append("  ").append(name).append(":\n    weightFile: ").append(rel)
          .append("\n    sha256: \"").append(Sha256.of(bytes)).append("\"\n");
      names.add(name);
    }
    Files.writeString(repo.resolve(BASE + "/model.yaml"), manifest.toString());
    BenchModel input = BenchModel.of(BASE, version.resolve("model.onnx"), Map.of(), "LoRA base");
    List<Row> rows = new ArrayList<>();
    try (PipelineEnv env = new PipelineEnv(dir, repo, workerSettings, 0);
         PartitaClient client = env.client();
         Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, env.kafka.bootstrapServers()))) {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      String inferUrl = "http://localhost:" + env.gateway.port() + "/v2/models/";
      List<Integer> order = new ArrayList<>(List.of(1));
      spreads.stream().filter(s -> s > 1).forEach(order::add);
      for (String path : List.of("Kafka", "HTTP")) {
        boolean kafka = path.equals("Kafka");
        double one = Double.NaN;
        for (int spread : order) {
          int[] next = new int[clients];
          LoadRunner.Result r = LoadRunner.run(clients, warmup, measured, 1, i -> {
            List<Tensor> inputs = List.of(input.wireInput(1, i));
            String body = input.jsonBody(1, i);
            return () -> {
              String name = names.get((next[i]++ * clients + i) % spread);
              (kafka ? kafkaCall(client, inputs, name) : httpCall(http, inferUrl, body, name)).get(60, TimeUnit.SECONDS);
            };
          });
          one = spread == 1 ? r.throughput() : one;
          rows.add(new Row(path, spread, clients + " clients", r, r.throughput() / one, requestPartitions(admin, env.prefix)));
        }
        if (inFlight == 0) {
          continue;
        }
        for (int spread : order) {
          // Inputs as the closed loop's: one per lane's worth, chosen round robin with the service model.
          List<List<Tensor>> inputs = new ArrayList<>();
          List<String> bodies = new ArrayList<>();
          for (int i = 0; i < clients; i++) {
            inputs.add(List.of(input.wireInput(1, i)));
            bodies.add(input.jsonBody(1, i));
          }
          AtomicLong calls = new AtomicLong();
          LoadRunner.Result r = LoadRunner.inFlight(inFlight, warmup, measured, () -> {
            long n = calls.getAndIncrement();
            String name = names.get((int) (n % spread));
            int which = (int) (n % inputs.size());
            return kafka ? kafkaCall(client, inputs.get(which), name) : httpCall(http, inferUrl, bodies.get(which), name);
          }, LoadRunner.Window.NONE);
          one = spread == 1 ? r.throughput() : one;
          rows.add(new Row(path, spread, inFlight + " in flight", r, r.throughput() / one, requestPartitions(admin, env.prefix)));
        }
      }
    }
    return rows;
  }

  /** One request through Kafka; completes exceptionally on an error reply. */
  private static CompletableFuture<?> kafkaCall(PartitaClient client, List<Tensor> inputs, String serviceModel) {
    return client.infer(BASE, serviceModel, inputs).thenApply(reply -> {
      if (reply.getError() != null) {
        throw new IllegalStateException(reply.getError().getCode() + ": " + reply.getError().getMessage());
      }
      return reply;
    });
  }

  /** One request through the gateway's HTTP API; completes exceptionally on any status but 200. */
  private static CompletableFuture<?> httpCall(HttpClient http, String inferUrl, String body, String serviceModel) {
    HttpRequest request = HttpRequest.newBuilder(URI.create(inferUrl + serviceModel + "/infer"))
        .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)).thenApply(response -> {
      if (response.statusCode() != 200) {
        throw new IllegalStateException("HTTP " + response.statusCode() + ": " + response.body());
      }
      return response;
    });
  }

  /** Partitions of every request topic on the broker, summed. */
  static int requestPartitions(Admin admin, String prefix) throws Exception {
    List<String> topics = admin.listTopics().names().get(30, TimeUnit.SECONDS).stream()
        .filter(t -> t.startsWith(prefix + ".requests.")).toList();
    return admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).values().stream()
        .mapToInt(d -> d.partitions().size()).sum();
  }

  /** A targeted run: {@code <work dir> <clients> <in flight> <warm-up s> <measured s> <spread>...}; prints one line per row. */
  public static void main(String[] args) throws Exception {
    Path work = Path.of(args[0]).toAbsolutePath();
    Files.createDirectories(work);
    int clients = Integer.parseInt(args[1]);
    int inFlight = Integer.parseInt(args[2]);
    Duration warmup = Duration.ofSeconds(Long.parseLong(args[3]));
    Duration measured = Duration.ofSeconds(Long.parseLong(args[4]));
    List<Integer> spreads = new ArrayList<>();
    for (int i = 5; i < args.length; i++) {
      spreads.add(Integer.parseInt(args[i]));
    }
    for (Row r : run(work, spreads, clients, inFlight, warmup, measured, Map.of("worker.batch.max", "8", "worker.batch.delay.ms", "2"))) {
      System.out.printf("%-5s spread=%-5d load=%s items/s=%.0f p50=%.2fms p99=%.2fms errors=%d vs-one=%.2f request-partitions=%d%n",
          r.path(), r.spread(), r.load(), r.result().throughput(), r.result().latency() == null ? Double.NaN : r.result().latency().p50Nanos() / 1e6,
          r.result().latency() == null ? Double.NaN : r.result().latency().p99Nanos() / 1e6, r.result().errors(), r.vsOne(), r.partitions());
    }
    System.exit(0);
  }
}
