package io.partita.planner.stream;

/** Names of the planner's own stores, processors and sinks (the input ones are in {@link InputKind}). */
public final class PlannerTopologyNames {
  /** Scopes a change made stale, until the next planning punctuation re-plans them. */
  public static final String DIRTY_STORE = "dirty-keys-store";
  /** The last emitted bytes of every plan record, key {@code <table>|<key>}: the live plan. */
  public static final String PLANS_STORE = "plans-store";
  /** Per host/pool, what the planner asked its profiler last ({@link io.partita.planner.plan.AskState}). */
  public static final String ASKS_STORE = "measure-asks-store";
  /** Per grouping key, when the planner last asked for it (removed once it is measured). */
  public static final String ASKED_STORE = "measure-asked-store";
  public static final String PLAN_PROCESSOR = "plan-changes";
  /** Grouping-mode measurements the planner asks for, on {@code <p>.profile.requests}. */
  public static final String PROFILE_REQUEST_SINK = "write-profile-requests";
  public static final String DEAD_LETTER_SINK = "write-dead-letters";
  /** Grouping-mode measurements from the serving slots' evidence, on {@code <p>.profile.timings} (read back by {@code fold-timings}). */
  public static final String SERVING_TIMINGS_SINK = "write-serving-timings";

  private PlannerTopologyNames() {}
}
