package io.partita.gateway.oip;

import io.partita.avro.InferenceReply;
import io.partita.avro.Tensor;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The JIT's warm-up of the gateway's own part of a call, before it says it is ready: infer bodies
 * of zeros for the offered service models, parsed and checked against their signatures as a call's
 * body is (JSON, and binary tensors), and a reply of zeros written as the answer (JSON, and binary),
 * as many times as asked, the service models in turn. Nothing is produced: the Kafka round trip and
 * the worker are warmed by their own parts.
 *
 * <p>A service model whose inputs cannot be written as a body of zeros (strings, an input of more
 * than 64 Ki elements) is passed over; the outcome says so. Never throws for a model's sake: a body
 * the gateway refuses is counted and named.
 */
public final class OipWarmUp {
  private static final long MAX_ELEMENTS = 1 << 16;

  /**
   * What a warm-up did.
   *
   * @param calls bodies parsed and answers written
   * @param serviceModels service models warmed up with
   * @param millis how long it took
   * @param problem the first body refused or service model passed over, or null
   */
  public record Outcome(int calls, int serviceModels, long millis, String problem) {}

  private OipWarmUp() {}

  /** @param signatures the offered service models' signatures, by name */
  public static Outcome run(Map<String, ModelSignature> signatures, int calls, JsonLimits limits) {
    long start = System.nanoTime();
    List<Body> bodies = new ArrayList<>();
    String problem = null;
    for (Map.Entry<String, ModelSignature> e : signatures.entrySet()) {
      Optional<Body> body = Body.of(e.getKey(), e.getValue());
      if (body.isPresent()) {
        bodies.add(body.get());
      } else if (problem == null) {
        problem = "service model " + e.getKey() + " has an input a body of zeros cannot carry";
      }
    }
    int done = 0;
    for (int i = 0; i < calls && !bodies.isEmpty(); i++) {
      Body body = bodies.get(i % bodies.size());
      boolean binary = i % 2 == 1;
      try {
        InferBody.Parsed parsed = binary
            ? InferBody.parse(body.binary(), Integer.toString(body.binaryHeaderLength()), body.signature(), limits)
            : InferBody.parse(body.json(), null, body.signature(), limits);
        InferAnswer.of(body.reply(), parsed.clientId(), parsed);
        done++;
      } catch (RuntimeException refused) {
        if (problem == null) {
          problem = "service model " + body.serviceModel() + ": " + refused.getMessage();
        }
        bodies.remove(body);
      }
    }
    return new Outcome(done, bodies.size(), (System.nanoTime() - start) / 1_000_000, problem);
  }

  /** One service model's bodies of zeros, and a reply of zeros to answer them with. */
  private record Body(String serviceModel, ModelSignature signature, byte[] json, byte[] binary, int binaryHeaderLength,
                      InferenceReply reply) {
    static Optional<Body> of(String serviceModel, ModelSignature signature) {
      StringBuilder json = new StringBuilder("{\"id\":\"warm-up\",\"inputs\":[");
      StringBuilder header = new StringBuilder("{\"id\":\"warm-up\",\"inputs\":[");
      List<byte[]> raws = new ArrayList<>();
      for (int i = 0; i < signature.inputs().size(); i++) {
        TensorSpec input = signature.inputs().get(i);
        Optional<long[]> shape = shape(input);
        if (shape.isEmpty()) {
          return Optional.empty();
        }
        long n = elements(shape.get());
        String head = "{\"name\":\"" + input.name() + "\",\"datatype\":\"" + input.type().oipDatatype() + "\",\"shape\":"
            + Arrays.toString(shape.get()).replace(" ", "");
        json.append(i == 0 ? "" : ",").append(head).append(",\"data\":[");
        String zero = input.type() == ElementType.BOOL ? "false" : "0";
        for (long k = 0; k < n; k++) {
          json.append(k == 0 ? "" : ",").append(zero);
        }
        json.append("]}");
        byte[] bytes = new byte[(int) (n * input.type().byteSize())];
        raws.add(bytes);
        header.append(i == 0 ? "" : ",").append(head).append(",\"parameters\":{\"binary_data_size\":").append(bytes.length).append("}}");
      }
      json.append("]}");
      header.append("],\"parameters\":{\"binary_data_output\":true}}");
      byte[] head = header.toString().getBytes(StandardCharsets.UTF_8);
      ByteBuffer raw = ByteBuffer.allocate(head.length + raws.stream().mapToInt(b -> b.length).sum());
      raw.put(head);
      raws.forEach(raw::put);
      List<Tensor> outputs = new ArrayList<>();
      for (TensorSpec output : signature.outputs()) {
        Optional<long[]> shape = shape(output);
        if (shape.isEmpty()) {
          return Optional.empty();
        }
        List<Long> dims = new ArrayList<>();
        for (long d : shape.get()) {
          dims.add(d);
        }
        outputs.add(Tensor.newBuilder().setName(output.name()).setDatatype(output.type().oipDatatype()).setShape(dims)
            .setData(ByteBuffer.wrap(new byte[(int) (elements(shape.get()) * output.type().byteSize())]).order(ByteOrder.LITTLE_ENDIAN))
            .build());
      }
      InferenceReply reply = InferenceReply.newBuilder().setId("warm-up").setServiceModel(serviceModel).setModelVersion("warm-up")
          .setOutputs(outputs).setInstance(null).build();
      return Optional.of(new Body(serviceModel, signature, json.toString().getBytes(StandardCharsets.UTF_8), raw.array(), head.length,
          reply));
    }

    /** One row: dynamic dimensions 1; empty for strings, unknown types or more than {@link #MAX_ELEMENTS} elements. */
    private static Optional<long[]> shape(TensorSpec spec) {
      if (spec.type().byteSize() == 0) {
        return Optional.empty();
      }
      long[] shape = new long[spec.shape().size()];
      for (int i = 0; i < shape.length; i++) {
        shape[i] = spec.shape().get(i) < 0 ? 1 : spec.shape().get(i);
      }
      return elements(shape) > MAX_ELEMENTS ? Optional.empty() : Optional.of(shape);
    }

    private static long elements(long[] shape) {
      long n = 1;
      for (long d : shape) {
        n = Math.multiplyExact(n, d);
      }
      return n;
    }
  }
}
