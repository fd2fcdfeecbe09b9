package io.partita.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Slow clients cannot starve the gateway: 200 connections that send their headers and stall, and
 * 200 that dribble their headers one byte a second, are held open while 16 ordinary clients call
 * infer. Every ordinary call succeeds, their p99 stays near the same load's p99 without the slow
 * clients, and the timeouts close every slow connection.
 */
@ExtendWith(KafkaFixture.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlowClientsIT {
  private static final int SLOW = 200;
  private static final int CLIENTS = 16;
  private static final int CALLS_PER_CLIENT = 60;
  // Long enough that the slow connections outlive the measured load even on a loaded machine.
  private static final long HEADER_TIMEOUT_MS = 15_000;
  private static final long BODY_TIMEOUT_MS = 15_000;

  @TempDir static Path repo;
  private Gateway gateway;
  private FakeWorker worker;

  @BeforeAll
  void start() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("slow"));
    gateway = new Gateway(GatewayConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.grpc-port", "-1",
        "gateway.routing", "any", // no planner in this test: produce without routes
        "gateway.header.timeout.ms", Long.toString(HEADER_TIMEOUT_MS),
        "gateway.body.timeout.ms", Long.toString(BODY_TIMEOUT_MS),
        "gateway.timeout.ms", "20000"))));
    gateway.start();
    worker = new FakeWorker(topics, DemoMlp.SERVICE_MODELS);
  }

  @AfterAll
  void stop() throws Exception {
    if (worker != null) worker.close();
    if (gateway != null) gateway.close();
  }

  @Test
  void shouldServeOrdinaryClientsWhileSlowOnesStallAndThenCloseTheSlowOnes() throws Exception {
    load(); // warm-up: connections, JIT, topic metadata
    long baseline = p99(load());

    List<SocketChannel> stalled = new ArrayList<>();
    List<SocketChannel> dribbling = new ArrayList<>();
    Map<SocketChannel, StringBuilder> received = new java.util.HashMap<>();
    byte[] headers = ("POST /v2/models/demo/infer HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        + "Content-Length: 200\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    for (int i = 0; i < SLOW; i++) {
      SocketChannel s = SocketChannel.open(new InetSocketAddress("localhost", gateway.port()));
      s.write(ByteBuffer.wrap(headers));
      s.configureBlocking(false);
      stalled.add(s);
      received.put(s, new StringBuilder());
      SocketChannel d = SocketChannel.open(new InetSocketAddress("localhost", gateway.port()));
      d.configureBlocking(false);
      dribbling.add(d);
      received.put(d, new StringBuilder());
    }
    ScheduledExecutorService dribbler = Executors.newSingleThreadScheduledExecutor();
    int[] sent = {0};
    dribbler.scheduleAtFixedRate(() -> {
      byte b = headers[Math.min(sent[0]++, headers.length - 5)]; // never finishes the headers
      for (SocketChannel d : dribbling) {
        try {
          d.write(ByteBuffer.wrap(new byte[] {b}));
        } catch (IOException closed) {
          // closed by the gateway's header timeout: what this test waits for
        }
      }
    }, 0, 1, TimeUnit.SECONDS);
    try {
      // The gateway has accepted them all (its count also holds the ordinary clients' kept-alive connections).
      await().atMost(Duration.ofSeconds(20)).until(() -> gateway.http().openConnections() >= 2 * SLOW);
      long slowSince = System.nanoTime();

      List<Long> withSlow = load();
      boolean loadEndedBeforeTheTimeouts = (System.nanoTime() - slowSince) / 1_000_000 < Math.min(HEADER_TIMEOUT_MS, BODY_TIMEOUT_MS);
      long slowP99 = p99(withSlow);
      System.out.printf("Infer p99 of %d clients: %d ms without slow clients, %d ms beside %d stalled and %d dribbling connections%n",
          CLIENTS, baseline, slowP99, SLOW, SLOW);
      assertThat(withSlow).hasSize(CLIENTS * CALLS_PER_CLIENT); // every call answered 200 (load() checks each)
      // The goal is p99 within 2x of the run without slow clients. On a shared 2-core CI machine a
      // baseline p99 of a few milliseconds can double from scheduling noise alone, so the bound is
      // 2x the baseline or the baseline plus 50 ms, whichever is larger: a gateway that let slow clients
      // hold its threads (as the JDK server did) misses it by seconds, not milliseconds.
      assertThat(slowP99).as("p99 with slow clients (ms) vs baseline p99 %d ms", baseline)
          .isLessThanOrEqualTo(Math.max(2 * baseline, baseline + 50));
      if (loadEndedBeforeTheTimeouts) {
        assertThat(closedCount(stalled, received) + closedCount(dribbling, received)).as("slow connections closed during the load")
            .isZero();
      }

      await().atMost(Duration.ofMillis(Math.max(HEADER_TIMEOUT_MS, BODY_TIMEOUT_MS) + 15_000)).pollInterval(Duration.ofMillis(200))
          .until(() -> closedCount(stalled, received) == SLOW && closedCount(dribbling, received) == SLOW);
      assertThat(gateway.http().timedOutConnections()).isGreaterThanOrEqualTo(2 * SLOW);
      // A stalled body is answered before its connection closes; dribbled headers never made a request.
      assertThat(stalled).allSatisfy(c -> assertThat(received.get(c).toString()).startsWith("HTTP/1.1 408 ")
          .contains("gateway.body.timeout.ms"));
      assertThat(dribbling).allSatisfy(c -> assertThat(received.get(c).toString()).isEmpty());
    } finally {
      dribbler.shutdownNow();
      for (SocketChannel s : stalled) s.close();
      for (SocketChannel d : dribbling) d.close();
    }
  }

  @Test
  void shouldSpeakHttp2CleartextAndKeepHttp11ConnectionsAlive() throws Exception {
    HttpClient h2 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
    HttpResponse<String> upgraded = h2.send(TestHttp.request(gateway, "/v2/health/live").build(), HttpResponse.BodyHandlers.ofString());
    assertThat(upgraded.version()).isEqualTo(HttpClient.Version.HTTP_2);
    HttpResponse<String> infer = h2.send(TestHttp.request(gateway, "/v2/models/demo/infer")
        .POST(HttpRequest.BodyPublishers.ofString(TestHttp.inferBody(1, 2, 3, 4, 5, 6, 7, 8))).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(infer.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(infer.statusCode()).as(infer.body()).isEqualTo(200);

    try (SocketChannel c = SocketChannel.open(new InetSocketAddress("localhost", gateway.port()))) {
      byte[] get = "GET /v2/health/live HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
      for (int i = 0; i < 2; i++) {
        c.write(ByteBuffer.wrap(get));
        assertThat(readAnswer(c)).startsWith("HTTP/1.1 200 ").endsWith("{\"live\":true}");
      }
    }
  }

  @Test
  void shouldAnswer413BeforeTheBodyIsSentAndCloseTheConnection() throws Exception {
    try (SocketChannel c = SocketChannel.open(new InetSocketAddress("localhost", gateway.port()))) {
      c.write(ByteBuffer.wrap(("POST /v2/models/demo/infer HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000000000\r\n\r\n{")
          .getBytes(StandardCharsets.US_ASCII)));
      String answer = readAnswer(c);
      assertThat(answer).startsWith("HTTP/1.1 413 ").contains("gateway.max.body.bytes");
      c.socket().setSoTimeout(10_000);
      assertThat(c.socket().getInputStream().read()).as("connection closed after the 413").isEqualTo(-1);
    }
  }

  @Test
  void shouldCloseConnectionsPastTheLimit() throws Exception {
    try (Gateway small = smallGateway("gateway.max.connections", "3")) {
      List<SocketChannel> held = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          SocketChannel c = SocketChannel.open(new InetSocketAddress("localhost", small.port()));
          c.write(ByteBuffer.wrap("GET /v2/health/live HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII))); // headers not finished
          held.add(c);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> small.http().openConnections() == 3);
        try (SocketChannel extra = SocketChannel.open(new InetSocketAddress("localhost", small.port()))) {
          assertThat(closedUnanswered(extra)).as("a connection past the limit is closed unanswered").isTrue();
        }
        assertThat(small.http().refusedConnections()).isEqualTo(1);
        held.get(0).close();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
            assertThat(TestHttp.get(small, "/v2/health/live").statusCode()).isEqualTo(200));
      } finally {
        for (SocketChannel c : held) c.close();
      }
    }
  }

  @Test
  void shouldCloseAConnectionThatNeverSpeaksAndAnIdleKeptAliveOne() throws Exception {
    try (Gateway small = smallGateway("gateway.header.timeout.ms", "1000", "gateway.idle.timeout.ms", "1000")) {
      try (SocketChannel silent = SocketChannel.open(new InetSocketAddress("localhost", small.port()));
           SocketChannel kept = SocketChannel.open(new InetSocketAddress("localhost", small.port()))) {
        kept.write(ByteBuffer.wrap("GET /v2/health/live HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
        assertThat(readAnswer(kept)).startsWith("HTTP/1.1 200 ");
        silent.socket().setSoTimeout(20_000);
        kept.socket().setSoTimeout(20_000);
        assertThat(silent.socket().getInputStream().read()).as("a silent connection is closed").isEqualTo(-1);
        assertThat(kept.socket().getInputStream().read()).as("an idle kept-alive connection is closed").isEqualTo(-1);
      }
    }
  }

  private Gateway smallGateway(String... settings) throws Exception {
    Map<String, String> values = new java.util.HashMap<>(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", new Topics(KafkaFixture.uniquePrefix("conns")).prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.grpc-port", "-1",
        "gateway.routing", "any",
        "gateway.jobs.enabled", "false",
        "gateway.header.timeout.ms", "30000"));
    for (int i = 0; i < settings.length; i += 2) {
      values.put(settings[i], settings[i + 1]);
    }
    Gateway g = new Gateway(GatewayConfig.from(Settings.of(values)));
    g.start();
    return g;
  }

  /** Sends a request and reports whether the gateway closed the connection (end of stream or reset) without answering. */
  private static boolean closedUnanswered(SocketChannel c) throws IOException {
    try {
      c.write(ByteBuffer.wrap("GET /v2/health/live HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
      c.socket().setSoTimeout(20_000);
      return c.socket().getInputStream().read() == -1;
    } catch (java.net.SocketTimeoutException stillOpen) {
      return false;
    } catch (IOException reset) {
      return true;
    }
  }

  /** Reads one HTTP/1.1 answer with a Content-Length body from a blocking channel. */
  private static String readAnswer(SocketChannel c) throws IOException {
    java.io.InputStream in = c.socket().getInputStream();
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      head.append((char) b);
    }
    int length = 0;
    for (String line : head.toString().split("\r\n")) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).strip());
      }
    }
    return head + new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }

  /** 16 clients, each on its own HTTP/1.1 connection, call infer in a loop; returns each call's latency in ms. */
  private List<Long> load() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    try {
      List<Future<List<Long>>> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        clients.add(pool.submit(() -> {
          HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
          List<Long> latencies = new ArrayList<>();
          for (int i = 0; i < CALLS_PER_CLIENT; i++) {
            long start = System.nanoTime();
            HttpResponse<String> r = http.send(TestHttp.request(gateway, "/v2/models/demo/infer")
                .POST(HttpRequest.BodyPublishers.ofString(TestHttp.inferBody(1, 2, 3, 4, 5, 6, 7, 8))).build(),
                HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            latencies.add((System.nanoTime() - start) / 1_000_000);
          }
          return latencies;
        }));
      }
      List<Long> all = new ArrayList<>();
      for (Future<List<Long>> f : clients) {
        all.addAll(f.get(120, TimeUnit.SECONDS));
      }
      return all;
    } finally {
      pool.shutdownNow();
    }
  }

  private static long p99(List<Long> latencies) {
    List<Long> sorted = new ArrayList<>(latencies);
    Collections.sort(sorted);
    return sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1);
  }

  /** Connections the gateway has closed: a read sees the end of the stream (after any 408) or a reset. */
  private static long closedCount(List<SocketChannel> channels, Map<SocketChannel, StringBuilder> received) {
    ByteBuffer buffer = ByteBuffer.allocate(4096);
    long closed = 0;
    for (SocketChannel c : channels) {
      try {
        int n;
        do {
          buffer.clear();
          n = c.read(buffer);
          if (n > 0) {
            received.get(c).append(new String(buffer.array(), 0, n, StandardCharsets.US_ASCII));
          }
        } while (n > 0);
        if (n < 0) {
          closed++;
        }
      } catch (IOException reset) {
        closed++;
      }
    }
    return closed;
  }
}
