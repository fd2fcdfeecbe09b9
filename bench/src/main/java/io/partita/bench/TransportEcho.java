package io.partita.bench;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.partita.gateway.grpc.proto.GRPCInferenceServiceGrpc;
import io.partita.gateway.grpc.proto.ModelInferRequest;
import io.partita.gateway.grpc.proto.ModelInferResponse;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The yardstick of the gateway's transports: servers that answer an infer call at once, with no
 * Kafka behind them. An HTTP server on Vert.x as the gateway's (HTTP/1.1 with keep-alive and HTTP/2
 * cleartext, no delay, no compression, as many event loops) reads each request's body and answers it
 * on its event loop with the gateway's own answer to one call, recorded before the run (same bytes,
 * same {@code Content-Type} and {@code Inference-Header-Content-Length}); a gRPC server on grpc-java's
 * Netty transport, as the gateway's, answers {@code ModelInfer} with the gateway's recorded response,
 * on the transport's thread. What a client's call costs these servers is what the transport alone
 * costs; what the gateway spends above it is its own path (parsing, Kafka, hand-offs).
 *
 * <p>Their threads have the names of the gateway's transports ({@code vert.x-eventloop-thread-*},
 * {@code grpc-default-*}), so the CPU split counts them in the gateway's column.
 */
final class TransportEcho implements AutoCloseable {
  private final Vertx vertx;
  private final HttpServer http;
  private final Server grpc;

  /**
   * @param httpAnswer the gateway's answer body to one binary infer call
   * @param headerLength its {@code Inference-Header-Content-Length}
   * @param grpcAnswer the gateway's response to one {@code ModelInfer} call
   */
  TransportEcho(byte[] httpAnswer, String headerLength, ModelInferResponse grpcAnswer) throws Exception {
    int loops = Math.max(2, Runtime.getRuntime().availableProcessors()); // as the gateway's HTTP transport
    vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops).setWorkerPoolSize(1).setInternalBlockingPoolSize(1));
    Buffer answer = Buffer.buffer(httpAnswer);
    http = vertx.createHttpServer(new HttpServerOptions().setHost("localhost").setPort(0).setTcpNoDelay(true)
            .setHttp2ClearTextEnabled(true).setCompressionSupported(false))
        .requestHandler(request -> request.body().onComplete(body -> request.response()
            .putHeader("Content-Type", "application/octet-stream")
            .putHeader("Inference-Header-Content-Length", headerLength)
            .end(answer.copy())));
    http.listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    grpc = NettyServerBuilder.forAddress(new InetSocketAddress("localhost", 0))
        .directExecutor()
        .addService(new GRPCInferenceServiceGrpc.GRPCInferenceServiceImplBase() {
          @Override
          public void modelInfer(ModelInferRequest request, StreamObserver<ModelInferResponse> observer) {
            observer.onNext(grpcAnswer);
            observer.onCompleted();
          }
        })
        .build()
        .start();
  }

  int httpPort() {
    return http.actualPort();
  }

  int grpcPort() {
    return grpc.getPort();
  }

  @Override
  public void close() throws Exception {
    grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
