package io.partita.common.serde;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.schemas.AvroCodec;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.specific.SpecificRecord;

/**
 * Chooses how records are written on Kafka (setting {@code serde.mode}). Every component gets its
 * codecs here, so a mode is added in one place.
 *
 * <ul>
 *   <li>{@code single-object} (the default): Avro's single-object encoding, the schema fingerprint
 *       in every message, no registry needed; earlier schema versions are known from the build.
 *   <li>{@code registry}: the Confluent wire format with schemas registered in a
 *       Confluent-compatible registry ({@code serde.registry.url}, e.g. Apicurio Registry's
 *       {@code /apis/ccompat/v7}) under {@code <topic>-value}, so registry-aware consumers in any
 *       language read Partita's topics, and the registry's compatibility rule checks evolution.
 *       See {@link RegistrySettings} for the other {@code serde.registry.*} settings.
 * </ul>
 *
 * All components of one installation must use the same mode: the two formats do not read each other.
 */
public final class Codecs {
  public static final String MODE = "serde.mode";
  public static final String SINGLE_OBJECT = "single-object";
  public static final String REGISTRY = "registry";

  private final String mode;
  private final SchemaRegistryClient registry;
  /** One codec per record type: codecs are thread-safe, and a topic handle asks for one per call. */
  private final Map<Class<?>, RecordCodec<?>> codecs = new ConcurrentHashMap<>();

  private Codecs(String mode, SchemaRegistryClient registry) {
    this.mode = mode;
    this.registry = registry;
  }

  public static Codecs singleObject() {
    return new Codecs(SINGLE_OBJECT, null);
  }

  /** Registry mode; no request is made until the first record is encoded or decoded. */
  public static Codecs registry(RegistrySettings settings) {
    return new Codecs(REGISTRY, new SchemaRegistryClient(settings));
  }

  public static Codecs from(Settings settings) {
    String mode = settings.string(MODE, SINGLE_OBJECT);
    return switch (mode) {
      case SINGLE_OBJECT -> singleObject();
      case REGISTRY -> registry(RegistrySettings.from(settings));
      default -> throw new ConfigException(MODE + "=" + mode + ": unknown serde mode; use " + SINGLE_OBJECT + " or " + REGISTRY);
    };
  }

  public String mode() {
    return mode;
  }

  /** The registry client in registry mode (shared by this instance's codecs), or null. */
  public SchemaRegistryClient registryClient() {
    return registry;
  }

  /** The codec of one record type, made once per type and shared by every caller (it is thread-safe). */
  @SuppressWarnings("unchecked")
  public <T extends SpecificRecord> RecordCodec<T> codec(Class<T> type) {
    return (RecordCodec<T>) codecs.computeIfAbsent(type, t -> create(type));
  }

  private <T extends SpecificRecord> RecordCodec<T> create(Class<T> type) {
    if (registry != null) {
      return new RegistryCodec<>(type, registry);
    }
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
