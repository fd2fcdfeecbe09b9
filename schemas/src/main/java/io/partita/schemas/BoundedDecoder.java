package io.partita.schemas;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.avro.SystemLimitException;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.Decoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.util.Utf8;

/**
 * An Avro binary decoder over one record's bytes that never allocates for a length or count larger
 * than the bytes left in the record.
 *
 * <p>Avro's readers allocate on the declared size before they read the content: a string or bytes
 * value of length n gets an n-byte buffer, an array or map of n items a backing array or hash table
 * of n. Avro's own limits ({@link AvroLimits}) cap n absolutely; this decoder also caps it by the
 * input: a string or bytes value longer than the bytes left, or an array or map block with more
 * items than bytes left, is refused with a {@link SystemLimitException} before anything is
 * allocated.
 *
 * <p>Why "items &lt;= bytes left" is exact, not a guess: in every Partita schema each array item and
 * map entry takes at least one byte (a map entry starts with its key's length; no array holds
 * {@code null}, an empty record or a zero-size fixed: {@code BoundedDecodingFuzzTest} checks every
 * schema for that), so a block that declares more items than bytes left cannot be a valid record.
 * And every allocation of n made here is followed by reading n bytes (or n items of at least one
 * byte) or by the end of the input, so what one decode allocates in all is a small multiple of the
 * record's size (an item costs at most 8 bytes of backing array or 16 of hash table) however the
 * counts are nested.
 *
 * <p>A bytes value is a view of the input array ({@link #readBytes}), not a copy. Everything else
 * is delegated to Avro's {@link BinaryDecoder} over the same array.
 */
public final class BoundedDecoder extends Decoder {
  private final BinaryDecoder in;
  private final InputStream left;
  private final byte[] bytes;
  private final int end;

  private BoundedDecoder(byte[] bytes, int offset, int length) {
    this.bytes = bytes;
    this.end = offset + length;
    this.in = DecoderFactory.get().binaryDecoder(bytes, offset, length, null);
    // Over an array, the decoder's source is the whole remaining input: available() is exact.
    this.left = in.inputStream();
  }

  /** A decoder over {@code length} bytes of {@code bytes} from {@code offset}. */
  public static BoundedDecoder over(byte[] bytes, int offset, int length) {
    if (offset < 0 || length < 0 || offset + length > bytes.length) {
      throw new IndexOutOfBoundsException("offset " + offset + ", length " + length + " of " + bytes.length + " bytes");
    }
    return new BoundedDecoder(bytes, offset, length);
  }

  /** Bytes not read yet. */
  public int remaining() throws IOException {
    return left.available();
  }

  /** Whether every byte was read. */
  public boolean isEnd() throws IOException {
    return in.isEnd();
  }

  private int length(long declared, String what) throws IOException {
    if (declared < 0) {
      throw new SystemLimitException("a " + what + " declares a negative length " + declared);
    }
    int left = remaining();
    if (declared > left) {
      throw new SystemLimitException("a " + what + " declares " + declared + " bytes but only " + left + " remain in the record");
    }
    return (int) declared;
  }

  private long items(long declared, String what) throws IOException {
    int left = remaining();
    if (declared > left) {
      throw new SystemLimitException("a " + what + " block declares " + declared + " items but only " + left
          + " bytes remain in the record (every item takes at least one)");
    }
    return declared;
  }

  @Override
  public Utf8 readString(Utf8 old) throws IOException {
    int length = length(SystemLimitException.checkMaxStringLength(in.readLong()), "string");
    Utf8 result = old != null ? old : new Utf8();
    result.setByteLength(length);
    if (length > 0) {
      in.readFixed(result.getBytes(), 0, length);
    }
    return result;
  }

  @Override
  public String readString() throws IOException {
    int length = length(SystemLimitException.checkMaxStringLength(in.readLong()), "string");
    byte[] bytes = new byte[length];
    in.readFixed(bytes, 0, length);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /**
   * A bytes value as a view of the input array, not a copy: a tensor's data is most of a request
   * or reply record (a PaddleOCR reply is 530 KB), and the record's array is its decode's own (a
   * Kafka record value, a store's value). So the array must not be changed or reused while the
   * decoded record is in use; every caller passes an array it got for this one record.
   */
  @Override
  public ByteBuffer readBytes(ByteBuffer old) throws IOException {
    int length = length(SystemLimitException.checkMaxBytesLength(in.readLong()), "bytes value");
    int start = end - remaining();
    in.skipFixed(length);
    return ByteBuffer.wrap(bytes, start, length).slice();
  }

  @Override
  public long readArrayStart() throws IOException {
    return items(in.readArrayStart(), "array");
  }

  @Override
  public long arrayNext() throws IOException {
    return items(in.arrayNext(), "array");
  }

  @Override
  public long readMapStart() throws IOException {
    return items(in.readMapStart(), "map");
  }

  @Override
  public long mapNext() throws IOException {
    return items(in.mapNext(), "map");
  }

  @Override
  public void readFixed(byte[] bytes, int start, int length) throws IOException {
    if (length > remaining()) {
      throw new EOFException("a fixed value of " + length + " bytes runs past the end of the record");
    }
    in.readFixed(bytes, start, length);
  }

  // No allocation below: delegated as is.

  @Override
  public void readNull() throws IOException {
    in.readNull();
  }

  @Override
  public boolean readBoolean() throws IOException {
    return in.readBoolean();
  }

  @Override
  public int readInt() throws IOException {
    return in.readInt();
  }

  @Override
  public long readLong() throws IOException {
    return in.readLong();
  }

  @Override
  public float readFloat() throws IOException {
    return in.readFloat();
  }

  @Override
  public double readDouble() throws IOException {
    return in.readDouble();
  }

  @Override
  public void skipString() throws IOException {
    in.skipString();
  }

  @Override
  public void skipBytes() throws IOException {
    in.skipBytes();
  }

  @Override
  public void skipFixed(int length) throws IOException {
    in.skipFixed(length);
  }

  @Override
  public int readEnum() throws IOException {
    return in.readEnum();
  }

  @Override
  public long skipArray() throws IOException {
    return in.skipArray();
  }

  @Override
  public long skipMap() throws IOException {
    return in.skipMap();
  }

  @Override
  public int readIndex() throws IOException {
    return in.readIndex();
  }
}
