package io.partita.gateway.grpc;

import com.google.protobuf.ByteString;
import io.partita.avro.Tensor;
import io.partita.gateway.grpc.proto.InferTensorContents;
import io.partita.gateway.grpc.proto.ModelInferRequest;
import io.partita.gateway.grpc.proto.ModelInferResponse;
import io.partita.gateway.refusal.Refusal;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import io.partita.models.tensor.TensorValidator;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Open Inference Protocol gRPC tensors to wire tensors and back. Inputs come either all as
 * {@code raw_input_contents} (little-endian bytes, one entry per input, in order) or all as typed
 * {@code contents}; they are then checked by the same {@link TensorValidator} as HTTP bodies, so a
 * refusal names the same field with the same words. Typed contents are converted by what was sent,
 * never by a declared shape. FP16 and BF16 travel raw only, as the protocol says.
 */
public final class GrpcTensors {
  private GrpcTensors() {}

  /** The checked inputs of a request; throws a {@link Refusal} (bad input) naming the field. */
  public static List<Tensor> inputs(ModelInferRequest request, ModelSignature signature) {
    if (request.getInputsCount() == 0) {
      throw Refusal.badInput("inputs: missing or empty; send an array of tensors");
    }
    boolean raw = request.getRawInputContentsCount() > 0;
    if (raw && request.getRawInputContentsCount() != request.getInputsCount()) {
      throw Refusal.badInput("raw_input_contents: " + request.getRawInputContentsCount() + " entries for "
          + request.getInputsCount() + " inputs; send one per input, in the order of inputs");
    }
    List<Tensor> tensors = new ArrayList<>();
    for (int i = 0; i < request.getInputsCount(); i++) {
      ModelInferRequest.InferInputTensor in = request.getInputs(i);
      String field = in.getName().isBlank() ? "inputs[" + i + "]" : "input '" + in.getName() + "'";
      if (in.getName().isBlank()) {
        throw Refusal.badInput(field + ".name: missing or not a string");
      }
      if (raw && in.hasContents()) {
        throw Refusal.badInput(field + ": has both contents and raw_input_contents; send one");
      }
      ElementType type = ElementType.fromOipDatatype(in.getDatatype()).orElse(null);
      if (type == null || type.byteSize() == 0) {
        throw Refusal.badInput(field + ".datatype: '" + in.getDatatype() + "' is not a supported datatype");
      }
      ByteBuffer data = raw ? request.getRawInputContents(i).asReadOnlyByteBuffer() : typed(in, type, field);
      tensors.add(Tensor.newBuilder().setName(in.getName()).setDatatype(type.oipDatatype()).setShape(in.getShapeList())
          .setData(data).build());
    }
    Map<String, TensorSpec> specs = new LinkedHashMap<>();
    signature.inputs().forEach(s -> specs.put(s.name(), s));
    String problem = TensorValidator.check(specs, tensors.stream()
        .map(t -> new TensorValidator.Sent(t.getName(), t.getDatatype(), t.getShape(), t.getData().remaining())).toList());
    if (problem != null) {
      throw Refusal.badInput(problem);
    }
    return tensors;
  }

  /** The names of the outputs asked for, checked against the signature (empty: all). */
  public static List<String> outputs(ModelInferRequest request, ModelSignature signature) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < request.getOutputsCount(); i++) {
      String name = request.getOutputs(i).getName();
      if (signature.output(name).isEmpty()) {
        throw Refusal.badInput("outputs[" + i + "].name: unknown output '" + name + "'; the model gives "
            + signature.outputs().stream().map(TensorSpec::name).toList());
      }
      names.add(name);
    }
    return names;
  }

  private static ByteBuffer typed(ModelInferRequest.InferInputTensor in, ElementType type, String field) {
    InferTensorContents c = in.getContents();
    int count = switch (type) {
      case BOOL -> c.getBoolContentsCount();
      case INT8, INT16, INT32 -> c.getIntContentsCount();
      case INT64 -> c.getInt64ContentsCount();
      case UINT8, UINT16, UINT32 -> c.getUintContentsCount();
      case UINT64 -> c.getUint64ContentsCount();
      case FLOAT -> c.getFp32ContentsCount();
      case DOUBLE -> c.getFp64ContentsCount();
      default -> throw Refusal.badInput(field + ".contents: " + type.oipDatatype()
          + " has no typed contents in the protocol; send it in raw_input_contents");
    };
    ByteBuffer b = ByteBuffer.allocate(Math.multiplyExact(count, type.byteSize())).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < count; i++) {
      String at = field + ".contents[" + i + "]";
      switch (type) {
        case BOOL -> b.put((byte) (c.getBoolContents(i) ? 1 : 0));
        case INT8 -> b.put((byte) range(c.getIntContents(i), Byte.MIN_VALUE, Byte.MAX_VALUE, at));
        case INT16 -> b.putShort((short) range(c.getIntContents(i), Short.MIN_VALUE, Short.MAX_VALUE, at));
        case INT32 -> b.putInt(c.getIntContents(i));
        case INT64 -> b.putLong(c.getInt64Contents(i));
        case UINT8 -> b.put((byte) range(Integer.toUnsignedLong(c.getUintContents(i)), 0, 255, at));
        case UINT16 -> b.putShort((short) range(Integer.toUnsignedLong(c.getUintContents(i)), 0, 65535, at));
        case UINT32 -> b.putInt(c.getUintContents(i));
        case UINT64 -> b.putLong(c.getUint64Contents(i));
        case FLOAT -> b.putFloat(c.getFp32Contents(i));
        case DOUBLE -> b.putDouble(c.getFp64Contents(i));
        default -> throw new IllegalStateException(type.name());
      }
    }
    return b.flip();
  }

  private static long range(long v, long min, long max, String field) {
    if (v < min || v > max) {
      throw Refusal.badInput(field + ": expected a whole number between " + min + " and " + max);
    }
    return v;
  }

  /** Adds the outputs to a response: raw bytes, or typed contents (FP16 and BF16 force raw for all). */
  public static void outputs(List<Tensor> outputs, boolean raw, ModelInferResponse.Builder response) {
    boolean allRaw = raw || outputs.stream().anyMatch(t -> t.getDatatype().equals("FP16") || t.getDatatype().equals("BF16"));
    for (Tensor t : outputs) {
      ModelInferResponse.InferOutputTensor.Builder out = ModelInferResponse.InferOutputTensor.newBuilder()
          .setName(t.getName()).setDatatype(t.getDatatype()).addAllShape(t.getShape());
      ByteBuffer data = t.getData().duplicate().order(ByteOrder.LITTLE_ENDIAN);
      if (allRaw) {
        response.addRawOutputContents(ByteString.copyFrom(data));
      } else {
        out.setContents(typedOut(t.getDatatype(), data));
      }
      response.addOutputs(out);
    }
  }

  private static InferTensorContents typedOut(String datatype, ByteBuffer b) {
    InferTensorContents.Builder c = InferTensorContents.newBuilder();
    ElementType type = ElementType.fromOipDatatype(datatype).orElse(ElementType.OTHER);
    while (type.byteSize() > 0 && b.remaining() >= type.byteSize()) {
      switch (type) {
        case BOOL -> c.addBoolContents(b.get() != 0);
        case INT8 -> c.addIntContents(b.get());
        case INT16 -> c.addIntContents(b.getShort());
        case INT32 -> c.addIntContents(b.getInt());
        case INT64 -> c.addInt64Contents(b.getLong());
        case UINT8 -> c.addUintContents(b.get() & 0xff);
        case UINT16 -> c.addUintContents(b.getShort() & 0xffff);
        case UINT32 -> c.addUintContents(b.getInt());
        case UINT64 -> c.addUint64Contents(b.getLong());
        case FLOAT -> c.addFp32Contents(b.getFloat());
        case DOUBLE -> c.addFp64Contents(b.getDouble());
        default -> b.position(b.limit());
      }
    }
    return c.build();
  }
}
