package io.partita.common.kafka;

import io.partita.common.TopicSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sizes the request topics, one per base model: enough partitions for the instances that serve the
 * base model, never fewer than a configured minimum, and never a function of how many service
 * models (weight files) the base model carries. {@link #partitions} is the pure rule;
 * {@link #ensure} creates a missing topic with that count and grows an existing one that has fewer
 * partitions. A topic is never shrunk (Kafka cannot), so a plan with fewer instances leaves it as is.
 */
public final class RequestTopics {
  private static final Logger log = LoggerFactory.getLogger(RequestTopics.class);

  /** Partitions of a request topic before any plan says more ({@code topic.requests.partitions}). */
  public static final int DEFAULT_MIN_PARTITIONS = 4;
  /** The setting that names the minimum. */
  public static final String MIN_PARTITIONS_KEY = "topic.requests.partitions";

  private RequestTopics() {}

  /**
   * Partitions per planned slot. The workers share a topic's partitions out in proportion to their
   * slots' planned capacity, and a share can only be a whole number of partitions: with one
   * partition per slot, two hosts of one slot each could only split 1:1 whatever their speeds;
   * with four, a host's share is within an eighth of its capacity share (largest remainder). An
   * idle partition costs a few bytes per fetch.
   */
  public static final int PARTITIONS_PER_SLOT = 4;

  /**
   * Partitions a base model's request topic needs: {@link #PARTITIONS_PER_SLOT} per slot (so the
   * consumer group can give every worker serving it a share close to its capacity share), at least
   * {@code minimum}.
   *
   * @param instances the slots the plan gives the base model, over all hosts
   */
  public static int partitions(int instances, int minimum) {
    if (minimum < 1) {
      throw new IllegalArgumentException(MIN_PARTITIONS_KEY + ": must be >= 1, was " + minimum);
    }
    return (int) Math.min(100_000, Math.max(minimum, (long) Math.max(0, instances) * PARTITIONS_PER_SLOT));
  }

  /**
   * Creates each missing request topic with its wanted partitions, and grows each existing one that
   * has fewer. Infrastructure failures are thrown.
   *
   * @param wanted topic name to partitions wanted
   * @return the topics grown, with their new count (empty when nothing changed)
   */
  public static Map<String, Integer> ensure(Admin admin, Map<String, Integer> wanted, short replication) {
    List<TopicSpec> specs = new ArrayList<>();
    wanted.forEach((topic, n) -> specs.add(TopicSpec.stream(topic, n)));
    TopicAdmin.ensure(admin, specs, replication);
    Map<String, Integer> grown = new TreeMap<>();
    try {
      Map<String, TopicDescription> now = admin.describeTopics(wanted.keySet()).allTopicNames().get(30, TimeUnit.SECONDS);
      Map<String, NewPartitions> grow = new HashMap<>();
      now.forEach((topic, d) -> {
        int want = wanted.get(topic);
        if (d.partitions().size() < want) {
          grow.put(topic, NewPartitions.increaseTo(want));
          grown.put(topic, want);
        }
      });
      if (grow.isEmpty()) {
        return grown;
      }
      try {
        admin.createPartitions(grow).all().get(30, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        // another component grew it at the same time: the count is already at least what we asked
        if (!(e.getCause() instanceof InvalidPartitionsException)) {
          throw e;
        }
      }
      log.info("Grew request topics to {} partitions", grown);
      return grown;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sizing request topics", e);
    } catch (ExecutionException | TimeoutException e) {
      Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      throw new IllegalStateException("cannot size the request topics " + wanted.keySet() + ": " + cause, e);
    }
  }
}
