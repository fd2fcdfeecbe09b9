package io.partita.bench;

import io.partita.avro.SlotAssignment;
import java.util.List;

/**
 * The slots the plan gives a bench model on this machine: the {@code plan.assignments} records for
 * the bench host at the end of section 2's loop (profiler's runner -> planner topology -> grouping
 * measurements it asked for -> final plan). The pipeline publishes them on its own broker and its
 * worker follows them ({@code worker.follow-plan}), as {@code partita local}'s worker follows the
 * live planner's.
 *
 * @param slots the assignments, ordered by slot; empty when the loop gave none
 * @param why why there are none (the loop's error), or the final plan's own sentence
 */
record PlannedSlots(List<SlotAssignment> slots, String why) {
  static PlannedSlots of(PlannerRealityBench.Outcome loop) {
    if (loop.error() != null) {
      return new PlannedSlots(List.of(), loop.error());
    }
    if (loop.assignments().isEmpty()) {
      return new PlannedSlots(List.of(), "the final plan assigned no slot to host " + PlannerRealityBench.host());
    }
    return new PlannedSlots(loop.assignments(), loop.why());
  }

  boolean isEmpty() {
    return slots.isEmpty();
  }

  /** The partition sizes, one per slot. */
  List<Integer> sizes() {
    return slots.stream().map(a -> a.getCpus().isEmpty() ? Math.max(1, a.getThreads()) : a.getCpus().size()).toList();
  }

  /** The slots' largest batch (the profile batch the plan rests on). */
  int batch() {
    return slots.stream().mapToInt(SlotAssignment::getMaxBatch).max().orElse(1);
  }

  /** "planned: 2 slots [1, 1] pinned, up to 8", the grouping column of the report's rows. */
  String label() {
    boolean pinned = slots.stream().allMatch(a -> !a.getCpus().isEmpty());
    return "planned: " + slots.size() + " slot" + (slots.size() == 1 ? "" : "s") + " " + sizes() + (pinned ? " pinned" : "")
        + ", up to " + batch();
  }

  /** The slots as the report notes them: "cpu-0 on CPUs [0], cpu-1 on CPUs [1], batches up to 8". */
  String describe() {
    StringBuilder out = new StringBuilder();
    for (SlotAssignment a : slots) {
      out.append(out.length() == 0 ? "" : ", ").append(a.getSlot()).append(" on CPUs ").append(a.getCpus())
          .append(" (").append(a.getServiceModels().size()).append(" instance").append(a.getServiceModels().size() == 1 ? "" : "s")
          .append(")");
    }
    return out + ", batches up to " + batch();
  }
}
