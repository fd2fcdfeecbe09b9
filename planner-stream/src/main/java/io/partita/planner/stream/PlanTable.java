package io.partita.planner.stream;

import io.partita.avro.PartitionPlan;
import io.partita.avro.Route;
import io.partita.avro.ServiceMapping;
import io.partita.avro.SlotAssignment;
import io.partita.avro.VersionChoice;
import io.partita.common.Topics;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;

/** The five plan tables: their topic, the sink that writes it and the record type of its values. */
public enum PlanTable {
  VERSIONS("versions", "write-plan-versions", Topics::planVersions, VersionChoice.class),
  MAPPINGS("mappings", "write-plan-mappings", Topics::planMappings, ServiceMapping.class),
  PARTITIONS("partitions", "write-plan-partitions", Topics::planPartitions, PartitionPlan.class),
  ASSIGNMENTS("assignments", "write-plan-assignments", Topics::planAssignments, SlotAssignment.class),
  ROUTES("routes", "write-plan-routes", Topics::planRoutes, Route.class);

  private final String id;
  private final String sink;
  private final Function<Topics, String> topic;
  private final Class<? extends SpecificRecord> type;

  PlanTable(String id, String sink, Function<Topics, String> topic, Class<? extends SpecificRecord> type) {
    this.id = id;
    this.sink = sink;
    this.topic = topic;
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

  public Class<? extends SpecificRecord> type() {
    return type;
  }

  /** The {@code plans-store} key of one plan record. */
  public String storeKey(String key) {
    return id + "|" + key;
  }

  public String storePrefix() {
    return id + "|";
  }
}
