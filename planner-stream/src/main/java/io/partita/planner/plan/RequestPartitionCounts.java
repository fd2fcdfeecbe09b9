package io.partita.planner.plan;

import io.partita.avro.SlotAssignment;
import io.partita.common.Topics;
import io.partita.common.kafka.RequestTopics;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * How many partitions each base model's request topic needs under a plan:
 * {@link RequestTopics#PARTITIONS_PER_SLOT} per slot the plan gives the base model (over all
 * hosts), at least the configured minimum, so the workers can share them out by capacity. It
 * counts slots, not service models: a slot serves every service model of its base model, so a
 * thousand weight files on one slot need no more partitions than one. Pure.
 */
public final class RequestPartitionCounts {
  private RequestPartitionCounts() {}

  /** Request topic to partitions wanted, for every base model with at least one planned slot. */
  public static SortedMap<String, Integer> of(Collection<SlotAssignment> assignments, Topics topics, int minimum) {
    Map<String, Set<String>> slots = new TreeMap<>();
    for (SlotAssignment a : assignments) {
      slots.computeIfAbsent(a.getModel(), m -> new HashSet<>()).add(a.getHost() + "/" + a.getSlot());
    }
    SortedMap<String, Integer> out = new TreeMap<>();
    slots.forEach((model, set) -> out.put(topics.requests(model), RequestTopics.partitions(set.size(), minimum)));
    return out;
  }
}
