package io.partita.common.serde;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.schemas.AvroCodec;
import org.apache.avro.specific.SpecificRecord;

/**
 * Chooses how records are written on Kafka. The one mode today is {@code single-object} (setting
 * {@code serde.mode}, the default): Avro's single-object encoding, the schema fingerprint in every
 * message, no registry needed. Every component gets its codecs here, so adding a mode changes one
 * place.
 */
public final class Codecs {
  public static final String MODE = "serde.mode";
  public static final String SINGLE_OBJECT = "single-object";

  private final String mode;

  private Codecs(String mode) {
    this.mode = mode;
  }

  public static Codecs singleObject() {
    return new Codecs(SINGLE_OBJECT);
  }

  public static Codecs from(Settings settings) {
    String mode = settings.string(MODE, SINGLE_OBJECT);
    if (!mode.equals(SINGLE_OBJECT)) {
      throw new ConfigException(MODE + "=" + mode + ": unknown serde mode; use " + SINGLE_OBJECT);
    }
    return new Codecs(mode);
  }

  public String mode() {
    return mode;
  }

  public <T extends SpecificRecord> RecordCodec<T> codec(Class<T> type) {
    AvroCodec<T> codec = AvroCodec.of(type);
    return new RecordCodec<>() {
      @Override
      public byte[] encode(String topic, T record) {
        return codec.encode(record);
      }

      @Override
      public T decode(String topic, byte[] bytes) {
        return codec.decode(bytes);
      }
    };
  }
}
