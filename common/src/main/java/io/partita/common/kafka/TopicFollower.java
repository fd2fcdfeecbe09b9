package io.partita.common.kafka;

import io.partita.common.health.Fatal;
import io.partita.common.health.LoopGuard;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows topics with a plain consumer: assigned, never subscribed (no group, nothing committed),
 * from their beginning (a compacted table read whole at every start) or from their end (a reply
 * topic). The one place that knows how: the reader it feeds only decodes a record and applies it.
 *
 * <p>What it guarantees:
 *
 * <ul>
 *   <li><b>Caught up</b>: {@link #caughtUp()} completes (and {@link Reader#caughtUp()} is called
 *       once, on the follower's thread) when every partition has been read up to the end offset it
 *       had when the follower assigned it; at once for a topic followed from its end. With a
 *       {@code read_committed} consumer (the caller's choice) that end is the last stable offset.
 *   <li><b>Skipping</b>: a record the reader cannot apply (it throws anything) is counted, warned
 *       about in the {@link LoopGuard}'s summary, handed to {@link Reader#skipped} (where a reader
 *       dead-letters it or counts its own metric), and passed over. A record the consumer cannot
 *       deserialize is counted and passed over too (there is no record to hand over). No one record
 *       stops it.
 *   <li><b>Readiness</b>: the guard's loop is NOT_READY ("reading t up to its end") until caught up,
 *       READY from then on after every good pass, NOT_READY with the reason while a fault lasts.
 *   <li><b>Faults</b>: a failing consumer ({@link KafkaException}: a poll, the metadata, a topic
 *       with no partitions after {@link Settings#partitionWait}) either is retried after a back-off
 *       that doubles from {@link Faults#firstBackOffMs} up to {@link Faults#maxBackOffMs}, or ends
 *       the follower ({@link Faults#STOP}). Anything else ends it. An ending by a fault is
 *       {@link LoopGuard#died}, {@link #caughtUp()} completes exceptionally and the reader hears it
 *       in {@link Reader#ended}; a {@link VirtualMachineError} ends the process.
 *   <li><b>New partitions</b>: every {@link Settings#discoverEvery} it looks for partitions added to
 *       its topics since it started and reads them from their beginning (whatever is on them was
 *       written after it started). It sees them once its consumer's metadata does
 *       ({@code metadata.max.age.ms}, 5 minutes by default).
 *   <li><b>Close</b>: {@link #close()} stops it within a poll (the consumer is woken), joins the
 *       thread {@link #start} made, and the consumer is closed on the follower's thread.
 * </ul>
 *
 * <p>The variations it supports are those of the readers built on it, and no more:
 *
 * <table>
 *   <caption>Readers on a follower</caption>
 *   <tr><th>reader</th><th>topics, start</th><th>isolation</th><th>on a tombstone</th><th>faults</th><th>hooks</th></tr>
 *   <tr><td>gateway {@code CatalogReader}</td><td>catalog models and services, beginning</td><td>uncommitted</td>
 *       <td>removes the key</td><td>retried, 1 s</td><td>rebuilds the view after each poll with records</td></tr>
 *   <tr><td>gateway {@code RouteTable}</td><td>routes, beginning</td><td>read_committed</td><td>removes the key</td>
 *       <td>retried, 1 s</td><td></td></tr>
 *   <tr><td>gateway {@code JobStore}</td><td>job status, beginning</td><td>uncommitted</td><td>ignored</td>
 *       <td>retried, 1 s</td><td>a status no runner could run is skipped</td></tr>
 *   <tr><td>gateway {@code ReplyRouter}</td><td>its reply topic, end</td><td>uncommitted</td><td>(a reply)</td>
 *       <td>retried, 1 s</td><td>fails the waiting calls when it ends</td></tr>
 *   <tr><td>worker {@code CatalogSnapshot}</td><td>catalog models and services, beginning, once
 *       ({@link #readToEnd})</td><td>uncommitted</td><td>removes the key</td><td>thrown to the caller</td><td></td></tr>
 *   <tr><td>worker {@code PlanFollower}</td><td>plan assignments, beginning</td><td>read_committed</td>
 *       <td>removes the key</td><td>retried, 100 ms doubling to 10 s</td><td>hands over on a quiet poll</td></tr>
 *   <tr><td>planner {@code RequestTopicGrower}</td><td>plan assignments, beginning</td><td>read_committed</td>
 *       <td>removes the key</td><td>ends it</td><td>resizes on a quiet poll</td></tr>
 *   <tr><td>profiler {@code SlotStatusFollower}</td><td>slot status, beginning</td><td>uncommitted</td>
 *       <td>removes this host's slot</td><td>ends it: measuring goes on unchecked</td><td></td></tr>
 * </table>
 *
 * A "quiet" poll ({@link Reader#quiet}) is one that found nothing: the records of one planner
 * transaction arrive together, so a reader that acts on a quiet poll never acts on half of one.
 * What it does not do: consumer groups, commits, seeking back, or a start other than the beginning
 * or the end of every followed topic (the gateway dashboard's reader reads the last records of its
 * stream topics, so it keeps its own loop).
 */
public final class TopicFollower implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TopicFollower.class);
  private static final Duration CLOSE = Duration.ofSeconds(2);
  private static final Duration ASK = Duration.ofSeconds(5);
  private static final long JOIN_MS = 60_000;

  /** What a follower feeds: decode a record and apply it. Every method runs on the follower's thread. */
  @FunctionalInterface
  public interface Reader {
    /** Decodes one record (a tombstone has a null value) and applies it; throws when it cannot. */
    void apply(ConsumerRecord<String, byte[]> record) throws Exception;

    /** After {@link #apply} threw: the record is passed over (already counted and warned about). */
    default void skipped(ConsumerRecord<String, byte[]> record, Throwable cause) {}

    /** After a poll that brought records, once each was applied or skipped. */
    default void applied() {}

    /** After a poll that found nothing: nothing more to read for now. */
    default void quiet() {}

    /** Once, when every partition is read to the end it had at start. */
    default void caughtUp() {}

    /** Once, when the follower ends: {@code failure} is null when it was closed. */
    default void ended(Throwable failure) {}

    /**
     * A reader that acts once per change rather than once per record: {@code fold} takes each
     * record into the reader's state and says whether the state changed (it throws on a record it
     * cannot decode), and {@code act} runs on the next quiet poll after a change, so never on half
     * of a transaction.
     */
    static Reader actingWhenQuiet(Fold fold, Runnable act) {
      return new Reader() {
        private boolean changed;

        @Override
        public void apply(ConsumerRecord<String, byte[]> record) throws Exception {
          changed |= fold.take(record);
        }

        @Override
        public void quiet() {
          if (changed) {
            changed = false;
            act.run();
          }
        }
      };
    }
  }

  /** Takes one record into a reader's state; whether the state changed. Throws on a record it cannot decode. */
  @FunctionalInterface
  public interface Fold {
    boolean take(ConsumerRecord<String, byte[]> record) throws Exception;
  }

  /** Where the follower starts in every followed topic. */
  public enum Start { BEGINNING, END }

  /**
   * What the follower does with a failing consumer: retry after a back-off that doubles from
   * {@code firstBackOffMs} up to {@code maxBackOffMs}, or not ({@link #STOP}).
   */
  public record Faults(boolean retry, long firstBackOffMs, long maxBackOffMs) {
    /** A failing consumer ends the follower. */
    public static final Faults STOP = new Faults(false, 0, 0);

    public static Faults retry(long firstBackOffMs, long maxBackOffMs) {
      if (firstBackOffMs <= 0 || maxBackOffMs < firstBackOffMs) {
        throw new IllegalArgumentException("back-off must be positive and first <= max, was " + firstBackOffMs + ".." + maxBackOffMs);
      }
      return new Faults(true, firstBackOffMs, maxBackOffMs);
    }
  }

  /**
   * @param topics the topics followed
   * @param start where in them
   * @param records what one record is, for warnings ({@code "a route record"})
   * @param poll the longest poll
   * @param faults retry or stop on a failing consumer
   * @param partitionWait how long a topic may have no partitions at start (it was created a moment
   *     ago) before that is a fault
   * @param discoverEvery how often to look for new partitions
   */
  public record Settings(List<String> topics, Start start, String records, Duration poll, Faults faults,
      Duration partitionWait, Duration discoverEvery) {
    public Settings {
      topics = List.copyOf(topics);
      if (topics.isEmpty()) {
        throw new IllegalArgumentException("a follower needs at least one topic");
      }
    }

    /**
     * The topics from their beginning; polls of 100 ms, faults retried every second
     * ({@link LoopGuard#BACK_OFF_MS}), 30 s for partitions to appear, new ones looked for every 30 s.
     */
    public static Settings fromBeginning(String records, String... topics) {
      return new Settings(List.of(topics), Start.BEGINNING, records, Duration.ofMillis(100),
          Faults.retry(LoopGuard.BACK_OFF_MS, LoopGuard.BACK_OFF_MS), Duration.ofSeconds(30), Duration.ofSeconds(30));
    }

    /** As {@link #fromBeginning}, from the end: only what is written from now on is read. */
    public static Settings fromEnd(String records, String... topics) {
      Settings s = fromBeginning(records, topics);
      return new Settings(s.topics, Start.END, records, s.poll, s.faults, s.partitionWait, s.discoverEvery);
    }

    public Settings withPoll(Duration poll) {
      return new Settings(topics, start, records, poll, faults, partitionWait, discoverEvery);
    }

    public Settings withFaults(Faults faults) {
      return new Settings(topics, start, records, poll, faults, partitionWait, discoverEvery);
    }

    public Settings withPartitionWait(Duration partitionWait) {
      return new Settings(topics, start, records, poll, faults, partitionWait, discoverEvery);
    }

    public Settings withDiscoverEvery(Duration discoverEvery) {
      return new Settings(topics, start, records, poll, faults, partitionWait, discoverEvery);
    }

    /** "t" or "t1 and t2", for reasons and messages. */
    String names() {
      return String.join(" and ", topics);
    }
  }

  private final Consumer<String, byte[]> consumer;
  private final Settings settings;
  private final LoopGuard guard;
  private final Reader reader;
  private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();
  private final CountDownLatch closing = new CountDownLatch(1);
  private volatile boolean running = true;
  private volatile boolean following;
  private volatile Thread thread;
  private Set<TopicPartition> assigned = Set.of();
  private Map<TopicPartition, Long> behind = new HashMap<>();
  private long nextDiscovery;

  /**
   * @param consumer String keys and byte-array values, no group; its isolation level is the
   *     caller's; closed by the follower
   * @param guard the follower's loop: readiness, skip counts, summarised warnings
   */
  public TopicFollower(Consumer<String, byte[]> consumer, Settings settings, LoopGuard guard, Reader reader) {
    this.consumer = consumer;
    this.settings = settings;
    this.guard = guard;
    this.reader = reader;
  }

  /** Runs the follower on a daemon thread of its own, which {@link #close()} joins. */
  public void start(String threadName) {
    Thread t = new Thread(this, threadName);
    t.setDaemon(true);
    thread = t;
    t.start();
  }

  /** Completes once every partition has been read to the end it had at start; exceptionally when the follower dies first. */
  public CompletableFuture<Void> caughtUp() {
    return caughtUp;
  }

  /** Whether the topics are assigned and the follower has not ended (records can arrive). */
  public boolean following() {
    return following;
  }

  /** Follows until closed, on the calling thread (or the one {@link #start} made). */
  @Override
  public void run() {
    Throwable failure = null;
    try {
      follow(false, 0);
    } catch (Throwable e) {
      Fatal.haltIfFatal(guard.name(), e);
      caughtUp.completeExceptionally(e);
      if (running) {
        failure = e;
        guard.died(e);
      }
    } finally {
      following = false;
      if (failure == null) {
        guard.stopped();
      }
      guard.flushAll();
      try {
        reader.ended(failure);
      } finally {
        consumer.close(CLOSE);
      }
    }
  }

  /**
   * Reads to the end the topics had at start, on the calling thread, then closes the consumer: a
   * snapshot, not a follower. Faults are thrown (with {@link Faults#STOP}) or retried until
   * {@code timeout}. Returns whether the end was reached within {@code timeout}.
   */
  public boolean readToEnd(Duration timeout) {
    try {
      follow(true, System.nanoTime() + timeout.toNanos());
      return caughtUp.isDone();
    } finally {
      following = false;
      guard.flushAll();
      consumer.close(CLOSE);
    }
  }

  /** Follows until closed, or ({@code once}) until caught up or the {@code System.nanoTime()} deadline. */
  private void follow(boolean once, long deadline) {
    long backOffMs = settings.faults().firstBackOffMs();
    while (running) {
      if (once && (caughtUp.isDone() || System.nanoTime() - deadline > 0)) {
        return;
      }
      try {
        if (!following) {
          assign(once ? deadline - System.nanoTime() : settings.partitionWait().toNanos());
        } else {
          discover();
        }
        take(consumer.poll(settings.poll()));
        checkCaughtUp();
        backOffMs = settings.faults().firstBackOffMs();
        if (caughtUp.isDone()) {
          guard.ready();
        }
        guard.flush();
      } catch (RecordDeserializationException e) {
        // Not one of Partita's deserializers can fail, but a user's kafka.* settings could swap them.
        guard.skipped(settings.records(), e.topicPartition().topic(), e.topicPartition().partition(), e.offset(), e);
        consumer.seek(e.topicPartition(), e.offset() + 1);
      } catch (KafkaException e) {
        if (!running) {
          return; // close() woke the consumer
        }
        if (!settings.faults().retry()) {
          throw e;
        }
        guard.faulted("reading " + settings.names(), e);
        if (!pause(backOffMs)) {
          return;
        }
        backOffMs = Math.min(settings.faults().maxBackOffMs(), backOffMs * 2);
      }
    }
  }

  /** Assigns every partition of the followed topics, waiting up to {@code waitNanos} (at most the partition wait) for them. */
  private void assign(long waitNanos) {
    Duration wait = Duration.ofNanos(Math.max(0, Math.min(waitNanos, settings.partitionWait().toNanos())));
    List<TopicPartition> partitions = new ArrayList<>();
    for (String topic : settings.topics()) {
      List<TopicPartition> found = KafkaClients.partitionsOf(consumer, topic, wait);
      if (found.isEmpty()) {
        throw new UnknownTopicOrPartitionException("topic " + topic + " has no partitions after " + wait.toMillis() / 1000.0 + " s");
      }
      partitions.addAll(found);
    }
    consumer.assign(partitions);
    if (settings.start() == Start.END) {
      consumer.seekToEnd(partitions);
      partitions.forEach(consumer::position); // resolve the end now: nothing written after this is missed
    } else {
      consumer.seekToBeginning(partitions);
    }
    behind = new HashMap<>(consumer.endOffsets(partitions));
    assigned = Set.copyOf(partitions);
    nextDiscovery = System.nanoTime() + settings.discoverEvery().toNanos();
    following = true;
    checkCaughtUp();
    if (caughtUp.isDone()) {
      guard.ready();
    } else {
      guard.notReady("reading " + settings.names() + " up to " + (settings.topics().size() == 1 ? "its end" : "their ends"));
    }
  }

  /** Assigns partitions added to the followed topics since the last look, from their beginning. */
  private void discover() {
    if (System.nanoTime() - nextDiscovery < 0) {
      return;
    }
    nextDiscovery = System.nanoTime() + settings.discoverEvery().toNanos();
    List<TopicPartition> added = new ArrayList<>();
    for (String topic : settings.topics()) {
      for (PartitionInfo p : consumer.partitionsFor(topic, ASK)) {
        TopicPartition tp = new TopicPartition(p.topic(), p.partition());
        if (!assigned.contains(tp)) {
          added.add(tp);
        }
      }
    }
    if (added.isEmpty()) {
      return;
    }
    Set<TopicPartition> all = new HashSet<>(assigned);
    all.addAll(added);
    consumer.assign(all); // keeps the positions of the partitions already assigned
    consumer.seekToBeginning(added);
    assigned = Set.copyOf(all);
    log.info("Loop {} follows {} new partition(s): {}", guard.name(), added.size(), added);
  }

  private void take(ConsumerRecords<String, byte[]> records) {
    if (records.isEmpty()) {
      reader.quiet();
      return;
    }
    for (ConsumerRecord<String, byte[]> record : records) {
      try {
        reader.apply(record);
      } catch (Throwable e) {
        guard.skipped(settings.records(), record.topic(), record.partition(), record.offset(), e);
        reader.skipped(record, e);
      }
    }
    reader.applied();
  }

  private void checkCaughtUp() {
    if (caughtUp.isDone()) {
      return;
    }
    behind.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
    if (behind.isEmpty()) {
      reader.caughtUp();
      caughtUp.complete(null);
    }
  }

  /** Waits after a fault; false when the follower is closing or its thread was interrupted. */
  private boolean pause(long ms) {
    try {
      return !closing.await(ms, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Stops following: the consumer is woken, a back-off cut short, and the thread {@link #start} made joined. */
  @Override
  public void close() {
    running = false;
    closing.countDown();
    consumer.wakeup();
    Thread t = thread;
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(JOIN_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
