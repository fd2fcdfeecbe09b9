package io.partita.planner.stream;

import io.partita.avro.PartitionPlan;
import io.partita.avro.Route;
import io.partita.avro.ServiceMapping;
import io.partita.avro.SlotAssignment;
import io.partita.avro.VersionChoice;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;

/**
 * The five plan tables: their topic, the sink that writes it and the record type of its values
 * (the {@link Topic} handle {@link Topics} binds to the topic's name).
 */
public enum PlanTable {
  VERSIONS("versions", "write-plan-versions", Topics::planVersions, Topics::planVersions, VersionChoice.class),
  MAPPINGS("mappings", "write-plan-mappings", Topics::planMappings, Topics::planMappings, ServiceMapping.class),
  PARTITIONS("partitions", "write-plan-partitions", Topics::planPartitions, Topics::planPartitions, PartitionPlan.class),
  ASSIGNMENTS("assignments", "write-plan-assignments", Topics::planAssignments, Topics::planAssignments, SlotAssignment.class),
  ROUTES("routes", "write-plan-routes", Topics::planRoutes, Topics::planRoutes, Route.class);

  private final String id;
  private final String sink;
  private final Function<Topics, String> topic;
  private final BiFunction<Topics, Codecs, Topic<? extends SpecificRecord>> bound;
  private final Class<? extends SpecificRecord> type;

  PlanTable(String id, String sink, Function<Topics, String> topic,
      BiFunction<Topics, Codecs, Topic<? extends SpecificRecord>> bound, Class<? extends SpecificRecord> type) {
    this.id = id;
    this.sink = sink;
    this.topic = topic;
    this.bound = bound;
    this.type = type;
  }

  /** The short name used in {@code plans-store} keys ({@code partitions|<key>}) and in replay output. */
  public String id() {
    return id;
  }

  public String sink() {
    return sink;
  }

  public String topic(Topics topics) {
    return topic.apply(topics);
  }

  /** The table's topic bound to the codec of its records. */
  public Topic<? extends SpecificRecord> topic(Topics topics, Codecs codecs) {
    return bound.apply(topics, codecs);
  }

  /** The table's topic bound to its codec, checked to carry records of {@code type}. */
  @SuppressWarnings("unchecked")
  public <T extends SpecificRecord> Topic<T> topic(Topics topics, Codecs codecs, Class<T> type) {
    if (type != this.type) {
      throw new IllegalArgumentException(id + " holds " + this.type.getSimpleName() + ", not " + type.getSimpleName());
    }
    return (Topic<T>) bound.apply(topics, codecs);
  }

  /** The {@code plans-store} key of one plan record. */
  public String storeKey(String key) {
    return id + "|" + key;
  }

  public String storePrefix() {
    return id + "|";
  }
}
