package io.partita.gateway.server;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.Http2Settings;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's HTTP transport: HTTP/1.1 with keep-alive and HTTP/2 cleartext (h2c, by upgrade or
 * prior knowledge) on Vert.x's Netty event loops. Event loops only move bytes: they read headers,
 * receive each body in full (refusing it at the limit while it streams), enforce the timeouts and
 * write answers. The handler runs on {@code handlers}, once the body is in, so nothing a handler
 * does (Kafka, JSON parsing, job files) can hold up another connection.
 *
 * <p>What it guarantees against slow or idle clients, each with its setting:
 * <ul>
 *   <li>a connection that has not sent its first request's headers {@code headerTimeoutMs} after
 *       it was accepted is closed (a connection opened and left, or dribbled headers;
 *       {@link AcceptGuard});</li>
 *   <li>a request whose body has not arrived in full {@code bodyTimeoutMs} after its headers is
 *       answered 408 and its connection closed (a stalled or dribbling body);</li>
 *   <li>a kept-alive connection with no request in progress for {@code idleTimeoutMs} is closed;
 *       a dribbled second request on it is bounded by that too;</li>
 *   <li>past {@code maxConnections} open connections, a new one is closed at once;</li>
 *   <li>a body over its limit (by {@code Content-Length}, or by what arrives) is not read further:
 *       the handler is told, answers 413 after its key and model checks, and the connection is
 *       closed.</li>
 * </ul>
 * Waiting for an infer reply is not idleness: a connection with a request in progress is never
 * closed by a timeout here (the request's own deadline answers it).
 */
public final class HttpFrontDoor implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HttpFrontDoor.class);

  /**
   * @param port the port; 0 picks a free one
   * @param headerTimeoutMs how long a new connection may take to send a request's headers
   * @param bodyTimeoutMs how long a request's body may take to arrive, from its headers
   * @param idleTimeoutMs how long a kept-alive connection may wait with no request in progress
   * @param maxConnections most connections open at once
   * @param eventLoops event-loop threads
   * @param maxStreams most requests in progress at once on one HTTP/2 connection, announced to the
   *     client (SETTINGS_MAX_CONCURRENT_STREAMS); above the gateway's in-flight limit, so that a
   *     client multiplexing its calls on one connection meets that limit (429) before a protocol refusal
   */
  public record Settings(int port, long headerTimeoutMs, long bodyTimeoutMs, long idleTimeoutMs, int maxConnections,
      int eventLoops, int maxStreams) {}

  /** The largest body a request to {@code path} may send, known before any of it is read. */
  public interface BodyLimit {
    long of(String method, String path);
  }

  /** Handles one request whose body is in; must answer through {@link Exchange} exactly once. */
  public interface Handler {
    void handle(Exchange exchange);
  }

  private final Settings settings;
  private final Vertx vertx;
  private final HttpServer server;
  private final BodyLimit bodyLimit;
  private final Handler handler;
  private final Executor handlers;
  private final AcceptGuard guard;
  private final AtomicInteger timedOut = new AtomicInteger();
  private final Map<HttpConnection, Conn> connections = new ConcurrentHashMap<>();

  /** One connection's state; touched only on its event loop (the count of open ones is shared). */
  private static final class Conn {
    final HttpConnection connection;
    int active;
    long timer = -1;
    boolean closed;

    Conn(HttpConnection connection) {
      this.connection = connection;
    }
  }

  private HttpFrontDoor(Settings settings, BodyLimit bodyLimit, Handler handler, Executor handlers) {
    this.settings = settings;
    this.bodyLimit = bodyLimit;
    this.handler = handler;
    this.handlers = handlers;
    this.guard = new AcceptGuard(settings.headerTimeoutMs(), settings.maxConnections());
    this.vertx = Vertx.builder().with(new VertxOptions()
        .setEventLoopPoolSize(settings.eventLoops())
        .setWorkerPoolSize(1) // handlers run on the gateway's own executor, not Vert.x workers
        .setInternalBlockingPoolSize(1)
        .setBlockedThreadCheckInterval(10)
        .setBlockedThreadCheckIntervalUnit(TimeUnit.SECONDS))
        .withTransport(guard)
        .build();
    HttpServerOptions options = new HttpServerOptions()
        .setPort(settings.port())
        .setHost("0.0.0.0")
        .setTcpNoDelay(true)
        .setHttp2ClearTextEnabled(true)
        .setInitialSettings(new Http2Settings().setMaxConcurrentStreams(settings.maxStreams()))
        .setCompressionSupported(false)
        .setMaxHeaderSize(16 * 1024)
        .setMaxInitialLineLength(8 * 1024);
    this.server = vertx.createHttpServer(options)
        .connectionHandler(this::connected)
        .requestHandler(this::request)
        .exceptionHandler(e -> log.debug("HTTP connection error: {}", e.toString()));
  }

  /** Starts listening; returns once the port is bound. */
  public static HttpFrontDoor start(Settings settings, BodyLimit bodyLimit, Handler handler, Executor handlers) throws Exception {
    HttpFrontDoor door = new HttpFrontDoor(settings, bodyLimit, handler, handlers);
    try {
      door.server.listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      door.close();
      throw new IllegalStateException("http.port=" + settings.port() + ": cannot listen (" + e.getMessage()
          + "); choose a free port or 0 for any", e);
    }
    return door;
  }

  public int port() {
    return server.actualPort();
  }

  /** Connections open now. */
  public int openConnections() {
    return guard.open.get();
  }

  /** Connections closed by a header, body or idle timeout since start. */
  public int timedOutConnections() {
    return timedOut.get() + guard.timedOut.get();
  }

  /** Connections refused because {@code maxConnections} were open. */
  public int refusedConnections() {
    return guard.refused.get();
  }

  private void connected(HttpConnection connection) {
    // The accept guard has counted and timed this connection up to its first headers; from here on
    // this class times it (Vert.x calls this once the first request's headers are in, with h2c on).
    Conn conn = new Conn(connection);
    connection.closeHandler(v -> {
      conn.closed = true;
      cancel(conn);
      connections.remove(connection);
    });
    connections.put(connection, conn);
    arm(conn, settings.headerTimeoutMs());
  }

  private void arm(Conn conn, long ms) {
    cancel(conn);
    conn.timer = vertx.setTimer(ms, id -> {
      conn.timer = -1;
      if (!conn.closed && conn.active == 0) {
        timedOut.incrementAndGet();
        conn.connection.close();
      }
    });
  }

  private void cancel(Conn conn) {
    if (conn.timer >= 0) {
      vertx.cancelTimer(conn.timer);
      conn.timer = -1;
    }
  }

  private void request(HttpServerRequest request) {
    Context context = vertx.getOrCreateContext();
    Conn conn = connections.computeIfAbsent(request.connection(), Conn::new);
    cancel(conn);
    conn.active++;
    Runnable done = () -> context.runOnContext(v -> {
      conn.active--;
      if (conn.active == 0 && !conn.closed) {
        arm(conn, settings.idleTimeoutMs());
      }
    });
    long limit = bodyLimit.of(request.method().name(), request.path());
    String length = request.getHeader(Exchange.name("Content-Length"));
    long declared = -1;
    if (length != null) {
      try {
        declared = Long.parseLong(length.strip());
      } catch (NumberFormatException e) {
        declared = -1; // the handler answers 400 naming the header
      }
    }
    if (declared > limit) {
      dispatch(new Exchange(request, context, new byte[0], true, done));
      return;
    }
    Buffer body = Buffer.buffer(declared > 0 ? (int) declared : 256);
    boolean[] over = {false};
    boolean[] finished = {false};
    long bodyTimer = vertx.setTimer(settings.bodyTimeoutMs(), id -> {
      if (!finished[0]) {
        finished[0] = true;
        timedOut.incrementAndGet();
        request.response().setStatusCode(408).putHeader("Content-Type", "application/json")
            .putHeader("Connection", "close")
            .end("{\"error\":\"the request body did not arrive within " + settings.bodyTimeoutMs()
                + " ms (gateway.body.timeout.ms)\"}")
            .onComplete(r -> {
              if (request.version() != HttpVersion.HTTP_2) {
                request.connection().close();
              } else {
                request.response().reset();
              }
              done.run();
            });
      }
    });
    request.handler(chunk -> {
      if (finished[0] || over[0]) {
        return;
      }
      if ((long) body.length() + chunk.length() > limit) {
        over[0] = true;
        finished[0] = true;
        vertx.cancelTimer(bodyTimer);
        dispatch(new Exchange(request, context, new byte[0], true, done));
        return;
      }
      body.appendBuffer(chunk);
    });
    request.exceptionHandler(e -> {
      if (!finished[0]) { // the client went away mid-body: the handler counts it, nothing is answered
        finished[0] = true;
        vertx.cancelTimer(bodyTimer);
        dispatch(new Exchange(request, context, new byte[0], false, true, done));
      }
    });
    request.endHandler(v -> {
      if (finished[0]) {
        return;
      }
      finished[0] = true;
      vertx.cancelTimer(bodyTimer);
      dispatch(new Exchange(request, context, body.getBytes(), false, done));
    });
  }

  private void dispatch(Exchange exchange) {
    try {
      handlers.execute(() -> handler.handle(exchange));
    } catch (RejectedExecutionException e) {
      exchange.send(503, "application/json", "{\"error\":\"the gateway is shutting down\"}".getBytes(StandardCharsets.UTF_8));
    }
  }

  @Override
  public void close() {
    try {
      server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      log.debug("HTTP server did not close cleanly: {}", e.toString());
    }
    try {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      log.debug("Vert.x did not close cleanly: {}", e.toString());
    }
  }
}
