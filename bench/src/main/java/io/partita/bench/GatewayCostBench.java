package io.partita.bench;

import io.partita.client.PartitaClient;
import io.partita.profiler.onnx.TinyModels;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.ToDoubleFunction;

/**
 * Table 5e: what the gateway costs per call once the JVM is warm, against the Kafka client doing the
 * same calls. Table 5 measures right after its pipeline starts, when the JIT still takes a fifth to
 * a half of the CPU on two cores; here the four paths (the Kafka client, HTTP/1.1 with binary
 * tensors, gRPC, HTTP/2 with binary tensors on one connection) take turns under load for a long
 * warm-up first, and then each is measured {@link #REPEATS} times in turn, each row the median. Per
 * call it gives the CPU of each part (as table 1d splits it) and the bytes each part allocates
 * (HotSpot's per-thread counters). Three more paths send the same calls to a {@link TransportEcho},
 * servers on the gateway's transports that answer at once: what the transport alone costs, so that
 * each gateway path's row can say what the gateway spends above it.
 */
final class GatewayCostBench {
  /** Client threads in a closed loop, as the goal states it. */
  static final int CLIENTS = 16;
  static final int REPEATS = 3;
  static final String KAFKA = "(a) Kafka round trip, Java client";
  static final String HTTP = "(b) HTTP, binary tensors";
  static final String GRPC = "(c) gRPC (raw contents)";
  static final String HTTP2 = "(d) HTTP/2, binary tensors, one connection";
  static final String HTTP_ALONE = "(e) HTTP transport alone: (b)'s calls answered at once, no Kafka";
  static final String GRPC_ALONE = "(f) gRPC transport alone: (c)'s calls answered at once, no Kafka";
  static final String HTTP2_ALONE = "(g) HTTP/2 transport alone: (d)'s calls answered at once, no Kafka";
  /** Each gateway path and the transport-alone path that measures its transport's share. */
  private static final Map<String, String> TRANSPORT_OF = Map.of(HTTP, HTTP_ALONE, GRPC, GRPC_ALONE, HTTP2, HTTP2_ALONE);

  private final Path scratch;
  private final Duration warm;
  private final Duration measured;

  /**
   * @param warm load before any row is measured, the paths taking turns
   * @param measured the window of each repeat
   */
  GatewayCostBench(Path scratch, Duration warm, Duration measured) {
    this.scratch = scratch;
    this.warm = warm;
    this.measured = measured;
  }

  /** One repeat of one path. */
  private record Sample(double rate, double p50Ms, CpuSplit.Split cpu, Map<String, Long> allocated, double seconds) {
    double micros(String part) {
      return cpu.microsPerCall(part, rate);
    }

    double kilobytes(String part) {
      return allocated.get(part) / 1024.0 / (rate * seconds);
    }
  }

  List<List<String>> run() throws Exception {
    Path dir = Files.createTempDirectory(scratch, "gateway-cost");
    Path file = dir.resolve("identity.onnx");
    Files.write(file, TinyModels.identity());
    BenchModel identity = BenchModel.of("identity", file, Map.of(), "Identity on one float");
    CpuSplit cpu = new CpuSplit();
    Map<String, List<Sample>> samples = new LinkedHashMap<>();
    try (PipelineEnv env = new PipelineEnv(dir.resolve("pipeline"), List.of(identity), Map.of(), 1, cpu);
         PartitaClient client = env.client();
         GrpcCalls grpc = new GrpcCalls(env.gateway.grpcPort());
         Http2Calls h2 = new Http2Calls(env.gateway.port())) {
      cpu.part("load generator");
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build(); // as in table 5
      // The transports alone answer with the gateway's own answers to one call, so their bytes are the same.
      HttpResponse<byte[]> httpAnswer = http.send(Bench.binaryRequest(env.gateway.port(), identity, 0),
          HttpResponse.BodyHandlers.ofByteArray());
      if (httpAnswer.statusCode() != 200) {
        throw new IllegalStateException("the gateway answered HTTP " + httpAnswer.statusCode() + " to a binary infer call");
      }
      String headerLength = httpAnswer.headers().firstValue("Inference-Header-Content-Length").orElseThrow();
      Map<String, IntFunction<LoadRunner.Call>> paths = new LinkedHashMap<>();
      paths.put(KAFKA, i -> Bench.kafkaCall(client, identity, i));
      paths.put(HTTP, i -> Bench.httpBinaryCall(http, env.gateway.port(), identity, i, null));
      paths.put(GRPC, i -> grpc.call(identity, identity.name(), i));
      paths.put(HTTP2, overHttp2(identity, env.gateway.port(), h2));
      try (TransportEcho alone = new TransportEcho(httpAnswer.body(), headerLength, grpc.infer(identity, identity.name(), 0))) {
        cpu.part("gateway"); // the transports' own threads; those named as the gateway's are counted by name anyway
        try (GrpcCalls grpcAlone = new GrpcCalls(alone.grpcPort());
             Http2Calls h2Alone = new Http2Calls(alone.httpPort())) {
          cpu.part("load generator");
          paths.put(HTTP_ALONE, i -> Bench.httpBinaryCall(http, alone.httpPort(), identity, i, null));
          paths.put(GRPC_ALONE, i -> grpcAlone.call(identity, identity.name(), i));
          paths.put(HTTP2_ALONE, overHttp2(identity, alone.httpPort(), h2Alone));
          measure(cpu, paths, samples);
        }
      }
    }
    return rows(samples);
  }

  /** The client threads' calls as streams of one HTTP/2 connection (Vert.x's client on its own event loop). */
  private static IntFunction<LoadRunner.Call> overHttp2(BenchModel model, int port, Http2Calls h2) {
    LoadRunner.AsyncCall call = Bench.binaryInferCalls(model, port, h2);
    return i -> () -> call.start().get(60, TimeUnit.SECONDS);
  }

  /** Warms the JVM with the paths taking turns, then measures each {@link #REPEATS} times in turn. */
  private void measure(CpuSplit cpu, Map<String, IntFunction<LoadRunner.Call>> paths, Map<String, List<Sample>> samples)
      throws Exception {
    for (IntFunction<LoadRunner.Call> path : paths.values()) {
      path.apply(0).run(); // connections and class loading before the threads are counted
    }
    cpu.part("load generator");
    long warmEnd = System.nanoTime() + warm.toNanos();
    Duration turn = warm.compareTo(Duration.ofSeconds(45)) < 0 ? warm : Duration.ofSeconds(15);
    do {
      for (IntFunction<LoadRunner.Call> path : paths.values()) {
        LoadRunner.run(CLIENTS, Duration.ZERO, turn, 1, path);
      }
    } while (System.nanoTime() < warmEnd);
    for (int rep = 0; rep < REPEATS; rep++) {
      for (Map.Entry<String, IntFunction<LoadRunner.Call>> path : paths.entrySet()) {
        Map<Long, Long> allocBefore = cpu.allocated();
        Map<Long, Long> before = cpu.snapshot();
        long start = System.nanoTime();
        LoadRunner.Result r = LoadRunner.run(CLIENTS, Duration.ofMillis(200), measured, 1, path.getValue());
        double seconds = (System.nanoTime() - start) / 1e9;
        CpuSplit.Split split = cpu.between(before, cpu.snapshot(), seconds);
        Map<String, Long> allocated = cpu.allocatedBetween(allocBefore, cpu.allocated());
        double p50 = r.latency() == null ? Double.NaN : r.latency().p50Nanos() / 1e6;
        // The CPU and allocation span the run's 200 ms start too; under a steady load, per second over that span
        // and per call at the window's rate agree.
        samples.computeIfAbsent(path.getKey(), k -> new ArrayList<>())
            .add(new Sample(r.throughput(), p50, split, allocated, seconds));
      }
    }
  }

  private static List<List<String>> rows(Map<String, List<Sample>> samples) {
    List<Sample> kafka = samples.get(KAFKA);
    double kafkaRate = median(kafka, Sample::rate);
    double kafkaClient = median(kafka, s -> s.micros("load generator"));
    double idleGatewayPerSecond = median(kafka, s -> s.micros("gateway") * s.rate()); // the gateway's loops, no call through it
    List<List<String>> rows = new ArrayList<>();
    for (Map.Entry<String, List<Sample>> e : samples.entrySet()) {
      List<Sample> s = e.getValue();
      double rate = median(s, Sample::rate);
      double gateway = median(s, x -> x.micros("gateway"));
      String transport = TRANSPORT_OF.get(e.getKey());
      // what the gateway spends above a server that answers the same calls at once (the idle loops cancel out)
      String aboveTransport = transport == null || !samples.containsKey(transport) ? ""
          : Report.fmt(gateway - median(samples.get(transport), x -> x.micros("gateway")));
      boolean viaGateway = !e.getKey().equals(KAFKA);
      double min = s.stream().mapToDouble(Sample::rate).min().orElse(Double.NaN);
      double max = s.stream().mapToDouble(Sample::rate).max().orElse(Double.NaN);
      rows.add(List.of(e.getKey(), Integer.toString(CLIENTS), Report.fmt(rate), Report.fmt(min), Report.fmt(max),
          Report.fmt(median(s, Sample::p50Ms)), viaGateway ? Report.fmt(rate / kafkaRate) : "1.00",
          Report.fmt(gateway), Report.fmt(idleGatewayPerSecond / rate),
          viaGateway ? Report.fmt(gateway / kafkaClient) : "", aboveTransport,
          Report.fmt(median(s, x -> x.micros("load generator"))), Report.fmt(median(s, x -> x.micros("broker"))),
          Report.fmt(median(s, x -> x.micros(CpuSplit.WORKER))), Report.fmt(median(s, x -> x.micros(CpuSplit.JIT))),
          Report.fmt(median(s, x -> x.kilobytes("gateway"))), Report.fmt(median(s, x -> x.kilobytes("load generator"))),
          max - min > Bench.Repeats.NOISY * rate ? "repeats differ by more than 25 %" : ""));
    }
    return rows;
  }

  private static double median(List<Sample> samples, ToDoubleFunction<Sample> f) {
    return Bench.Repeats.median(samples.stream().mapToDouble(f).toArray());
  }
}
