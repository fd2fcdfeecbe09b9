package io.partita.bench;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.stub.MetadataUtils;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.partita.avro.Tensor;
import io.partita.gateway.infer.ServerTiming;
import io.partita.gateway.grpc.proto.GRPCInferenceServiceGrpc;
import io.partita.gateway.grpc.proto.ModelInferRequest;
import io.partita.gateway.grpc.proto.ModelInferResponse;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Infer calls over the gateway's gRPC API, as Triton's clients and perf_analyzer make them: inputs in
 * {@code raw_input_contents}, all client threads on one HTTP/2 connection.
 */
final class GrpcCalls implements AutoCloseable {
  private final ManagedChannel channel;
  private final GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub;

  private static final Metadata.Key<String> SERVER_TIMING = Metadata.Key.of(ServerTiming.GRPC_KEY, Metadata.ASCII_STRING_MARSHALLER);
  private final NioEventLoopGroup loops;

  GrpcCalls(int port) {
    // The client's own Netty threads, named for the load generator: grpc-java's shared default group
    // would otherwise run the client and the gateway's server on the same threads, and the CPU split
    // could not tell them apart.
    loops = new NioEventLoopGroup(2, new DefaultThreadFactory("bench-load-grpc", true));
    channel = NettyChannelBuilder.forAddress("localhost", port).usePlaintext()
        .eventLoopGroup(loops).channelType(NioSocketChannel.class).build();
    stub = GRPCInferenceServiceGrpc.newBlockingStub(channel);
  }

  LoadRunner.Call call(BenchModel model, String serviceModel, int i) {
    return call(model, serviceModel, i, null);
  }

  /** A call whose {@code server-timing} trailer and round trip go to {@code stages} (null: not read). */
  LoadRunner.Call call(BenchModel model, String serviceModel, int i, GatewayStages stages) {
    ModelInferRequest request = request(model, serviceModel, i);
    return () -> {
      try {
        if (stages == null) {
          stub.withDeadlineAfter(30, TimeUnit.SECONDS).modelInfer(request);
          return;
        }
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        long start = System.nanoTime();
        stub.withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers))
            .withDeadlineAfter(30, TimeUnit.SECONDS).modelInfer(request);
        long roundTrip = System.nanoTime() - start;
        stages.call(trailers.get() == null ? null : trailers.get().get(SERVER_TIMING), roundTrip);
      } catch (StatusRuntimeException e) {
        throw new IOException("gRPC " + e.getStatus().getCode() + ": " + e.getStatus().getDescription());
      }
    };
  }

  /** One call, its response returned: the answer a {@link TransportEcho} gives back. */
  ModelInferResponse infer(BenchModel model, String serviceModel, int i) {
    return stub.withDeadlineAfter(30, TimeUnit.SECONDS).modelInfer(request(model, serviceModel, i));
  }

  private static ModelInferRequest request(BenchModel model, String serviceModel, int i) {
    Tensor t = model.wireInput(1, i);
    return ModelInferRequest.newBuilder().setModelName(serviceModel)
        .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName(t.getName()).setDatatype(t.getDatatype())
            .addAllShape(t.getShape()))
        .addRawInputContents(ByteString.copyFrom(t.getData().duplicate()))
        .build();
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
