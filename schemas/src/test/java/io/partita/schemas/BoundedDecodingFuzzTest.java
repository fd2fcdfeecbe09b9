package io.partita.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;

/**
 * Every record decoder against generated and mutated bytes: nothing escapes but
 * {@link DecodeException}, and one decode never allocates more than a small multiple of its input.
 * The mutations include a 2-billion count or length written at every offset of every valid record,
 * which without the bounds makes Avro allocate gigabytes ({@code OutOfMemoryError}).
 */
class BoundedDecodingFuzzTest {
  /** Record types with a checked-in valid sample (every top-level Partita record). */
  static final List<String> RECORDS = List.of("BatchJob", "DeadLetter", "Demand", "HostEnvironment", "InferenceReply",
      "InferenceRequest", "JobItemResult", "JobItemResults", "JobStatus", "ModelVersion", "PartitionPlan", "ProfileRequest", "ProfileStatus",
      "Route", "ServiceMapping", "ServiceModel", "SlotAssignment", "SlotStatus", "Tensor", "TimingEvent", "VersionChoice");

  /** Allowed allocation: this many times the input, plus a fixed allowance for the decode's own objects. */
  static final long PER_INPUT_BYTE = 32;
  static final long FIXED_ALLOWANCE = 256 * 1024;

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** A 2,000,000,000 as an Avro long (zig-zag varint): the declared count or length of the attack. */
  static final byte[] TWO_BILLION = varint(2_000_000_000L);

  @Test
  void shouldRefuseA32ByteRequestDeclaringTwoBillionInputsWithoutAllocatingThem() {
    warm("InferenceRequest");
    // id "a", serviceModel "m", version null, inputs: one block of 2e9 tensors
    byte[] body = concat(new byte[] {2, 'a', 2, 'm', 0}, TWO_BILLION);
    byte[] record = pad(concat(header(io.partita.avro.InferenceRequest.class), body), 32);
    assertThat(record).hasSize(32);

    long allocated = allocatedBy(() -> assertThatThrownBy(() -> AvroCodec.of(io.partita.avro.InferenceRequest.class).decode(record))
        .isInstanceOf(DecodeException.class)
        .hasMessageContaining("2000000000"));
    assertThat(allocated).isLessThan(FIXED_ALLOWANCE);
  }

  @Test
  void shouldRefuseAStringLongerThanTheRecord() {
    // under Avro's own limit (16 MiB), so only the bound by the bytes left refuses it
    byte[] record = concat(header(io.partita.avro.InferenceRequest.class), varint(1_000_000), new byte[] {'a'});
    assertThatThrownBy(() -> AvroCodec.of(io.partita.avro.InferenceRequest.class).decode(record))
        .isInstanceOf(DecodeException.class)
        .hasMessageContaining("only 1 remain");
  }

  @Test
  void shouldRefuseAMapDeclaringMoreEntriesThanBytesLeft() {
    // id, serviceModel, version null, inputs empty, outputs empty, parameters: 2e9 entries
    byte[] body = concat(new byte[] {2, 'a', 2, 'm', 0, 0, 0}, varint(1_000_000), new byte[] {2, 'k', 2, 'v'});
    byte[] record = concat(header(io.partita.avro.InferenceRequest.class), body);
    assertThatThrownBy(() -> AvroCodec.of(io.partita.avro.InferenceRequest.class).decode(record))
        .isInstanceOf(DecodeException.class)
        .hasMessageContaining("map block declares 1000000 items");
  }

  @Test
  void shouldStillDecodeEveryValidSample() {
    for (String name : RECORDS) {
      byte[] valid = sample(name);
      assertThat(codec(name).decode(valid)).as(name).isNotNull();
    }
  }

  /** The "one item takes at least one byte" rule the bounds rest on holds for every schema. */
  @Test
  void shouldHaveNoCollectionWhoseItemsCanTakeZeroBytes() {
    for (String name : RECORDS) {
      Schema schema = codec(name).schema();
      assertThat(zeroSizeCollections(schema, new HashSet<>())).as(name).isEmpty();
    }
  }

  @Test
  void shouldSurviveATwoBillionCountWrittenAtEveryOffsetOfEveryRecord() {
    for (String name : RECORDS) {
      byte[] valid = sample(name);
      for (int at = 10; at < valid.length; at++) {
        decodeSafely(name, splice(valid, at, 0, TWO_BILLION)); // inserted
        decodeSafely(name, splice(valid, at, Math.min(TWO_BILLION.length, valid.length - at), TWO_BILLION)); // overwritten
      }
    }
  }

  @Property(tries = 3000)
  void shouldOnlyRaiseDecodeExceptionForMutatedRecords(@ForAll("mutated") Tuple.Tuple2<String, byte[]> input) {
    decodeSafely(input.get1(), input.get2());
  }

  @Property(tries = 2000)
  void shouldOnlyRaiseDecodeExceptionForRandomBodies(@ForAll("recordName") String name,
                                                    @ForAll("body") byte[] body) {
    decodeSafely(name, concat(header(codec(name).type()), body));
  }

  @Property(tries = 300)
  void shouldOnlyRaiseDecodeExceptionForRandomBytes(@ForAll("recordName") String name, @ForAll("body") byte[] bytes) {
    decodeSafely(name, bytes);
  }

  @Provide
  Arbitrary<String> recordName() {
    return Arbitraries.of(RECORDS);
  }

  @Provide
  Arbitrary<byte[]> body() {
    return Arbitraries.bytes().array(byte[].class).ofMaxSize(200);
  }

  @Provide
  Arbitrary<Tuple.Tuple2<String, byte[]>> mutated() {
    return Combinators.combine(recordName(), Arbitraries.integers().between(0, 10_000), Arbitraries.integers().between(1, 8),
            Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(10), Arbitraries.integers().between(0, 3))
        .as((name, position, times, patch, kind) -> {
          byte[] bytes = sample(name);
          for (int i = 0; i < times; i++) {
            int at = 10 + Math.floorMod(position * (i + 1), Math.max(1, bytes.length - 10));
            byte[] what = kind == 0 ? TWO_BILLION : kind == 1 ? varint(-1L - position) : patch;
            int replace = kind == 3 ? 0 : Math.min(what.length, bytes.length - at);
            bytes = splice(bytes, at, replace, what);
          }
          return Tuple.of(name, bytes);
        });
  }

  /** Decodes; anything but success or DecodeException, or too much allocation, fails the test. */
  static void decodeSafely(String name, byte[] bytes) {
    AvroCodec<?> codec = warm(name);
    long allocated = allocatedBy(() -> {
      try {
        codec.decode(bytes);
      } catch (DecodeException expected) {
        // the documented error type
      }
    });
    assertThat(allocated)
        .as(() -> name + ": " + allocated + " bytes allocated decoding " + bytes.length + " bytes " + Arrays.toString(bytes))
        .isLessThanOrEqualTo(PER_INPUT_BYTE * bytes.length + FIXED_ALLOWANCE);
  }

  private static final Set<String> WARM = new HashSet<>();

  /** The codec after one decode of its sample: readers are built on first use, once per schema, not per record. */
  static synchronized AvroCodec<?> warm(String name) {
    AvroCodec<?> codec = codec(name);
    if (WARM.add(name)) {
      codec.decode(sample(name));
      try {
        codec.decode(concat(header(codec.type()), TWO_BILLION));
      } catch (DecodeException expected) {
        // warms the error path too
      }
    }
    return codec;
  }

  static long allocatedBy(Runnable action) {
    long id = Thread.currentThread().getId();
    long before = THREADS.getThreadAllocatedBytes(id);
    action.run();
    return THREADS.getThreadAllocatedBytes(id) - before;
  }

  private static List<String> zeroSizeCollections(Schema schema, Set<String> seen) {
    List<String> out = new ArrayList<>();
    switch (schema.getType()) {
      case RECORD -> {
        if (seen.add(schema.getFullName())) {
          schema.getFields().forEach(f -> out.addAll(zeroSizeCollections(f.schema(), seen)));
        }
      }
      case ARRAY -> {
        if (minSize(schema.getElementType()) == 0) {
          out.add("array of " + schema.getElementType());
        }
        out.addAll(zeroSizeCollections(schema.getElementType(), seen));
      }
      case MAP -> out.addAll(zeroSizeCollections(schema.getValueType(), seen)); // each entry has a key length
      case UNION -> schema.getTypes().forEach(t -> out.addAll(zeroSizeCollections(t, seen)));
      default -> { }
    }
    return out;
  }

  /** The fewest bytes a value of the schema can take. */
  private static int minSize(Schema schema) {
    return switch (schema.getType()) {
      case NULL -> 0;
      case FIXED -> schema.getFixedSize();
      case RECORD -> schema.getFields().stream().mapToInt(f -> minSize(f.schema())).sum();
      case FLOAT -> 4;
      case DOUBLE -> 8;
      default -> 1; // a boolean, a varint, a length, a count, an enum or union index
    };
  }

  @SuppressWarnings("unchecked")
  static AvroCodec<?> codec(String name) {
    return AvroCodec.of((Class<SpecificRecord>) Fixtures.recordClass(name));
  }

  static byte[] sample(String name) {
    try (InputStream in = BoundedDecodingFuzzTest.class.getResourceAsStream("/fixtures/" + name + "-v1.bin")) {
      if (in == null) {
        throw new IllegalStateException("no fixture for " + name);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The single-object header of the current schema of a record class. */
  static byte[] header(Class<? extends SpecificRecord> type) {
    Schema schema = SpecificData.getForClass(type).getSchema(type);
    ByteBuffer header = ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN);
    header.put((byte) 0xC3).put((byte) 0x01).putLong(SchemaNormalization.parsingFingerprint64(schema));
    return header.array();
  }

  static byte[] varint(long value) {
    long n = (value << 1) ^ (value >> 63);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while ((n & ~0x7FL) != 0) {
      out.write((int) ((n & 0x7F) | 0x80));
      n >>>= 7;
    }
    out.write((int) n);
    return out.toByteArray();
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  static byte[] pad(byte[] bytes, int length) {
    return bytes.length >= length ? bytes : Arrays.copyOf(bytes, length);
  }

  static byte[] splice(byte[] bytes, int at, int replace, byte[] with) {
    at = Math.min(at, bytes.length);
    replace = Math.min(replace, bytes.length - at);
    byte[] out = new byte[bytes.length - replace + with.length];
    System.arraycopy(bytes, 0, out, 0, at);
    System.arraycopy(with, 0, out, at, with.length);
    System.arraycopy(bytes, at + replace, out, at + with.length, bytes.length - at - replace);
    return out;
  }
}
