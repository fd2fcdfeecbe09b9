package io.partita.planner.replay;

/** One record read back from a planner input topic: where it was and what it held. */
public record Recorded(String topic, int partition, long offset, long timestamp, String key, byte[] value) {}
