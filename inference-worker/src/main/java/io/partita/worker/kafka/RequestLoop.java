package io.partita.worker.kafka;

import io.partita.avro.DeadLetter;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.kafka.DeadLetters;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.schemas.DecodeException;
import io.partita.worker.delivery.OffsetTracker;
import io.partita.worker.metrics.WorkerMetrics;
import io.partita.worker.serving.Replies;
import io.partita.worker.slot.Job;
import io.partita.worker.slot.Slots;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The worker's consumer-to-producer loop over the request topics of the service models it serves.
 * Every record gets exactly one answer: the reply (result or error) to its {@code reply-to} topic,
 * or, when it cannot be decoded or has nowhere to reply, a dead letter (plus an error reply when a
 * {@code reply-to} says where). Requests are handed to the {@link Slots}, which batch and answer
 * them from their own threads, in any order.
 *
 * <p>At-least-once: a record's offset stays open (see {@link OffsetTracker}) until the broker
 * acknowledged every answer it caused, and only offsets below the lowest open one are committed.
 * Before partitions are given up (rebalance, shutdown), the loop waits up to the drain timeout for
 * their open records and commits synchronously. A worker killed at any point leaves its unanswered
 * records to the next owner, whose replies carry the same correlation ids.
 *
 * <p>Backpressure: with {@code maxOpen} records open, fetching pauses until half of them are answered.
 *
 * <p>Infrastructure faults (a reply the broker refuses for a reason that is not the record's own, a
 * fenced producer) are not dead-lettered: the loop stops without committing further and the
 * failure is reported through {@link #failure()}. A reply that is too large is replaced by an error
 * reply; a {@code reply-to} that is not a legal topic sends the request to the dead-letter topic.
 */
public final class RequestLoop implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(RequestLoop.class);
  private static final Duration POLL = Duration.ofMillis(20);

  /**
   * @param topics the request topics to consume
   * @param maxOpen records read but not answered before fetching pauses
   * @param drainTimeoutMs how long giving up partitions waits for their open records
   */
  public record Settings(List<String> topics, int maxOpen, long drainTimeoutMs) {}

  private final Consumer<String, byte[]> consumer;
  private final Producer<String, byte[]> producer;
  private final Slots slots;
  private final Topics topics;
  private final Settings settings;
  private final WorkerMetrics metrics;
  private final LongSupplier clock;
  private final RecordCodec<InferenceRequest> requests;
  private final RecordCodec<InferenceReply> replies;
  private final RecordCodec<DeadLetter> deadLetters;
  private final OffsetTracker<TopicPartition> tracker = new OffsetTracker<>();
  private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
  private final Set<TopicPartition> owned = new HashSet<>();
  private final java.util.function.Consumer<Map<String, List<Integer>>> onOwnership;
  private volatile boolean running = true;
  private volatile Throwable failure;
  private boolean paused;

  /**
   * @param onOwnership told, after every rebalance, which request-topic partitions this worker owns
   *     (topic to ascending partitions), for the slot status the gateway steers by
   */
  public RequestLoop(Consumer<String, byte[]> consumer, Producer<String, byte[]> producer, Slots slots, Topics topics,
                     Codecs codecs, Settings settings, WorkerMetrics metrics, LongSupplier clock,
                     java.util.function.Consumer<Map<String, List<Integer>>> onOwnership) {
    this.onOwnership = onOwnership;
    this.requests = codecs.codec(InferenceRequest.class);
    this.replies = codecs.codec(InferenceReply.class);
    this.deadLetters = codecs.codec(DeadLetter.class);
    this.consumer = consumer;
    this.producer = producer;
    this.slots = slots;
    this.topics = topics;
    this.settings = settings;
    this.metrics = metrics;
    this.clock = clock;
  }

  /** Something a producer callback or a slot thread tells the poll thread. */
  private sealed interface Event permits Done, TooLarge, BadReplyTo {}

  /** Every answer of a record was acknowledged. */
  private record Done(TopicPartition partition, long offset) implements Event {}

  /** A reply was refused as too large; it is replaced by an error reply. */
  private record TooLarge(Answer answer, String replyTo, String correlation, InferenceReply reply) implements Event {}

  /** The reply-to topic is not a legal topic; the request goes to the dead-letter topic. */
  private record BadReplyTo(Answer answer, String replyTo) implements Event {}

  /**
   * The answers of one record: its offset is done when the path that handles it has finished
   * ({@link #release()}) and every record sent for it was acknowledged.
   */
  private final class Answer {
    final ConsumerRecord<String, byte[]> record;
    final AtomicInteger pending = new AtomicInteger(1);

    Answer(ConsumerRecord<String, byte[]> record) {
      this.record = record;
    }

    void sending() {
      pending.incrementAndGet();
    }

    void release() {
      if (pending.decrementAndGet() == 0) {
        events.add(new Done(new TopicPartition(record.topic(), record.partition()), record.offset()));
      }
    }
  }

  @Override
  public void run() {
    try {
      consumer.subscribe(settings.topics(), new Rebalance());
      while (running) {
        ConsumerRecords<String, byte[]> records = consumer.poll(POLL);
        for (ConsumerRecord<String, byte[]> record : records) {
          tracker.received(new TopicPartition(record.topic(), record.partition()), record.offset());
          handle(record);
        }
        handleEvents();
        commitAsync();
        backpressure();
      }
      if (failure == null) {
        Collection<TopicPartition> owned = consumer.assignment();
        drain(owned);
        commitSync(owned);
      }
    } catch (RuntimeException e) {
      fail(e);
    } finally {
      try {
        consumer.close(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        log.warn("Closing the consumer failed: {}", e.getMessage());
      }
    }
  }

  private void handle(ConsumerRecord<String, byte[]> record) {
    Answer answer = new Answer(record);
    String replyTo = KafkaHeaders.get(record.headers(), KafkaHeaders.REPLY_TO);
    String correlation = KafkaHeaders.get(record.headers(), KafkaHeaders.CORRELATION_ID);
    String headerModel = KafkaHeaders.get(record.headers(), KafkaHeaders.SERVICE_MODEL);
    String serviceModel = headerModel != null ? headerModel : topics.baseModelOf(record.topic());
    InferenceRequest request;
    try {
      request = requests.decode(record.topic(), record.value());
    } catch (DecodeException e) {
      deadLetter(answer, e);
      if (replyTo != null) {
        String id = correlation != null ? correlation : record.key() != null ? record.key() : "unknown";
        reply(answer, replyTo, id, Replies.error(id, serviceModel, null, ErrorCode.BAD_INPUT,
            "the record is not an InferenceRequest in Avro single-object encoding; it was dead-lettered", null));
      }
      answer.release();
      return;
    }
    String id = correlation != null ? correlation : request.getId();
    if (replyTo == null) {
      deadLetter(answer, new IllegalArgumentException("request " + request.getId() + " has no reply-to header"));
      answer.release();
      return;
    }
    MDC.put("request", id);
    MDC.put("model", request.getServiceModel());
    try {
      long now = clock.getAsLong();
      Long deadline = parseDeadline(KafkaHeaders.get(record.headers(), KafkaHeaders.DEADLINE));
      String misplaced = RequestTopicCheck.problem(topics.baseModelOf(record.topic()), headerModel, request.getServiceModel(),
          slots::baseModelOf);
      if (misplaced != null) {
        reply(answer, replyTo, id, Replies.error(request, null, ErrorCode.BAD_INPUT, misplaced, null));
        answer.release();
      } else if (deadline != null && now > deadline) {
        reply(answer, replyTo, id, Replies.error(request, null, ErrorCode.DEADLINE_EXCEEDED,
            "the deadline passed before the request could run", null));
        answer.release();
      } else {
        AtomicBoolean once = new AtomicBoolean();
        Job job = new Job(request, record.timestamp(), now, System.nanoTime(), deadline == null ? Long.MAX_VALUE : deadline,
            reply -> {
              if (!once.compareAndSet(false, true)) {
                log.error("A second answer to request {} was dropped: {}", request.getId(), reply.getError());
                return;
              }
              reply.setId(request.getId());
              reply(answer, replyTo, id, reply);
              answer.release();
            });
        try {
          slots.submit(job);
        } catch (RuntimeException e) {
          // a bug in routing must not leave the record unanswered (its offset would never be committed)
          log.error("Routing request {} failed", request.getId(), e);
          job.answer().accept(Replies.error(request, null, ErrorCode.MODEL_ERROR, "the worker failed to route the request: " + e, null));
        }
      }
    } finally {
      MDC.remove("request");
      MDC.remove("model");
    }
  }

  private static Long parseDeadline(String header) {
    if (header == null) {
      return null;
    }
    try {
      return Long.parseLong(header.strip());
    } catch (NumberFormatException e) {
      return null; // an unreadable deadline is ignored, not fatal: the request still gets its reply
    }
  }

  /** Sends a reply for the record; any thread. */
  private void reply(Answer answer, String replyTo, String correlation, InferenceReply reply) {
    ProducerRecord<String, byte[]> out = new ProducerRecord<>(replyTo, reply.getId(), replies.encode(replyTo, reply));
    KafkaHeaders.put(out.headers(), KafkaHeaders.CORRELATION_ID, correlation);
    KafkaHeaders.put(out.headers(), KafkaHeaders.TRACEPARENT, KafkaHeaders.get(answer.record.headers(), KafkaHeaders.TRACEPARENT));
    answer.sending();
    try {
      producer.send(out, (meta, error) -> {
        if (error == null) {
          metrics.reply(reply.getServiceModel(), Replies.outcome(reply));
          answer.release();
        } else if (error instanceof RecordTooLargeException && reply.getError() == null) {
          events.add(new TooLarge(answer, replyTo, correlation, reply));
        } else if (error instanceof InvalidTopicException) {
          events.add(new BadReplyTo(answer, replyTo));
        } else {
          fail(error);
        }
      });
    } catch (InvalidTopicException e) {
      events.add(new BadReplyTo(answer, replyTo));
    }
  }

  private void deadLetter(Answer answer, Exception error) {
    ConsumerRecord<String, byte[]> record = answer.record;
    log.warn("Dead-lettering {}-{}@{}: {}", record.topic(), record.partition(), record.offset(), error.getMessage());
    byte[] value = deadLetters.encode(topics.deadLetter(), DeadLetters.of(record, error, "worker", clock.getAsLong()));
    ProducerRecord<String, byte[]> out = new ProducerRecord<>(topics.deadLetter(), record.key(), value);
    out.headers().add("source-topic", record.topic().getBytes(StandardCharsets.UTF_8));
    String serviceModel = String.valueOf(topics.baseModelOf(record.topic()));
    answer.sending();
    producer.send(out, (meta, e) -> {
      if (e == null) {
        metrics.reply(serviceModel, "DEAD_LETTER");
        answer.release();
      } else {
        fail(e);
      }
    });
  }

  private void handleEvents() {
    Event event;
    while ((event = events.poll()) != null) {
      handle(event);
    }
  }

  private void handle(Event event) {
    if (event instanceof Done d) {
      tracker.answered(d.partition(), d.offset());
    } else if (event instanceof TooLarge t) {
      reply(t.answer(), t.replyTo(), t.correlation(), Replies.error(t.reply().getId(), t.reply().getServiceModel(),
          t.reply().getModelVersion(), ErrorCode.MODEL_ERROR, "the result is larger than the producer's max.request.size; "
              + "ask for fewer outputs or rows, or raise kafka.max.request.size", t.reply().getInstance()));
      t.answer().release();
    } else if (event instanceof BadReplyTo b) {
      deadLetter(b.answer(), new IllegalArgumentException("reply-to '" + b.replyTo() + "' is not a valid topic"));
      b.answer().release();
    }
  }

  /** Waits until the partitions have no open record, or the drain timeout passes. */
  private void drain(Collection<TopicPartition> partitions) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.drainTimeoutMs());
    handleEvents();
    while (failure == null && tracker.open(partitions) > 0) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        log.warn("{} requests were still unanswered after {} ms; their partitions are given up uncommitted (the next owner redoes them)",
            tracker.open(partitions), settings.drainTimeoutMs());
        return;
      }
      try {
        Event event = events.poll(left, TimeUnit.NANOSECONDS);
        if (event != null) {
          handle(event);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      handleEvents();
    }
  }

  private void commitAsync() {
    Map<TopicPartition, Long> committable = tracker.takeCommittable();
    if (!committable.isEmpty()) {
      consumer.commitAsync(offsets(committable), (offsets, e) -> {
        if (e != null) {
          log.warn("Committing offsets failed ({}); a later commit covers them", e.getMessage());
        }
      });
    }
  }

  private void commitSync(Collection<TopicPartition> partitions) {
    if (failure != null) {
      return;
    }
    Map<TopicPartition, Long> committable = tracker.committable(partitions);
    if (!committable.isEmpty()) {
      consumer.commitSync(offsets(committable));
    }
  }

  private static Map<TopicPartition, OffsetAndMetadata> offsets(Map<TopicPartition, Long> committable) {
    Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
    committable.forEach((p, o) -> out.put(p, new OffsetAndMetadata(o)));
    return out;
  }

  private void backpressure() {
    int open = tracker.open();
    if (!paused && open >= settings.maxOpen()) {
      paused = true;
      log.debug("{} requests open: pausing fetches", open);
    } else if (paused && open <= settings.maxOpen() / 2) {
      paused = false;
      consumer.resume(consumer.paused());
    }
    if (paused) {
      consumer.pause(consumer.assignment()); // again after a rebalance, for new partitions
    }
  }

  private final class Rebalance implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      if (failure == null && !partitions.isEmpty()) {
        drain(partitions);
        try {
          commitSync(partitions);
        } catch (RuntimeException e) {
          log.warn("Committing revoked partitions failed ({}); the next owner may redo some requests", e.getMessage());
        }
      }
      tracker.forget(partitions);
      owned.removeAll(partitions);
      ownershipChanged();
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      // the tracker starts a partition at its first record; only the ownership report changes
      owned.addAll(partitions);
      ownershipChanged();
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      tracker.forget(partitions);
      owned.removeAll(partitions);
      ownershipChanged();
    }
  }

  private void ownershipChanged() {
    Map<String, List<Integer>> byTopic = new TreeMap<>();
    for (TopicPartition p : owned) {
      byTopic.computeIfAbsent(p.topic(), t -> new ArrayList<>()).add(p.partition());
    }
    byTopic.values().forEach(Collections::sort);
    try {
      onOwnership.accept(byTopic);
    } catch (RuntimeException e) {
      log.warn("Reporting partition ownership failed: {}", e.getMessage());
    }
  }

  private void fail(Throwable e) {
    if (failure == null) {
      failure = e;
      log.error("The request loop stops without committing further: {}", e.getMessage(), e);
    }
    running = false;
  }

  /** The failure that stopped the loop, or null. */
  public Throwable failure() {
    return failure;
  }

  /**
   * Asks the loop to stop after the poll in progress; open requests are still answered and
   * committed (up to the drain timeout). No consumer wakeup: it could interrupt a commit.
   */
  public void stop() {
    running = false;
  }
}
