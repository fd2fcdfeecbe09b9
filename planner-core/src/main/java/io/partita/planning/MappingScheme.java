package io.partita.planning;

/** The two heuristic schemes of {@link MappingPlanner}. */
public enum MappingScheme {
  MODEL_FIRST,
  HARDWARE_FIRST
}
