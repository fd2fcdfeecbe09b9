package io.partita.common;

/** How one topic is created: partitions, and whether it is compacted (current state) or a stream. */
public record TopicSpec(String name, int partitions, boolean compacted) {
  public static TopicSpec compacted(String name) {
    return new TopicSpec(name, 1, true);
  }

  public static TopicSpec stream(String name, int partitions) {
    return new TopicSpec(name, partitions, false);
  }
}
