package io.partita.profiler.kafka;

import io.partita.avro.DeadLetter;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ProfileStatus;
import io.partita.avro.TimingEvent;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.kafka.DeadLetters;
import io.partita.common.serde.Codecs;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.idle.MeasuringCondition;
import io.partita.profiler.metrics.ProfilerMetrics;
import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.run.ProfileSink;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Writes the profiler's records: environments (key host id), timing events (key from
 * {@link AvroMapper#timingKey}), status (key requestId/host) and dead letters (key = the original
 * key). Sends are asynchronous; {@link #awaitAcks} waits until the broker acknowledged every record
 * sent so far and throws the first refusal, so callers commit offsets only after it returns.
 *
 * <p>One publisher per thread that waits for acknowledgements (the measuring thread, the request
 * loop): {@link #awaitAcks} covers what this publisher sent. Several publishers may share one
 * producer.
 */
public final class EventPublisher {

  /** The component named in dead letters. */
  public static final String COMPONENT = "profiler";

  private final Producer<String, byte[]> producer;
  private final LongSupplier clock;
  private final Topic<HostEnvironment> environments;
  private final Topic<TimingEvent> timings;
  private final Topic<ProfileStatus> statuses;
  private final Topic<DeadLetter> deadLetters;
  private final List<Future<RecordMetadata>> pending = new ArrayList<>();
  private final ProfilerMetrics metrics;

  public EventPublisher(Producer<String, byte[]> producer, Topics topics, Codecs codecs, LongSupplier clock) {
    this(producer, topics, codecs, clock, ProfilerMetrics.inMemory());
  }

  /** @param metrics counts the timing events and dead letters the broker acknowledged */
  public EventPublisher(Producer<String, byte[]> producer, Topics topics, Codecs codecs, LongSupplier clock,
                        ProfilerMetrics metrics) {
    this.metrics = metrics;
    this.producer = producer;
    this.clock = clock;
    this.environments = topics.hostEnvironments(codecs);
    this.timings = topics.profileTimings(codecs);
    this.statuses = topics.profileStatus(codecs);
    this.deadLetters = topics.deadLetter(codecs);
  }

  public void environment(ProbedHost env) {
    send(environments.record(env.hostId(), AvroMapper.environment(env, clock.getAsLong())), null);
  }

  public void timing(TimingResult result, String requestId, MeasuringCondition condition) {
    timing(AvroMapper.timing(result, requestId, condition, clock.getAsLong()));
  }

  public void timing(GroupingResult result, String requestId, MeasuringCondition condition) {
    timing(AvroMapper.timing(result, requestId, condition, clock.getAsLong()));
  }

  private void timing(TimingEvent event) {
    String condition = event.getCondition();
    send(timings.record(AvroMapper.timingKey(event), event), () -> metrics.timingPublished(condition));
  }

  public void status(String requestId, String host, String state, int done, int total, String message) {
    ProfileStatus status = AvroMapper.status(requestId, host, state, done, total, message, clock.getAsLong());
    send(statuses.record(AvroMapper.statusKey(requestId, host), status), null);
  }

  public void deadLetter(ConsumerRecord<String, byte[]> record, Throwable error) {
    send(deadLetters.record(record.key(), DeadLetters.of(record, error, COMPONENT, clock.getAsLong())), metrics::deadLettered);
  }

  /**
   * A sink that publishes each result as a timing event ({@link MeasuringCondition#UNCHECKED}) and
   * progress as a RUNNING status, then passes everything on to {@code next} (a progress bar, or
   * {@code null}).
   */
  public ProfileSink sink(String requestId, String host, ProfileSink next) {
    return sink(requestId, host, () -> MeasuringCondition.UNCHECKED, next);
  }

  /** As {@link #sink(String, String, ProfileSink)}, each timing event recording {@code condition}'s answer for its step. */
  public ProfileSink sink(String requestId, String host, Supplier<MeasuringCondition> condition, ProfileSink next) {
    return new ProfileSink() {
      @Override
      public void starting(int done, int total, String label) {
        if (next != null) {
          next.starting(done, total, label);
        }
      }

      @Override
      public void point(TimingResult result, int done, int total) {
        timing(result, requestId, condition.get());
        status(requestId, host, AvroMapper.RUNNING, done, total, null);
        if (next != null) {
          next.point(result, done, total);
        }
      }

      @Override
      public void grouping(GroupingResult result, int done, int total) {
        timing(result, requestId, condition.get());
        status(requestId, host, AvroMapper.RUNNING, done, total, null);
        if (next != null) {
          next.grouping(result, done, total);
        }
      }
    };
  }

  /** @param acknowledged run when the broker acknowledged the record (metrics), or null */
  private void send(ProducerRecord<String, byte[]> record, Runnable acknowledged) {
    Future<RecordMetadata> future = producer.send(record, (meta, e) -> {
      if (e == null && acknowledged != null) {
        acknowledged.run();
      }
    });
    synchronized (pending) {
      pending.add(future);
    }
  }

  /**
   * Flushes and waits for the broker's acknowledgement of every record sent so far.
   *
   * @throws ExecutionException the first record the broker refused (an infrastructure fault)
   */
  public void awaitAcks() throws InterruptedException, ExecutionException {
    List<Future<RecordMetadata>> sent;
    synchronized (pending) {
      sent = new ArrayList<>(pending);
      pending.clear();
    }
    producer.flush();
    for (Future<RecordMetadata> f : sent) {
      f.get();
    }
  }
}
