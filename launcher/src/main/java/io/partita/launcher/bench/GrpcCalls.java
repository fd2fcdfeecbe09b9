package io.partita.launcher.bench;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.partita.avro.Tensor;
import io.partita.gateway.grpc.proto.GRPCInferenceServiceGrpc;
import io.partita.gateway.grpc.proto.ModelInferRequest;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Infer calls over the gateway's gRPC API, as Triton's clients and perf_analyzer make them: inputs in
 * {@code raw_input_contents}, all client threads on one HTTP/2 connection.
 */
final class GrpcCalls implements AutoCloseable {
  private final ManagedChannel channel;
  private final GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub;

  GrpcCalls(int port) {
    channel = NettyChannelBuilder.forAddress("localhost", port).usePlaintext().build();
    stub = GRPCInferenceServiceGrpc.newBlockingStub(channel);
  }

  LoadRunner.Call call(BenchModel model, String serviceModel, int i) {
    Tensor t = model.wireInput(1, i);
    ModelInferRequest request = ModelInferRequest.newBuilder().setModelName(serviceModel)
        .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName(t.getName()).setDatatype(t.getDatatype())
            .addAllShape(t.getShape()))
        .addRawInputContents(ByteString.copyFrom(t.getData().duplicate()))
        .build();
    return () -> {
      try {
        stub.withDeadlineAfter(30, TimeUnit.SECONDS).modelInfer(request);
      } catch (StatusRuntimeException e) {
        throw new IOException("gRPC " + e.getStatus().getCode() + ": " + e.getStatus().getDescription());
      }
    };
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }
}
