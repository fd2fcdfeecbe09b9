package io.partita.planning.mapping;

/**
 * How one service was mapped: both schemes' mappings and costs, the one chosen and why.
 *
 * @param demandMsPerSecond {@code sum_m rate_m * min_r T[m][r]}: the order services are planned in
 */
public record ServiceMapping(
    String serviceId,
    double demandMsPerSecond,
    SchemeMapping modelFirst,
    SchemeMapping hardwareFirst,
    MappingScheme chosen,
    String why) {}
