package io.partita.gateway.oip;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.gateway.refusal.Refusal;
import java.io.IOException;

/**
 * How much JSON the gateway reads from outside: infer bodies (and the JSON header of a binary
 * one) and each line of a batch job. Jackson's {@link StreamReadConstraints} are set here on
 * purpose instead of left at the library's defaults (nesting 1,000, strings 20 MB), because what a
 * client sends is parsed before anything else checks it:
 *
 * <ul>
 *   <li>{@code gateway.json.max.depth} (64): an OIP body nests objects 3 deep and data arrays as
 *       deep as the tensor's rank (at most 32 here), so 64 leaves room and stops a {@code [[[[...}
 *       body from costing a deep recursion;</li>
 *   <li>{@code gateway.json.max.string.length} (65,536 characters, for keys and values alike): names,
 *       datatypes and ids are short; tensor data never comes as strings ({@code BYTES} is not
 *       supported);</li>
 *   <li>{@code gateway.json.max.number.length} (100 characters): any float or 64-bit integer fits
 *       in 30; longer numbers only make the parser do big-number work;</li>
 *   <li>{@code gateway.json.max.document.bytes} (16 MiB): one JSON document (a body's JSON part, a
 *       job line).</li>
 * </ul>
 *
 * A violation is a {@link Refusal} (bad input) naming the limit and its setting; other unreadable JSON is
 * refused the same way, with the line and column where they are known. Thread safe.
 */
public final class JsonLimits {
  public static final String DEPTH = "gateway.json.max.depth";
  public static final String STRING = "gateway.json.max.string.length";
  public static final String NUMBER = "gateway.json.max.number.length";
  public static final String DOCUMENT = "gateway.json.max.document.bytes";

  /** The defaults of the settings above. */
  public static final JsonLimits DEFAULTS = new JsonLimits(64, 65_536, 100, 16L << 20);

  private final int maxDepth;
  private final int maxStringLength;
  private final int maxNumberLength;
  private final long maxDocumentBytes;
  private final ObjectMapper mapper;

  public JsonLimits(int maxDepth, int maxStringLength, int maxNumberLength, long maxDocumentBytes) {
    if (maxDepth < 1 || maxStringLength < 1 || maxNumberLength < 1 || maxDocumentBytes < 1) {
      throw new IllegalArgumentException("JSON limits must be >= 1");
    }
    this.maxDepth = maxDepth;
    this.maxStringLength = maxStringLength;
    this.maxNumberLength = maxNumberLength;
    this.maxDocumentBytes = maxDocumentBytes;
    StreamReadConstraints constraints = StreamReadConstraints.builder()
        .maxNestingDepth(maxDepth)
        .maxStringLength(maxStringLength)
        .maxNameLength(maxStringLength)
        .maxNumberLength(maxNumberLength)
        .maxDocumentLength(maxDocumentBytes)
        .build();
    this.mapper = new ObjectMapper(factory(constraints));
  }

  /**
   * Turns on Jackson's fast number paths: FastDoubleParser to read decimals, Schubfach to write
   * floats and doubles. Both round correctly, as the JDK's own conversions do (same values, same
   * shortest digits; JsonTensorsTest checks), and tensor data is mostly numbers: one PaddleOCR
   * line (46,080 FP32 values, 0.5 MB) reads in 4.4-5.7 ms instead of 8.2-8.6 ms, and its tree is
   * written in 6.5-6.9 ms instead of 9.2 ms (one core of the 2-core bench machine).
   */
  static JsonFactory factory(StreamReadConstraints constraints) {
    return new JsonFactoryBuilder().streamReadConstraints(constraints)
        .enable(StreamReadFeature.USE_FAST_DOUBLE_PARSER)
        .enable(StreamWriteFeature.USE_FAST_DOUBLE_WRITER)
        .build();
  }

  public int maxDepth() {
    return maxDepth;
  }

  public int maxStringLength() {
    return maxStringLength;
  }

  public int maxNumberLength() {
    return maxNumberLength;
  }

  public long maxDocumentBytes() {
    return maxDocumentBytes;
  }

  /**
   * Reads one JSON value from {@code bytes[offset, offset+length)}; a refusal is an
   * {@link Refusal} (bad input) whose message starts with {@code what} ("body", "line").
   *
   * @return the value, or null when there is none (empty input)
   */
  public JsonNode read(byte[] bytes, int offset, int length, String what) {
    try {
      return mapper.readTree(bytes, offset, length);
    } catch (StreamConstraintsException e) {
      throw Refusal.badInput(what + ": " + limitOf(e));
    } catch (JacksonException e) {
      JsonLocation at = e.getLocation();
      String where = at == null ? "" : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
      throw Refusal.badInput(what + ": not valid JSON" + where);
    } catch (IOException e) {
      throw Refusal.badInput(what + ": cannot be read as JSON");
    }
  }

  /** Which limit a constraint violation broke, with its setting, in words. */
  private String limitOf(StreamConstraintsException e) {
    String m = String.valueOf(e.getMessage());
    if (m.contains("NestingDepth")) {
      return "JSON nested deeper than the limit of " + maxDepth + " levels (" + DEPTH + ")";
    }
    if (m.contains("StringLength") || m.contains("NameLength")) {
      return "a JSON string longer than the limit of " + maxStringLength + " characters (" + STRING + ")";
    }
    if (m.contains("NumberLength")) {
      return "a JSON number longer than the limit of " + maxNumberLength + " characters (" + NUMBER + ")";
    }
    if (m.contains("DocumentLength")) {
      return "JSON longer than the limit of " + maxDocumentBytes + " bytes (" + DOCUMENT + ")";
    }
    return "JSON over a parser limit (" + DEPTH + ", " + STRING + ", " + NUMBER + ", " + DOCUMENT + ")";
  }

  @Override
  public String toString() {
    return "depth " + maxDepth + ", strings " + maxStringLength + ", numbers " + maxNumberLength + ", documents " + maxDocumentBytes + " bytes";
  }
}
