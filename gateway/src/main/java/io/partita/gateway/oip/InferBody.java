package io.partita.gateway.oip;

import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.avro.Tensor;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.SafeText;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import io.partita.models.tensor.TensorValidator;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Parses an Open Inference Protocol infer request body, JSON or with the binary tensor extension,
 * and checks it against the model's signature. Nothing here knows Kafka or HTTP exchanges; every
 * refusal is a {@link Refusal} of kind bad input naming the field.
 *
 * <p>Binary extension: when {@code Inference-Header-Content-Length: N} is given, the first N bytes
 * are the JSON header and the rest is raw tensor data; an input whose
 * {@code parameters.binary_data_size} is set takes that many bytes of it, in input order. The byte
 * count is checked against the declared shape (element count times element size, with overflow
 * checks) and the data is a view of the body: nothing is allocated by a declared size. Outputs are
 * asked as binary with {@code parameters.binary_data_output: true} (all of them) or an output's
 * {@code parameters.binary_data: true}.
 */
public final class InferBody {
  /**
   * Writes the gateway's JSON answers (numbers by the fast paths of {@link JsonLimits#factory}); the
   * HTTP endpoints write theirs with it too.
   */
  public static final ObjectMapper JSON = new ObjectMapper(JsonLimits.factory(StreamReadConstraints.defaults()));

  /** A checked infer request. {@code timeoutMs} is null when the request did not set one. */
  public record Parsed(List<Tensor> inputs, List<String> outputs, Set<String> binaryOutputs,
      boolean allOutputsBinary, Long timeoutMs, String clientId) {

    /** Whether the answer has any binary output, so it must use the binary extension. */
    public boolean binaryAnswer() {
      return allOutputsBinary || !binaryOutputs.isEmpty();
    }

    public boolean binary(String output) {
      return allOutputsBinary || binaryOutputs.contains(output);
    }
  }

  private InferBody() {}

  /**
   * @param body the whole request body
   * @param headerLength the {@code Inference-Header-Content-Length} header, or null
   * @param signature the inputs and outputs of the model version asked for
   */
  public static Parsed parse(byte[] body, String headerLength, ModelSignature signature) {
    return parse(body, headerLength, signature, JsonLimits.DEFAULTS);
  }

  /**
   * As {@link #parse(byte[], String, ModelSignature)}, reading the JSON within {@code limits}
   * ({@code gateway.json.*}); a body over them is refused (bad input) naming the limit.
   */
  public static Parsed parse(byte[] body, String headerLength, ModelSignature signature, JsonLimits limits) {
    int jsonLength = body.length;
    if (headerLength != null) {
      try {
        long n = Long.parseLong(headerLength.strip());
        if (n <= 0 || n > body.length) {
          throw Refusal.badInput("Inference-Header-Content-Length: " + n + " is not between 1 and the body length " + body.length);
        }
        jsonLength = (int) n;
      } catch (NumberFormatException e) {
        throw Refusal.badInput("Inference-Header-Content-Length: not a whole number");
      }
    }
    JsonNode node = readObject(body, jsonLength, limits);
    return parse(node, ByteBuffer.wrap(body, jsonLength, body.length - jsonLength).slice(), headerLength != null, signature);
  }

  /** Parses one JSON-only request (a line of a batch job). */
  public static Parsed parseJson(JsonNode node, ModelSignature signature) {
    return parse(node, ByteBuffer.allocate(0), false, signature);
  }

  static JsonNode readObject(byte[] bytes, int length, JsonLimits limits) {
    JsonNode node = limits.read(bytes, 0, length, "body");
    if (node == null || !node.isObject()) {
      throw Refusal.badInput("body: expected a JSON object");
    }
    return node;
  }

  private static Parsed parse(JsonNode body, ByteBuffer binary, boolean binaryAllowed, ModelSignature signature) {
    JsonNode inputsNode = body.get("inputs");
    if (inputsNode == null || !inputsNode.isArray() || inputsNode.isEmpty()) {
      throw Refusal.badInput("inputs: missing or empty; send an array of tensors");
    }
    List<Tensor> inputs = new ArrayList<>();
    for (int i = 0; i < inputsNode.size(); i++) {
      JsonNode in = inputsNode.get(i);
      JsonNode size = in == null ? null : in.path("parameters").get("binary_data_size");
      if (size == null) {
        inputs.add(JsonTensors.parse(in, i));
      } else {
        if (!binaryAllowed) {
          throw Refusal.badInput("inputs[" + i + "].parameters.binary_data_size: binary data needs the Inference-Header-Content-Length header"
              + " (and cannot be used in a batch job line)");
        }
        inputs.add(binaryTensor(in, i, size, binary));
      }
    }
    if (binary.remaining() > 0) {
      throw Refusal.badInput("body: " + binary.remaining() + " bytes of binary data are left over after the inputs' binary_data_size");
    }
    Map<String, TensorSpec> specs = new LinkedHashMap<>();
    signature.inputs().forEach(s -> specs.put(s.name(), s));
    String problem = TensorValidator.check(specs, inputs.stream()
        .map(t -> new TensorValidator.Sent(t.getName(), t.getDatatype(), t.getShape(), t.getData().remaining())).toList());
    if (problem != null) {
      throw Refusal.badInput(problem);
    }
    List<String> outputs = new ArrayList<>();
    Set<String> binaryOutputs = new LinkedHashSet<>();
    JsonNode outputsNode = body.get("outputs");
    if (outputsNode != null && !outputsNode.isNull()) {
      if (!outputsNode.isArray()) {
        throw Refusal.badInput("outputs: must be an array of {\"name\": ...}");
      }
      for (int i = 0; i < outputsNode.size(); i++) {
        String name = outputsNode.get(i).path("name").asText("");
        if (signature.output(name).isEmpty()) {
          throw Refusal.badInput("outputs[" + i + "].name: unknown output '" + SafeText.name(name) + "'; the model gives "
              + signature.outputs().stream().map(TensorSpec::name).toList());
        }
        outputs.add(name);
        JsonNode flag = outputsNode.get(i).path("parameters").get("binary_data");
        if (flag != null) {
          if (!flag.isBoolean()) {
            throw Refusal.badInput("outputs[" + i + "].parameters.binary_data: must be true or false");
          }
          if (flag.booleanValue()) {
            binaryOutputs.add(name);
          }
        }
      }
    }
    JsonNode parameters = body.get("parameters");
    if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
      throw Refusal.badInput("parameters: must be an object");
    }
    boolean allBinary = false;
    JsonNode all = body.path("parameters").get("binary_data_output");
    if (all != null) {
      if (!all.isBoolean()) {
        throw Refusal.badInput("parameters.binary_data_output: must be true or false");
      }
      allBinary = all.booleanValue();
    }
    Long timeoutMs = null;
    JsonNode timeout = body.path("parameters").get("timeout_ms");
    if (timeout != null) {
      if (!timeout.isIntegralNumber() || !timeout.canConvertToLong() || timeout.asLong() <= 0) {
        throw Refusal.badInput("parameters.timeout_ms: must be a whole number > 0");
      }
      timeoutMs = timeout.asLong();
    }
    JsonNode id = body.get("id");
    String clientId = id != null && id.isTextual() ? id.asText() : null;
    return new Parsed(inputs, outputs, binaryOutputs, allBinary, timeoutMs, clientId);
  }

  private static Tensor binaryTensor(JsonNode node, int index, JsonNode sizeNode, ByteBuffer binary) {
    String field = "inputs[" + index + "]";
    JsonNode nameNode = node.get("name");
    if (nameNode == null || !nameNode.isTextual() || nameNode.asText().isBlank()) {
      throw Refusal.badInput(field + ".name: missing or not a string");
    }
    String name = nameNode.asText();
    field = "input '" + SafeText.name(name) + "'";
    if (node.has("data")) {
      throw Refusal.badInput(field + ": has both data and parameters.binary_data_size; send one");
    }
    ElementType type = JsonTensors.datatype(node.path("datatype").asText(""), field);
    List<Long> shape = JsonTensors.shape(node, field);
    long elements = JsonTensors.elements(shape, field);
    if (!sizeNode.isIntegralNumber() || !sizeNode.canConvertToLong() || sizeNode.asLong() < 0) {
      throw Refusal.badInput(field + ".parameters.binary_data_size: must be a whole number >= 0");
    }
    long size = sizeNode.asLong();
    long needed;
    try {
      needed = Math.multiplyExact(elements, type.byteSize());
    } catch (ArithmeticException e) {
      throw Refusal.badInput(field + ".shape: too many elements");
    }
    if (size != needed) {
      throw Refusal.badInput(field + ".parameters.binary_data_size: shape " + shape + " needs " + elements + " "
          + type.oipDatatype() + " elements (" + needed + " bytes), binary_data_size is " + size);
    }
    if (size > binary.remaining()) {
      throw Refusal.badInput(field + ".parameters.binary_data_size: " + size + " bytes, but only "
          + binary.remaining() + " bytes of binary data are left in the body");
    }
    ByteBuffer data = binary.slice(binary.position(), (int) size);
    binary.position(binary.position() + (int) size);
    return Tensor.newBuilder().setName(name).setDatatype(type.oipDatatype()).setShape(shape).setData(data).build();
  }
}
