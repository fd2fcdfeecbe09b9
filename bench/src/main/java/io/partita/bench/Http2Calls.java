package io.partita.bench;

import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A load generator over HTTP/2 cleartext: one connection to the gateway (prior knowledge, no
 * upgrade), every call a stream of it, on one Netty event loop of its own (Vert.x's client). It is
 * what a client built for many concurrent calls does, where the JDK's client over HTTP/1.1 holds a
 * connection per call in flight. Its event loop is named {@code bench-load-h2}, so the CPU split
 * counts it as the load generator's, not as the gateway's Vert.x threads.
 */
final class Http2Calls implements AutoCloseable {
  static final String THREAD = "bench-load-h2";

  private final Vertx vertx;
  private final HttpClientAgent client;

  Http2Calls(int port) throws Exception {
    vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1).setInternalBlockingPoolSize(1));
    CompletableFuture<Void> named = new CompletableFuture<>();
    vertx.getOrCreateContext().runOnContext(v -> {
      Thread.currentThread().setName(THREAD);
      named.complete(null);
    });
    named.get(10, TimeUnit.SECONDS);
    client = vertx.createHttpClient(new HttpClientOptions()
            .setProtocolVersion(HttpVersion.HTTP_2)
            .setHttp2ClearTextUpgrade(false)
            .setTcpNoDelay(true)
            .setDefaultHost("127.0.0.1")
            .setDefaultPort(port),
        new PoolOptions().setHttp2MaxSize(1));
  }

  /** POSTs {@code body} to {@code uri}; the answer's body, or a failure naming a status other than 200. */
  CompletableFuture<Buffer> post(String uri, MultiMap headers, Buffer body) {
    return client.request(new RequestOptions().setMethod(HttpMethod.POST).setURI(uri).setHeaders(headers).setTimeout(30_000))
        .compose(request -> request.send(body))
        .compose(response -> response.body().compose(answer -> response.statusCode() == 200
            ? Future.succeededFuture(answer)
            : Future.failedFuture(new IllegalStateException("HTTP " + response.statusCode() + ": " + answer))))
        .toCompletionStage().toCompletableFuture();
  }

  @Override
  public void close() throws Exception {
    try {
      client.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
