package io.partita.planning.grouping;

/** A measured size that no eligible grouping may use, and why. */
public record SizeExclusion(int size, String reason) {}
