package io.partita.planning.mapping;

/** The two heuristic schemes of {@link MappingPlanner}. */
public enum MappingScheme {
  MODEL_FIRST,
  HARDWARE_FIRST
}
