package io.partita.profiler.onnx;

import ai.onnx.proto.OnnxMl;
import com.google.protobuf.ByteString;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/** Small ONNX models for tests, built with the ONNX protobuf classes (independent of {@link TinyModels}). */
public final class TestModels {

  private TestModels() {}

  /**
   * {@code y = MatMul(x, W)} with x [batchDim, in] and W [in, out] of small constants. A batch dim of
   * {@code -1} is dynamic (named "N").
   */
  public static byte[] matMul(long batchDim, int in, int out) {
    ByteBuffer raw = ByteBuffer.allocate(in * out * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < in * out; i++) {
      raw.putFloat((i % 7 - 3) * 0.01f);
    }
    OnnxMl.TensorProto w = OnnxMl.TensorProto.newBuilder()
        .setName("W").addDims(in).addDims(out)
        .setDataType(OnnxMl.TensorProto.DataType.FLOAT.getNumber())
        .setRawData(ByteString.copyFrom(raw.array()))
        .build();
    OnnxMl.GraphProto graph = OnnxMl.GraphProto.newBuilder()
        .setName("test-matmul")
        .addNode(OnnxMl.NodeProto.newBuilder().setName("mm").setOpType("MatMul").addInput("x").addInput("W").addOutput("y"))
        .addInitializer(w)
        .addInput(floatValue("x", batchDim, in))
        .addOutput(floatValue("y", batchDim, out))
        .build();
    return OnnxMl.ModelProto.newBuilder()
        .setIrVersion(8)
        .setProducerName("partita-test")
        .addOpsetImport(OnnxMl.OperatorSetIdProto.newBuilder().setDomain("").setVersion(13))
        .setGraph(graph)
        .build()
        .toByteArray();
  }

  /** {@code y = Relu(x)} with x [N, L], both dimensions dynamic and named. */
  public static byte[] reluWithDynamicLength() {
    OnnxMl.TensorShapeProto shape = OnnxMl.TensorShapeProto.newBuilder()
        .addDim(OnnxMl.TensorShapeProto.Dimension.newBuilder().setDimParam("N"))
        .addDim(OnnxMl.TensorShapeProto.Dimension.newBuilder().setDimParam("L"))
        .build();
    OnnxMl.TypeProto type = OnnxMl.TypeProto.newBuilder().setTensorType(OnnxMl.TypeProto.Tensor.newBuilder()
        .setElemType(OnnxMl.TensorProto.DataType.FLOAT.getNumber()).setShape(shape)).build();
    OnnxMl.GraphProto graph = OnnxMl.GraphProto.newBuilder()
        .setName("test-relu")
        .addNode(OnnxMl.NodeProto.newBuilder().setName("relu").setOpType("Relu").addInput("x").addOutput("y"))
        .addInput(OnnxMl.ValueInfoProto.newBuilder().setName("x").setType(type))
        .addOutput(OnnxMl.ValueInfoProto.newBuilder().setName("y").setType(type))
        .build();
    return OnnxMl.ModelProto.newBuilder()
        .setIrVersion(8)
        .addOpsetImport(OnnxMl.OperatorSetIdProto.newBuilder().setDomain("").setVersion(13))
        .setGraph(graph)
        .build()
        .toByteArray();
  }

  private static OnnxMl.ValueInfoProto floatValue(String name, long batchDim, long width) {
    OnnxMl.TensorShapeProto.Dimension.Builder batch = OnnxMl.TensorShapeProto.Dimension.newBuilder();
    if (batchDim < 0) {
      batch.setDimParam("N");
    } else {
      batch.setDimValue(batchDim);
    }
    OnnxMl.TensorShapeProto shape = OnnxMl.TensorShapeProto.newBuilder()
        .addDim(batch)
        .addDim(OnnxMl.TensorShapeProto.Dimension.newBuilder().setDimValue(width))
        .build();
    return OnnxMl.ValueInfoProto.newBuilder()
        .setName(name)
        .setType(OnnxMl.TypeProto.newBuilder().setTensorType(
            OnnxMl.TypeProto.Tensor.newBuilder().setElemType(OnnxMl.TensorProto.DataType.FLOAT.getNumber()).setShape(shape)))
        .build();
  }

  /** Writes {@code bytes} as {@code <repo>/<model>/<version>/model.onnx} and returns the file. */
  public static Path writeToRepo(Path repo, String model, String version, byte[] bytes) {
    try {
      Path dir = Files.createDirectories(repo.resolve(model).resolve(version));
      return Files.write(dir.resolve("model.onnx"), bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
