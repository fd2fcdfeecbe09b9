package io.partita.planning.mapping;

/** The load a mapping puts on one resource: {@code sum_{m on r} rate_m * T[m][r]} busy ms per second. */
public record ResourceLoad(String resourceId, String kind, double loadMsPerSecond) {}
