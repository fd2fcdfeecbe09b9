package io.partita.common.kafka;

import io.partita.common.TopicSpec;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Creates the topics a component needs when they are missing; existing topics are left alone. */
public final class TopicAdmin {
  private static final Logger log = LoggerFactory.getLogger(TopicAdmin.class);

  private TopicAdmin() {}

  /** Kafka's default record limit of a topic ({@code message.max.bytes}, 1 MiB and 12 bytes). */
  public static final long DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

  /**
   * The largest record the broker accepts on {@code topic} (its {@code max.message.bytes}), or
   * {@link #DEFAULT_MAX_MESSAGE_BYTES} when it cannot be read (logged); a topic the broker does not
   * know yet is asked for again for up to {@value #UNKNOWN_TOPIC_WAIT_MS} ms.
   */
  public static long maxMessageBytes(Admin admin, String topic) {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(UNKNOWN_TOPIC_WAIT_MS);
    while (true) {
      try {
        ConfigEntry entry = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource)
            .get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
        if (entry != null && entry.value() != null) {
          return Long.parseLong(entry.value());
        }
        return DEFAULT_MAX_MESSAGE_BYTES;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return DEFAULT_MAX_MESSAGE_BYTES;
      } catch (Exception e) {
        // A topic created a moment ago (the gateway creates its reply topic, then reads its limit)
        // is committed by the controller before the broker answering here has applied it: until
        // then the broker calls it unknown. Ask again for a few seconds before assuming the default.
        // A fixed 100 ms poll is the wait: the Admin API has no call that waits for a broker to
        // apply a topic, and this runs once, at the gateway's start, bounded by the 5 s deadline.
        if (e.getCause() instanceof UnknownTopicOrPartitionException && System.nanoTime() < deadline) {
          try {
            Thread.sleep(UNKNOWN_TOPIC_RETRY_MS);
            continue;
          } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
          }
        }
        log.warn("Could not read max.message.bytes of {} ({}); assuming Kafka's default {}", topic, e.toString(), DEFAULT_MAX_MESSAGE_BYTES);
        return DEFAULT_MAX_MESSAGE_BYTES;
      }
    }
  }

  /** How long {@link #maxMessageBytes} waits for a broker to learn of a topic just created. */
  static final long UNKNOWN_TOPIC_WAIT_MS = 5_000;
  private static final long UNKNOWN_TOPIC_RETRY_MS = 100;

  /**
   * Creates the missing topics with the given replication factor (capped at the number of brokers,
   * so one broker works). Infrastructure failures are thrown; an existing topic is not an error.
   */
  public static void ensure(Admin admin, Collection<TopicSpec> specs, short replication) {
    try {
      int brokers = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size();
      short factor = (short) Math.max(1, Math.min(replication, brokers));
      Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
      List<NewTopic> missing = new ArrayList<>();
      for (TopicSpec spec : specs) {
        if (!existing.contains(spec.name())) {
          NewTopic topic = new NewTopic(spec.name(), spec.partitions(), factor);
          if (spec.compacted()) {
            topic.configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
          }
          missing.add(topic);
        }
      }
      if (missing.isEmpty()) {
        return;
      }
      try {
        admin.createTopics(missing).all().get(30, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)) {
          throw e;
        }
      }
      log.info("Created {} topics: {}", missing.size(), missing.stream().map(NewTopic::name).toList());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while creating topics", e);
    } catch (ExecutionException | TimeoutException e) {
      Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      throw new IllegalStateException("cannot create topics on the Kafka cluster: " + cause.getClass().getSimpleName()
          + (cause.getMessage() == null ? " (no answer in time: check kafka.bootstrap.servers and the security settings)" : ": " + cause.getMessage()), e);
    }
  }
}
