package io.partita.profiler.onnx;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The few protobuf wire-format encodings needed to write a small ONNX model (varints and
 * length-delimited fields), so the profiler can build its probe and reference models without a
 * protobuf runtime on its production classpath. Tests parse the output with the real ONNX protobuf
 * classes to keep this honest.
 */
final class ProtoWriter {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  ProtoWriter varint(int field, long value) {
    tag(field, 0);
    rawVarint(value);
    return this;
  }

  ProtoWriter bytes(int field, byte[] value) {
    tag(field, 2);
    rawVarint(value.length);
    out.writeBytes(value);
    return this;
  }

  ProtoWriter string(int field, String value) {
    return bytes(field, value.getBytes(StandardCharsets.UTF_8));
  }

  ProtoWriter message(int field, ProtoWriter message) {
    return bytes(field, message.toByteArray());
  }

  byte[] toByteArray() {
    return out.toByteArray();
  }

  private void tag(int field, int wireType) {
    rawVarint(((long) field << 3) | wireType);
  }

  private void rawVarint(long value) {
    long v = value;
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }
}
