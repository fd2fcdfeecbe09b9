package io.partita.planner.stream;

/**
 * What a change makes stale, as keys of {@code dirty-keys-store}: the fold processors mark them,
 * the planning punctuation re-plans exactly these and clears them. The narrow scopes (one host,
 * one model, one service model) keep a pass proportional to what changed; the wide ones
 * ({@link #VERSIONS_ALL}, {@link #ASSIGNMENTS}, {@link #ROUTES}) are no longer marked, but a
 * planner started on a store written before still honours them.
 */
final class Scopes {
  /** Every model's version on every host. */
  static final String VERSIONS_ALL = "versions-all";
  /** One model's version on every host: its catalog or requirements changed. */
  static final String VERSIONS_MODEL = "versions-model:";
  /** {@code model/host}: a timing of the model on the host (and the hosts predicting the model). */
  static final String VERSIONS_AT = "versions-at:";
  /** Every model's version on one host (and the hosts predicting each): its environment changed. */
  static final String VERSIONS_HOST = "versions-host:";
  static final String PARTITIONS_HOST = "partitions-host:";
  static final String PARTITIONS_MODEL = "partitions-model:";
  /** A host whose slots reported serving evidence: its running groupings may be measured from it. */
  static final String SERVING_HOST = "serving-host:";
  static final String MAPPING = "mapping";
  /** Every slot and instance. */
  static final String ASSIGNMENTS = "assignments";
  /** The slots of one host: its environment changed. */
  static final String ASSIGNMENTS_HOST = "assignments-host:";
  /** The instances of one base model's service models: one of them changed. */
  static final String ASSIGNMENTS_MODEL = "assignments-model:";
  /** Every route. */
  static final String ROUTES = "routes";
  /** The routes of the service models of the base models with a slot on one host: a slot status there changed. */
  static final String ROUTES_HOST = "routes-host:";
  /** The route of one service model: its catalog record changed. */
  static final String ROUTES_SERVICE = "routes-service:";

  private Scopes() {}
}
