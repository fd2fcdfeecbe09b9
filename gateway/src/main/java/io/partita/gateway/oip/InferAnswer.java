package io.partita.gateway.oip;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.avro.InferenceReply;
import io.partita.avro.Tensor;
import io.partita.gateway.infer.AnsweredBy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The body of a successful infer answer: OIP JSON (with {@code parameters} naming the host and slot
 * that answered, {@link AnsweredBy}), or with the binary tensor extension when any
 * output was asked as binary (the JSON header, then the raw bytes of the binary outputs in order;
 * {@link #headerLength} is what goes in {@code Inference-Header-Content-Length}).
 */
public record InferAnswer(byte[] body, int headerLength, boolean binary) {

  /** Builds the answer; {@code parsed} may be null (batch job items: JSON only). */
  public static InferAnswer of(InferenceReply reply, String clientId, InferBody.Parsed parsed) {
    ObjectNode out = InferBody.JSON.createObjectNode();
    out.put("model_name", reply.getServiceModel());
    if (reply.getModelVersion() != null) {
      out.put("model_version", reply.getModelVersion());
    }
    out.put("id", clientId != null ? clientId : reply.getId());
    AnsweredBy where = AnsweredBy.of(reply.getInstance());
    if (where != null) {
      out.putObject("parameters").put(AnsweredBy.HOST, where.host()).put(AnsweredBy.SLOT, where.slot());
    }
    ArrayNode outputs = out.putArray("outputs");
    List<ByteBuffer> raw = new ArrayList<>();
    for (Tensor t : reply.getOutputs()) {
      if (parsed != null && parsed.binary(t.getName())) {
        ObjectNode o = outputs.addObject();
        o.put("name", t.getName());
        o.put("datatype", t.getDatatype());
        ArrayNode shape = o.putArray("shape");
        t.getShape().forEach(shape::add);
        o.putObject("parameters").put("binary_data_size", t.getData().remaining());
        raw.add(t.getData().duplicate());
      } else {
        outputs.add(JsonTensors.toJson(t));
      }
    }
    try {
      byte[] header = InferBody.JSON.writeValueAsBytes(out);
      if (raw.isEmpty() && (parsed == null || !parsed.binaryAnswer())) {
        return new InferAnswer(header, header.length, false);
      }
      ByteArrayOutputStream body = new ByteArrayOutputStream(header.length + raw.stream().mapToInt(ByteBuffer::remaining).sum());
      body.write(header);
      for (ByteBuffer b : raw) {
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        body.write(bytes);
      }
      return new InferAnswer(body.toByteArray(), header.length, true);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
