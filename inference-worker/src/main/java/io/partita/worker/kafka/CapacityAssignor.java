package io.partita.worker.kafka;

import io.partita.worker.balance.PartitionShares;
import io.partita.worker.balance.TopicCapacity;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The request consumer group's assignor ({@code worker.assignment=capacity}, the default): each
 * worker tells the group, in its subscription, the planned capacity of its ready slots per request
 * topic ({@link Advertised}); the group's leader shares each topic's partitions out in proportion
 * ({@link PartitionShares}), so a host planned at a third of another's throughput owns a third as
 * many partitions and, with producers spreading requests evenly over partitions (Kafka's
 * partitioner, or the gateway), gets a third as many requests. A worker with no ready slot of a
 * base model owns none of its partitions.
 *
 * <p>Cooperative: a partition moving between two workers is withheld for one round, so its old
 * owner answers and commits what it holds first ({@link PartitionShares#withholdMoving}). When its
 * capacity changes the worker asks for a new round ({@link Advertised#changed}); a worker joining
 * or leaving causes one as always.
 *
 * <p>Listed first with Kafka's cooperative-sticky assignor as the fallback, so a group of workers
 * where some do not know this assignor yet still agrees on one.
 */
public final class CapacityAssignor implements ConsumerPartitionAssignor, Configurable {
  private static final Logger log = LoggerFactory.getLogger(CapacityAssignor.class);
  /** The consumer setting that carries the worker's {@link Advertised} to the assignor Kafka instantiates. */
  public static final String ADVERTISED_CONFIG = "partita.worker.capacity";
  public static final String NAME = "partita-capacity";

  private Advertised advertised = new Advertised(Map::of);

  /**
   * What this worker offers each request topic, as last sent to the group, and as it is now.
   * Shared between the worker (which knows its slots) and the assignor (which sends it).
   */
  public static final class Advertised {
    /** A relative change in a topic's capacity smaller than this does not share its partitions out again. */
    public static final double TOLERANCE = 0.2;
    private final Supplier<Map<String, TopicCapacity>> now;
    private volatile Map<String, TopicCapacity> sent = Map.of();
    /** How many members the group had at the last round, as its leader said; 0 before one said. */
    private volatile int groupSize;

    /** @param now what the worker offers each request topic now (called from the consumer's thread) */
    public Advertised(Supplier<Map<String, TopicCapacity>> now) {
      this.now = now;
    }

    Map<String, TopicCapacity> take(Set<String> topics) {
      Map<String, TopicCapacity> all = now.get();
      SortedMap<String, TopicCapacity> out = new TreeMap<>();
      for (String topic : topics) {
        out.put(topic, all.getOrDefault(topic, TopicCapacity.NONE));
      }
      sent = out;
      return out;
    }

    /**
     * Whether what the worker offers now differs from what it last told the group (see {@link
     * TopicCapacity#differs}) in a way a new round could act on. Alone in its group a worker owns
     * every partition whatever it offers ({@link PartitionShares#weights}), so a round would move
     * nothing and only hold its commits up: then never (a member joining starts a round anyway).
     */
    public boolean changed() {
      Map<String, TopicCapacity> last = sent;
      if (last.isEmpty()) {
        return false; // not joined yet: the first join sends it
      }
      if (groupSize == 1) {
        return false;
      }
      Map<String, TopicCapacity> current = now.get();
      for (Map.Entry<String, TopicCapacity> e : last.entrySet()) {
        if (current.getOrDefault(e.getKey(), TopicCapacity.NONE).differs(e.getValue(), TOLERANCE)) {
          return true;
        }
      }
      return false;
    }

    /**
     * How far this worker's share of a request topic would move, at most over the topics last told
     * to the group, if the group shared them out again now ({@link TopicCapacity#move}); 0 before
     * the first join.
     */
    public double move() {
      Map<String, TopicCapacity> last = sent;
      Map<String, TopicCapacity> current = last.isEmpty() ? Map.of() : now.get();
      double most = 0;
      for (Map.Entry<String, TopicCapacity> e : last.entrySet()) {
        most = Math.max(most, current.getOrDefault(e.getKey(), TopicCapacity.NONE).move(e.getValue()));
      }
      return most;
    }

    /** What was last told to the group, per topic. */
    public Map<String, TopicCapacity> sent() {
      return sent;
    }

    /** How many members the group had at the last round; 0 before the first (or from a leader that did not say). */
    public int groupSize() {
      return groupSize;
    }

    void groupSize(int members) {
      groupSize = members;
    }
  }

  @Override
  public void configure(Map<String, ?> configs) {
    Object value = configs.get(ADVERTISED_CONFIG);
    if (value instanceof Advertised a) {
      advertised = a;
    } else if (value != null) {
      throw new IllegalArgumentException(ADVERTISED_CONFIG + " must be a " + Advertised.class.getName() + ", not " + value.getClass());
    }
  }

  @Override
  public ByteBuffer subscriptionUserData(Set<String> topics) {
    return PartitionShares.encode(advertised.take(topics));
  }

  @Override
  public GroupAssignment assign(Cluster metadata, GroupSubscription group) {
    Map<String, Subscription> members = group.groupSubscription();
    Map<String, Map<String, TopicCapacity>> offers = new HashMap<>();
    for (Map.Entry<String, Subscription> e : members.entrySet()) {
      try {
        offers.put(e.getKey(), PartitionShares.decode(e.getValue().userData()));
      } catch (IllegalArgumentException malformed) {
        log.warn("Member {} sent capacity data that cannot be read ({}); it counts as offering no slots", e.getKey(),
            malformed.getMessage());
        offers.put(e.getKey(), Map.of());
      }
    }
    Map<String, List<TopicPartition>> assigned = new TreeMap<>();
    members.keySet().forEach(m -> assigned.put(m, new ArrayList<>()));
    Map<String, Map<String, TopicCapacity>> byTopic = new TreeMap<>();
    members.forEach((member, subscription) -> subscription.topics().forEach(topic -> byTopic
        .computeIfAbsent(topic, t -> new TreeMap<>())
        .put(member, offers.get(member).getOrDefault(topic, TopicCapacity.NONE))));
    Map<String, Map<String, List<Integer>>> owned = currentOwners(members);
    for (Map.Entry<String, Map<String, TopicCapacity>> e : byTopic.entrySet()) {
      String topic = e.getKey();
      Integer partitions = metadata.partitionCountForTopic(topic);
      if (partitions == null || partitions == 0) {
        continue; // not created yet: nothing to share
      }
      Map<String, List<Integer>> mine = owned.getOrDefault(topic, Map.of());
      SortedMap<String, List<Integer>> target = PartitionShares.share(partitions, e.getValue(), mine);
      PartitionShares.withholdMoving(target, mine).forEach((member, list) ->
          list.forEach(p -> assigned.get(member).add(new TopicPartition(topic, p))));
    }
    Map<String, Assignment> out = new HashMap<>();
    ByteBuffer size = ByteBuffer.allocate(Integer.BYTES).putInt(0, members.size());
    assigned.forEach((member, list) -> out.put(member, new Assignment(list, size.duplicate())));
    return new GroupAssignment(out);
  }

  /**
   * Topic to member to the partitions it owns, from the subscriptions. Two members claiming one
   * partition (one of them fenced without knowing it) resolve to the claim of the later generation.
   */
  private static Map<String, Map<String, List<Integer>>> currentOwners(Map<String, Subscription> members) {
    Map<TopicPartition, String> owner = new HashMap<>();
    Map<TopicPartition, Integer> generation = new HashMap<>();
    members.forEach((member, s) -> {
      int gen = s.generationId().orElse(-1);
      for (TopicPartition tp : s.ownedPartitions()) {
        Integer other = generation.get(tp);
        if (other == null || gen > other) {
          owner.put(tp, member);
          generation.put(tp, gen);
        }
      }
    });
    Map<String, Map<String, List<Integer>>> out = new HashMap<>();
    owner.forEach((tp, member) -> out.computeIfAbsent(tp.topic(), t -> new HashMap<>())
        .computeIfAbsent(member, m -> new ArrayList<>()).add(tp.partition()));
    return out;
  }

  @Override
  public void onAssignment(Assignment assignment, ConsumerGroupMetadata metadata) {
    // The owned partitions need no remembering: the next subscription carries them (cooperative
    // protocol). The group's size, which the leader put beside each assignment, decides whether a
    // change of capacity is worth a round.
    ByteBuffer data = assignment.userData();
    advertised.groupSize(data != null && data.remaining() >= Integer.BYTES ? data.getInt(data.position()) : 0);
  }

  @Override
  public List<RebalanceProtocol> supportedProtocols() {
    return List.of(RebalanceProtocol.COOPERATIVE);
  }

  @Override
  public String name() {
    return NAME;
  }
}
