/**
 * Method 1, partitioning a pool: how the resources of one pool on one host are cut into partitions
 * for its models. {@link io.partita.planning.grouping.PoolSharing} splits the pool between models
 * by demand ({@link io.partita.planning.grouping.PoolSplitter}) and {@link
 * io.partita.planning.grouping.GroupingPlanner} picks each share's grouping of measured sizes by
 * throughput or latency; {@link io.partita.planning.grouping.MeasuredGroupings} then prefers what
 * grouping-mode and serving measurements showed, and {@link io.partita.planning.grouping.CoreLayout}
 * lays the partitions out on the pool's resources.
 */
package io.partita.planning.grouping;
