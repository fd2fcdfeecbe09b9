/**
 * The pure planner (no clock, no I/O, no Kafka): one package per planning method, {@code grouping}
 * (partitioning a pool), {@code mapping} (models to kinds of hardware), {@code allocation} (service
 * model instances to slots) and {@code version} (a version per host), and here the few types more
 * than one of them uses: {@link io.partita.planning.ProfilePoint} (a measured point of a profile),
 * {@link io.partita.planning.Tolerance} (how planned figures tie) and {@link
 * io.partita.planning.Hysteresis} (the margin by which a fresh plan must beat the running one). The
 * method packages depend on this one and never on each other; this package depends on none of them.
 */
package io.partita.planning;
