package io.partita.gateway.server;

import io.vertx.core.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One HTTP request as the handlers see it: method, URI and headers, the body the event loop has
 * already received in full (or the fact that it was over its limit), and a way to answer once,
 * from any thread. Handlers never touch Vert.x objects: answers are handed to the connection's
 * event loop, so a handler thread never writes to a socket itself.
 */
public final class Exchange {
  private final HttpServerRequest request;
  private final Context context;
  private final byte[] body;
  private final boolean bodyOverLimit;
  private final boolean abandoned;
  private final Headers requestHeaders;
  private final Headers responseHeaders = new Headers(new LinkedHashMap<>());
  private final Runnable onAnswered;
  private final URI uri;
  private final long receivedNanos = System.nanoTime();

  Exchange(HttpServerRequest request, Context context, byte[] body, boolean bodyOverLimit, Runnable onAnswered) {
    this(request, context, body, bodyOverLimit, false, onAnswered);
  }

  /** @param abandoned the client went away before its body was in: nothing can be answered */
  Exchange(HttpServerRequest request, Context context, byte[] body, boolean bodyOverLimit, boolean abandoned,
      Runnable onAnswered) {
    this.abandoned = abandoned;
    this.request = request;
    this.context = context;
    this.body = body;
    this.bodyOverLimit = bodyOverLimit;
    this.onAnswered = onAnswered;
    this.requestHeaders = new Headers(request.headers());
    this.uri = uri(request.uri());
  }

  private static URI uri(String raw) {
    try {
      return new URI(raw);
    } catch (URISyntaxException e) {
      int q = raw.indexOf('?');
      try {
        return new URI(null, null, q < 0 ? raw : raw.substring(0, q), null);
      } catch (URISyntaxException again) {
        return URI.create("/");
      }
    }
  }

  public String getRequestMethod() {
    return request.method().name();
  }

  /** The request's path and query as sent ({@code getRawQuery()} for the query). */
  public URI getRequestURI() {
    return uri;
  }

  public Headers getRequestHeaders() {
    return requestHeaders;
  }

  /** Headers of the answer; set them before answering. */
  public Headers getResponseHeaders() {
    return responseHeaders;
  }

  /**
   * When the request was handed over whole ({@link System#nanoTime}): its last byte received on the
   * event loop, or the moment its body was found over its limit or abandoned.
   */
  public long receivedNanos() {
    return receivedNanos;
  }

  /** The whole body, received before the handler ran; empty when it was over its limit. */
  public byte[] body() {
    return body;
  }

  /** Whether the body was over the transport's limit (by Content-Length, or by what arrived). */
  public boolean bodyOverLimit() {
    return bodyOverLimit;
  }

  /**
   * Whether the client went away before its whole body arrived: the handler still runs (so the
   * call is counted, as {@code cancelled}), and whatever it answers is dropped.
   */
  public boolean abandoned() {
    return abandoned;
  }

  /** Answers with a whole body. {@code HEAD} answers carry the length but no body. */
  public void send(int status, String contentType, byte[] bytes) {
    if (abandoned) {
      onAnswered.run();
      return;
    }
    boolean head = getRequestMethod().equals("HEAD");
    context.runOnContext(v -> {
      HttpServerResponse response = prepare(status, contentType);
      if (head) {
        response.putHeader(name("Content-Length"), Integer.toString(bytes.length));
        response.end().onComplete(r -> finished());
      } else {
        response.end(Buffer.buffer(bytes)).onComplete(r -> finished());
      }
    });
  }

  /**
   * Opens a chunked answer; what is written to the stream goes out in chunks of up to 64 KiB, and
   * a writer waits while the client is slower than the writer (up to 60 s per chunk).
   */
  public OutputStream stream(int status, String contentType) {
    CompletableFuture<Void> opened = new CompletableFuture<>();
    context.runOnContext(v -> {
      HttpServerResponse response = prepare(status, contentType);
      response.setChunked(true);
      opened.complete(null);
    });
    return new ChunkStream(opened);
  }

  private HttpServerResponse prepare(int status, String contentType) {
    HttpServerResponse response = request.response();
    response.setStatusCode(status);
    responseHeaders.map.forEach((name, value) -> response.putHeader(name(name), value));
    response.putHeader(CONTENT_TYPE, contentType);
    if (bodyOverLimit && request.version() != HttpVersion.HTTP_2) {
      response.putHeader(name("Connection"), "close"); // the rest of the body is not read
    }
    return response;
  }

  private void finished() {
    if (bodyOverLimit && request.version() != HttpVersion.HTTP_2) {
      request.connection().close();
    }
    onAnswered.run();
  }

  /**
   * The header names every call reads or writes, as Vert.x's own names with their case-insensitive
   * hash computed once ({@link HttpHeaders#createOptimized}): a plain {@code String} name is hashed
   * character by character on every lookup and every write, which a profile of the HTTP path found
   * to be about a fifth of the gateway's samples. Other names are used as given.
   */
  private static final Map<String, CharSequence> NAMES = optimized("Content-Type", "Content-Length", "Connection", "Location",
      "X-Request-Id", "Server-Timing", "Inference-Header-Content-Length", "Retry-After", "traceparent", "Authorization", "X-API-Key");
  private static final CharSequence CONTENT_TYPE = name("Content-Type");

  private static Map<String, CharSequence> optimized(String... names) {
    Map<String, CharSequence> out = new HashMap<>();
    for (String n : names) {
      out.put(n, HttpHeaders.createOptimized(n));
    }
    return Map.copyOf(out);
  }

  /** {@code name} as Vert.x keeps it when it is one of {@link #NAMES}, else as given. */
  static CharSequence name(String name) {
    CharSequence optimized = NAMES.get(name);
    return optimized != null ? optimized : name;
  }

  /** Request or response headers; names are case-insensitive on the request side. */
  public static final class Headers {
    private final MultiMap request;
    private final Map<String, String> map;

    Headers(MultiMap request) {
      this.request = request;
      this.map = null;
    }

    Headers(Map<String, String> response) {
      this.request = null;
      this.map = response;
    }

    public String getFirst(String name) {
      return request != null ? request.get(name(name)) : map.get(name);
    }

    public void set(String name, String value) {
      if (map == null) {
        throw new UnsupportedOperationException("request headers are read-only");
      }
      map.put(name, value);
    }
  }

  private final class ChunkStream extends OutputStream {
    private static final int CHUNK = 64 * 1024;
    private CompletableFuture<Void> ready;
    private byte[] buffer = new byte[CHUNK];
    private int used;
    private boolean closed;

    ChunkStream(CompletableFuture<Void> opened) {
      this.ready = opened;
    }

    @Override
    public void write(int b) throws IOException {
      if (used == buffer.length) {
        flushChunk();
      }
      buffer[used++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      while (len > 0) {
        if (used == buffer.length) {
          flushChunk();
        }
        int n = Math.min(len, buffer.length - used);
        System.arraycopy(b, off, buffer, used, n);
        used += n;
        off += n;
        len -= n;
      }
    }

    /** Sends what is buffered now as one chunk (an event stream flushes each frame). */
    @Override
    public void flush() throws IOException {
      if (!closed) {
        flushChunk();
      }
    }

    private void flushChunk() throws IOException {
      await(ready);
      if (used == 0) {
        return;
      }
      Buffer chunk = Buffer.buffer(Arrays.copyOf(buffer, used));
      used = 0;
      CompletableFuture<Void> next = new CompletableFuture<>();
      ready = next;
      context.runOnContext(v -> {
        HttpServerResponse response = request.response();
        if (response.closed()) {
          next.completeExceptionally(new IOException("the client closed the connection"));
          return;
        }
        response.write(chunk);
        if (response.writeQueueFull()) {
          response.drainHandler(x -> next.complete(null));
          response.closeHandler(x -> next.completeExceptionally(new IOException("the client closed the connection")));
        } else {
          next.complete(null);
        }
      });
    }

    private void await(CompletableFuture<Void> f) throws IOException {
      try {
        f.get(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while streaming an answer");
      } catch (ExecutionException e) {
        throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
      } catch (TimeoutException e) {
        throw new IOException("the client read nothing for 60 s");
      }
    }

    @Override
    public void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      try {
        flushChunk();
        await(ready);
      } finally {
        context.runOnContext(v -> {
          HttpServerResponse response = request.response();
          if (!response.ended() && !response.closed()) {
            response.end().onComplete(r -> finished());
          } else {
            finished();
          }
        });
      }
    }
  }
}
