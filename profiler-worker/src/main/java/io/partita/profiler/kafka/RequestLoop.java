package io.partita.profiler.kafka;

import io.partita.avro.ProfileRequest;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.profiler.run.ProfileOutcome;
import io.partita.profiler.run.ProfileSpec;
import io.partita.schemas.DecodeException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The profiler's consumer loop over {@code <prefix>.profile.requests}, one request at a time:
 *
 * <ul>
 *   <li>a record that does not decode as a {@link ProfileRequest} goes to the dead-letter topic and
 *       is skipped;
 *   <li>a request for another host is skipped;
 *   <li>a request that cannot be run (an empty model, a size below 1, ...) gets a FAILED status
 *       naming the field and is dead-lettered too;
 *   <li>any other request is handed to the measuring thread ({@code submit}), which publishes its
 *       timing events and status. An unknown model ends as a FAILED status; the loop goes on.
 * </ul>
 *
 * <p>A record's offset is committed only after everything published for it was acknowledged
 * (at-least-once: a profiler that dies mid-request measures it again). While a request is being
 * measured the loop keeps polling with its partitions paused, so a long measurement never exceeds
 * the consumer's poll interval and costs the group membership.
 *
 * <p>Infrastructure faults (a record the broker refuses, a failure inside the measuring job) stop
 * the loop without committing; {@link #failure()} says why.
 */
public final class RequestLoop implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(RequestLoop.class);
  private static final Duration POLL = Duration.ofMillis(200);

  private final Consumer<String, byte[]> consumer;
  private final EventPublisher publisher;
  private final String hostId;
  private final long defaultBudgetMillis;
  private final Function<ProfileSpec, Future<ProfileOutcome>> submit;
  private final Topic<ProfileRequest> requests;
  private volatile boolean running = true;
  private volatile Throwable failure;

  /**
   * @param publisher used by this loop's thread only (dead letters, refusals)
   * @param submit runs a request on the measuring thread and publishes its results
   */
  public RequestLoop(Consumer<String, byte[]> consumer, EventPublisher publisher, Topics topics, Codecs codecs,
                     String hostId, long defaultBudgetMillis, Function<ProfileSpec, Future<ProfileOutcome>> submit) {
    this.consumer = consumer;
    this.publisher = publisher;
    this.hostId = hostId;
    this.defaultBudgetMillis = defaultBudgetMillis;
    this.submit = submit;
    this.requests = topics.profileRequests(codecs);
  }

  @Override
  public void run() {
    try {
      consumer.subscribe(List.of(requests.name()));
      while (running) {
        ConsumerRecords<String, byte[]> records = consumer.poll(POLL);
        for (ConsumerRecord<String, byte[]> record : records) {
          if (!running) {
            return;
          }
          if (!handle(record)) {
            return; // stopped while measuring: the record stays uncommitted and is measured again
          }
          publisher.awaitAcks();
          commit(record);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      failure = e.getCause();
      log.error("A profile request could not be completed; stopping the request loop without committing", e.getCause());
    } catch (RuntimeException e) {
      failure = e;
      log.error("Profile request loop failed", e);
    } finally {
      consumer.close(Duration.ofSeconds(5));
    }
  }

  /** Handles one record; false when the loop was stopped before the request finished. */
  private boolean handle(ConsumerRecord<String, byte[]> record) throws InterruptedException, ExecutionException {
    ProfileRequest request;
    try {
      request = requests.decode(record.value());
    } catch (DecodeException e) {
      log.warn("Dead-lettering an undecodable profile request at {}-{}@{}: {}", record.topic(), record.partition(),
          record.offset(), e.getMessage());
      publisher.deadLetter(record, e);
      return true;
    }
    if (!AvroMapper.isFor(request, hostId)) {
      return true;
    }
    MDC.put("request", request.getRequestId());
    MDC.put("model", request.getModel());
    try {
      ProfileSpec spec;
      try {
        spec = AvroMapper.spec(request, defaultBudgetMillis);
      } catch (IllegalArgumentException e) {
        log.warn("Refusing profile request {}: {}", request.getRequestId(), e.getMessage());
        publisher.status(String.valueOf(request.getRequestId()), hostId, AvroMapper.FAILED, 0, 0,
            "invalid request: " + e.getMessage());
        publisher.deadLetter(record, e);
        return true;
      }
      Future<ProfileOutcome> job = submit.apply(spec);
      if (!awaitWhilePolling(job)) {
        job.cancel(true);
        return false;
      }
      job.get();
      return true;
    } finally {
      MDC.remove("request");
      MDC.remove("model");
    }
  }

  /**
   * Waits for the job while polling with every partition paused, so the group keeps this member.
   * Records of a partition assigned meanwhile (not yet paused) are sought back to be read later.
   */
  private boolean awaitWhilePolling(Future<ProfileOutcome> job) throws InterruptedException, ExecutionException {
    try {
      while (running) {
        try {
          job.get(POLL.toMillis(), TimeUnit.MILLISECONDS);
          return true;
        } catch (TimeoutException stillRunning) {
          consumer.pause(consumer.assignment());
          ConsumerRecords<String, byte[]> early = consumer.poll(Duration.ZERO);
          Map<TopicPartition, Long> first = new HashMap<>();
          for (ConsumerRecord<String, byte[]> r : early) {
            first.merge(new TopicPartition(r.topic(), r.partition()), r.offset(), Math::min);
          }
          first.forEach(consumer::seek);
        }
      }
      return false;
    } finally {
      consumer.resume(consumer.paused());
    }
  }

  private void commit(ConsumerRecord<String, byte[]> record) {
    try {
      consumer.commitSync(Map.of(new TopicPartition(record.topic(), record.partition()),
          new OffsetAndMetadata(record.offset() + 1)));
    } catch (CommitFailedException e) {
      // The partition moved to another member of this host's group, which will measure it again.
      log.warn("Offset {} of {} not committed (the group rebalanced): {}", record.offset(), record.topic(),
          e.getMessage());
    }
  }

  /** The failure that stopped the loop, or null while it runs. */
  public Throwable failure() {
    return failure;
  }

  public void stop() {
    running = false;
  }
}
