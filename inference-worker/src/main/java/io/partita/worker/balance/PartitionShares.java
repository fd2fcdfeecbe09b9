package io.partita.worker.balance;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Shares one topic's partitions out among the group's members in proportion to their weights.
 *
 * <p><b>Weights.</b> A member's weight for a topic is the planned capacity (items/s) of its ready
 * slots of the topic's base model. A slot the plan did not size (a start-up slot of a host that
 * just joined, a default placement) counts as the group's smallest sized slot: a host cannot be
 * assumed faster than any host measured, so one that joins takes no more than that share until
 * its plan's slots are ready, rather than a share by slot count while it is still starting. While
 * no slot in the group is sized, the weight is the number of ready slots. A member with no ready
 * slot of the topic's base model weighs 0 and gets no partition of it. When every weight is 0 (no
 * slot anywhere) every subscribed member weighs the same, so requests are served before any plan
 * exists.
 *
 * <p><b>Counts</b> follow the largest-remainder method: member {@code m} gets {@code floor(N w_m /
 * W)} partitions, and the partitions left over go to the largest remainders (ties: the smaller
 * member id). So each count is within one partition of its exact share, and the counts add up to
 * {@code N}.
 *
 * <p><b>Which partitions</b>: a member keeps the partitions it owns now, up to its count (lowest
 * first); the others go, lowest first, to the members still short of their count, in member-id
 * order. So a re-share after a small capacity change moves few partitions, and the result is a
 * function of its inputs alone (every member computing it gets the same answer).
 */
public final class PartitionShares {
  private PartitionShares() {}

  /** The weight of each member for one topic, from what each offers it (see the class comment). */
  public static SortedMap<String, Double> weights(Map<String, TopicCapacity> offers) {
    boolean anySlots = false;
    double smallestSized = Double.POSITIVE_INFINITY; // the capacity of the group's smallest sized slot
    for (TopicCapacity offer : offers.values()) {
      anySlots |= offer.slots() > 0;
      int sized = offer.slots() - offer.unknown();
      if (sized > 0 && offer.capacity() > 0) {
        smallestSized = Math.min(smallestSized, offer.capacity() / sized);
      }
    }
    boolean anySized = smallestSized < Double.POSITIVE_INFINITY;
    SortedMap<String, Double> out = new TreeMap<>();
    for (Map.Entry<String, TopicCapacity> e : offers.entrySet()) {
      TopicCapacity offer = e.getValue();
      double weight;
      if (!anySlots) {
        weight = 1.0;
      } else if (!anySized) {
        weight = offer.slots();
      } else {
        weight = offer.capacity() + offer.unknown() * smallestSized;
      }
      out.put(e.getKey(), weight);
    }
    return out;
  }

  /** How many partitions each member gets: largest remainder, ties to the smaller member id. */
  public static SortedMap<String, Integer> counts(int partitions, Map<String, Double> weights) {
    SortedMap<String, Integer> out = new TreeMap<>();
    double total = 0;
    for (double w : weights.values()) {
      if (!(w >= 0) || Double.isInfinite(w)) {
        throw new IllegalArgumentException("weights must be finite and >= 0: " + weights);
      }
      total += w;
    }
    if (weights.isEmpty()) {
      return out;
    }
    if (total == 0) {
      throw new IllegalArgumentException("at least one weight must be positive: " + weights);
    }
    List<Map.Entry<String, Double>> remainders = new ArrayList<>();
    int given = 0;
    for (Map.Entry<String, Double> e : new TreeMap<>(weights).entrySet()) {
      double exact = partitions * e.getValue() / total;
      int floor = (int) Math.floor(exact);
      out.put(e.getKey(), floor);
      given += floor;
      remainders.add(Map.entry(e.getKey(), exact - floor));
    }
    remainders.sort(Map.Entry.<String, Double>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()));
    for (int i = 0; given < partitions; i++, given++) {
      out.merge(remainders.get(i % remainders.size()).getKey(), 1, Integer::sum);
    }
    return out;
  }

  /**
   * Which partitions of {@code 0..partitions-1} each member gets.
   *
   * @param offers what each subscribed member offers the topic
   * @param owned the partitions each member owns now (may name members or partitions no longer there)
   * @return every member of {@code offers}, with its partitions ascending (possibly none)
   */
  public static SortedMap<String, List<Integer>> share(int partitions, Map<String, TopicCapacity> offers,
      Map<String, ? extends Collection<Integer>> owned) {
    SortedMap<String, List<Integer>> out = new TreeMap<>();
    if (offers.isEmpty()) {
      return out;
    }
    SortedMap<String, Integer> counts = counts(partitions, weights(offers));
    Set<Integer> taken = new TreeSet<>();
    for (String member : counts.keySet()) {
      List<Integer> kept = new ArrayList<>();
      Collection<Integer> mine = owned.get(member);
      for (int p : mine == null ? new TreeSet<Integer>() : new TreeSet<>(mine)) {
        if (kept.size() < counts.get(member) && p >= 0 && p < partitions && taken.add(p)) {
          kept.add(p);
        }
      }
      out.put(member, kept);
    }
    int next = 0;
    for (String member : counts.keySet()) {
      List<Integer> list = out.get(member);
      while (list.size() < counts.get(member)) {
        while (taken.contains(next)) {
          next++;
        }
        taken.add(next);
        list.add(next);
      }
      list.sort(null);
    }
    return out;
  }

  /**
   * The cooperative protocol's rule: a partition that moves from one member to another is given to
   * nobody in this round. Its old owner, not finding it in its assignment, finishes and commits it,
   * gives it up and asks for another round, in which it is free and goes to its new owner. So a
   * partition is never read by two members at once.
   *
   * @param target the partitions each member should own
   * @param owned the partitions each member owns now
   * @return {@code target} less the partitions another current member still owns
   */
  public static SortedMap<String, List<Integer>> withholdMoving(Map<String, List<Integer>> target,
      Map<String, ? extends Collection<Integer>> owned) {
    Map<Integer, String> ownerOf = new TreeMap<>();
    owned.forEach((member, list) -> {
      if (target.containsKey(member)) {
        list.forEach(p -> ownerOf.put(p, member));
      }
    });
    SortedMap<String, List<Integer>> out = new TreeMap<>();
    target.forEach((member, list) -> {
      List<Integer> kept = new ArrayList<>();
      for (int p : list) {
        String owner = ownerOf.get(p);
        if (owner == null || owner.equals(member)) {
          kept.add(p);
        }
      }
      out.put(member, kept);
    });
    return out;
  }

  /** Encodes what a member offers each topic, for its subscription in the group protocol. */
  public static ByteBuffer encode(Map<String, TopicCapacity> offers) {
    List<byte[]> names = new ArrayList<>();
    int size = 2 + 4;
    SortedMap<String, TopicCapacity> sorted = new TreeMap<>(offers);
    for (String topic : sorted.keySet()) {
      byte[] name = topic.getBytes(StandardCharsets.UTF_8);
      names.add(name);
      size += 2 + name.length + 8 + 4 + 4;
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.putShort(VERSION).putInt(sorted.size());
    int i = 0;
    for (TopicCapacity offer : sorted.values()) {
      byte[] name = names.get(i++);
      out.putShort((short) name.length).put(name).putDouble(offer.capacity()).putInt(offer.slots()).putInt(offer.unknown());
    }
    return out.flip();
  }

  /**
   * Decodes {@link #encode}'s bytes; a member that sent none (or bytes of another version) offers
   * nothing known, which {@link #weights} treats as a member without slots unless nobody has any.
   *
   * @throws IllegalArgumentException when the bytes are cut short or malformed
   */
  public static SortedMap<String, TopicCapacity> decode(ByteBuffer bytes) {
    SortedMap<String, TopicCapacity> out = new TreeMap<>();
    if (bytes == null || bytes.remaining() == 0) {
      return out;
    }
    ByteBuffer in = bytes.duplicate();
    try {
      if (in.getShort() != VERSION) {
        return out;
      }
      int count = in.getInt();
      if (count < 0 || count > in.remaining() / 18) {
        throw new IllegalArgumentException("capacity data names " + count + " topics in " + bytes.remaining() + " bytes");
      }
      for (int i = 0; i < count; i++) {
        int length = in.getShort();
        if (length < 0 || length > in.remaining()) {
          throw new IllegalArgumentException("capacity data: a topic name of " + length + " bytes");
        }
        byte[] name = new byte[length];
        in.get(name);
        out.put(new String(name, StandardCharsets.UTF_8), new TopicCapacity(in.getDouble(), in.getInt(), in.getInt()));
      }
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException("capacity data cut short (" + bytes.remaining() + " bytes)", e);
    }
    return out;
  }

  private static final short VERSION = 1;
}
