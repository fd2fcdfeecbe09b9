package io.partita.worker.balance;

/**
 * What one worker offers one request topic (one base model): its ready slots of that base model
 * and the throughput the plan expects of them.
 *
 * @param capacity items per second the plan expects of the slots whose capacity is known
 * @param slots ready slots of the base model on this worker
 * @param unknown how many of those slots have no planned capacity (a default placement, a
 *     worker not following a plan)
 */
public record TopicCapacity(double capacity, int slots, int unknown) {
  public static final TopicCapacity NONE = new TopicCapacity(0, 0, 0);

  public TopicCapacity {
    if (!(capacity >= 0) || Double.isInfinite(capacity) || slots < 0 || unknown < 0 || unknown > slots) {
      throw new IllegalArgumentException("capacity " + capacity + ", slots " + slots + ", unknown " + unknown);
    }
  }

  /** Whether every slot has a planned capacity and together they offer some. */
  public boolean known() {
    return slots > 0 && unknown == 0 && capacity > 0;
  }

  /**
   * Whether {@code other} differs enough to share the partitions out again: slots came or went, a
   * capacity became known or unknown, or the capacity moved by more than {@code tolerance}
   * (relative). Smaller moves are left alone: each re-share moves partitions between workers.
   */
  public boolean differs(TopicCapacity other, double tolerance) {
    if (slots != other.slots || unknown != other.unknown) {
      return true;
    }
    double larger = Math.max(capacity, other.capacity);
    return larger > 0 && Math.abs(capacity - other.capacity) > tolerance * larger;
  }

  /**
   * How far this worker's weight in the group's share ({@link PartitionShares#weights}) moves from
   * {@code before} to this, relative to the larger, from 0 to 1, while the other members stay: by
   * capacity when both are known, by ready slots otherwise (an unsized slot weighs what the group's
   * smallest sized slot does, which this worker alone cannot know); 1 when slots came from or went
   * to none, or a capacity became known or unknown. Only says how large a re-share is (its log line).
   */
  public double move(TopicCapacity before) {
    if (slots == 0 && before.slots == 0) {
      return 0;
    }
    if (slots == 0 || before.slots == 0 || known() != before.known()) {
      return 1;
    }
    double now = known() ? capacity : slots;
    double then = known() ? before.capacity : before.slots;
    return Math.abs(now - then) / Math.max(now, then);
  }
}
