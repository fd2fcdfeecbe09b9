package io.partita.planning.grouping;

/**
 * One model's place on a pool, as {@link PoolSharing} decides it.
 *
 * @param modelId the model
 * @param kind how it got its place
 * @param share its share and grouping; for {@link Kind#DEFAULT} a share of one resource with no
 *     grouping plan (nothing was measured, so nothing is predicted)
 */
public record PoolPlacement(String modelId, Kind kind, ModelShare share) {

  /** How a model got its place on the pool. */
  public enum Kind {
    /** Its own resources from the demand-proportional split ({@link PoolSplitter}). */
    SPLIT,
    /**
     * The split left it no resource (more models than resources, or no demand while others have
     * some): one partition of its smallest measured size, on resources other models use too.
     */
    SHARED,
    /** Nothing measured yet on this host: one single-resource partition so that it is served at once. */
    DEFAULT
  }

  /** Whether its partition lies on resources other models use too (SHARED, or DEFAULT on a full pool). */
  public boolean mayOverlap() {
    return kind != Kind.SPLIT;
  }
}
