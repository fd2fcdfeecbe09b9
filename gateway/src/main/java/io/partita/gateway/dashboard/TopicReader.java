package io.partita.gateway.dashboard;

import io.partita.common.health.Fatal;
import io.partita.common.health.Loop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard's one background reader: a plain consumer (assigned, no group, nothing committed)
 * that reads the compacted topics from their beginning and the stream topics from their last
 * records ({@code timings} records of {@code profile.timings}, {@code deadLetters} of the dead-letter
 * topic), and feeds every record to {@link DashboardState}. Its {@link Loop} is ready once it has
 * read up to the end offsets it found at start; it dies (and the dashboard says so) on a fault.
 */
final class TopicReader implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TopicReader.class);

  private final Consumer<String, byte[]> consumer;
  private final DashboardState state;
  private final Map<String, Integer> lastRecords;
  private final Loop loop;
  private volatile boolean running = true;

  /**
   * @param lastRecords how many records to read back from the end of each stream topic (per
   *     partition); the table topics are always read whole
   */
  TopicReader(Consumer<String, byte[]> consumer, DashboardState state, Map<String, Integer> lastRecords, Loop loop) {
    this.consumer = consumer;
    this.state = state;
    this.lastRecords = Map.copyOf(lastRecords);
    this.loop = loop;
  }

  @Override
  public void run() {
    try {
      loop.notReady("reading the topics up to their end");
      List<TopicPartition> partitions = new ArrayList<>();
      List<String> topics = new ArrayList<>(state.tableTopics());
      topics.addAll(state.streamTopics());
      for (String topic : topics) {
        List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(10));
        if (infos != null) {
          infos.forEach(i -> partitions.add(new TopicPartition(i.topic(), i.partition())));
        }
      }
      consumer.assign(partitions);
      Map<TopicPartition, Long> begin = consumer.beginningOffsets(partitions);
      Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(partitions));
      for (TopicPartition tp : partitions) {
        Integer last = lastRecords.get(tp.topic());
        consumer.seek(tp, last == null ? begin.get(tp) : Math.max(begin.get(tp), end.get(tp) - last));
      }
      boolean caughtUp = false;
      while (running) {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          state.apply(r.topic(), r.key(), r.value(), r.offset(), r.timestamp());
        }
        if (!caughtUp) {
          end.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
          if (end.isEmpty()) {
            caughtUp = true;
            loop.ready();
            log.info("Dashboard caught up on {} partitions ({} records could not be decoded)", partitions.size(), state.undecodable());
          }
        }
      }
      loop.stopped();
    } catch (WakeupException e) {
      loop.stopped();
    } catch (RuntimeException | Error e) {
      Fatal.haltIfFatal("dashboard reader", e);
      loop.died(e);
      log.error("The dashboard's topic reader stopped; the page shows what it had read", e);
    } finally {
      consumer.close(Duration.ofSeconds(2));
    }
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
  }
}
