package io.partita.planner.stream;

/**
 * What a change makes stale, as keys of {@code dirty-keys-store}: the fold processors mark them,
 * the planning punctuation re-plans exactly these and clears them.
 */
final class Scopes {
  static final String VERSIONS_ALL = "versions-all";
  static final String VERSIONS_MODEL = "versions-model:";
  static final String PARTITIONS_HOST = "partitions-host:";
  static final String PARTITIONS_MODEL = "partitions-model:";
  /** A host whose slots reported serving evidence: its running groupings may be measured from it. */
  static final String SERVING_HOST = "serving-host:";
  static final String MAPPING = "mapping";
  static final String ASSIGNMENTS = "assignments";
  static final String ROUTES = "routes";

  private Scopes() {}
}
