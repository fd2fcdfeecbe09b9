package io.partita.planning.mapping;

/**
 * One model of one service placed on one resource.
 *
 * @param latencyMs {@code T[m][r]}
 * @param loadMsPerSecond {@code rate_m * T[m][r]}: the busy milliseconds per second it adds to r
 */
public record Assignment(
    String serviceId, String modelId, String resourceId, double latencyMs, double loadMsPerSecond) {}
