package io.partita.planner.stream;

/** Names of the planner's own stores, processors and sinks (the input ones are in {@link InputKind}). */
public final class PlannerTopologyNames {
  /** Scopes a change made stale, until the next planning punctuation re-plans them. */
  public static final String DIRTY_STORE = "dirty-keys-store";
  /** The last emitted bytes of every plan record, key {@code <table>|<key>}: the live plan. */
  public static final String PLANS_STORE = "plans-store";
  public static final String PLAN_PROCESSOR = "plan-changes";
  public static final String DEAD_LETTER_SINK = "write-dead-letters";

  private PlannerTopologyNames() {}
}
