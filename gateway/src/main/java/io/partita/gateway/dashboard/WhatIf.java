package io.partita.gateway.dashboard;

import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.SortedMap;

/**
 * Plans a what-if inventory over the recorded topics. The gateway module does not carry the
 * planner (Kafka Streams and its state store would come with it), so the implementation is found
 * with {@link ServiceLoader}: the {@code partita} launcher provides one that runs the planner's
 * replay ({@code partita replay --inventory}); a gateway started without it answers the what-if
 * endpoint 501, saying so.
 */
public interface WhatIf {
  /**
   * The plan the inventory would give, as plan tables: topic name (the plan topics of
   * {@link Topics}) to record key to the encoded record, as the planner would write them.
   *
   * @param inventoryYaml an inventory in the {@code partita replay --inventory} format
   * @throws IllegalArgumentException when the inventory is not valid (the message names the field)
   */
  Map<String, SortedMap<String, byte[]>> plan(String inventoryYaml);

  /** Makes the what-if planner of one installation. */
  interface Provider {
    WhatIf create(Properties kafka, Topics topics, Codecs codecs);
  }

  /** The what-if planner on the class path, if any. */
  static Optional<WhatIf> find(Properties kafka, Topics topics, Codecs codecs) {
    return ServiceLoader.load(Provider.class).findFirst().map(p -> p.create(kafka, topics, codecs));
  }
}
