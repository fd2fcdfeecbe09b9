package io.partita.worker.kafka;

import io.partita.avro.DeadLetter;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.health.Fatal;
import io.partita.common.health.Loop;
import io.partita.common.kafka.DeadLetters;
import io.partita.common.log.RateLimitedLog;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.schemas.DecodeException;
import io.partita.worker.delivery.OffsetTracker;
import io.partita.worker.metrics.WorkerMetrics;
import io.partita.worker.serving.Replies;
import io.partita.worker.slot.Job;
import io.partita.worker.slot.Slots;
import io.partita.worker.slot.Stages;
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
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
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
 * <p>Every loop survives any one record. A record that cannot be decoded (including one that
 * declares more items or bytes than it holds: see {@code BoundedDecoder}), that has an unreadable
 * {@code deadline} header, or whose handling fails in any other way, is dead-lettered with its
 * provenance and answered with an error reply where its {@code reply-to} is known; its offset moves
 * on. A result too large for the producer is replaced by an error reply. A reply the broker refuses
 * for the record's own reason (too large for the reply-to topic, a reply-to that is not a legal
 * topic, does not exist or may not be written) dead-letters the request with the broker's error and
 * counts {@code partita.worker.replies.refused}. Infrastructure faults (broker unreachable, a send
 * that times out, a fenced producer) are not the record's fault: the send is retried with back-off,
 * the record's offset stays open meanwhile, and the loop says it is not ready. A fault the process
 * cannot survive ({@link VirtualMachineError}) ends the process ({@link Fatal}).
 *
 * <p>The loop's state is published through its {@link Loop}: ready while it polls and its sends go
 * through; not ready while sends are being retried or the consumer fails; dead only when it ended by
 * a fault.
 */
public final class RequestLoop implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(RequestLoop.class);
  private static final Duration POLL = Duration.ofMillis(20);
  /** Back-off of a send retried after an infrastructure fault: doubles from the first to the last. */
  static final long FIRST_RETRY_MS = 100;
  static final long MAX_RETRY_MS = 10_000;
  /** Longest header value quoted in an error. */
  private static final int QUOTE = 64;

  /**
   * @param topics the request topics to consume
   * @param maxOpen records read but not answered before fetching pauses
   * @param drainTimeoutMs how long giving up partitions waits for their open records
   * @param reshare whether this worker's capacity changed enough for the group to share the
   *     partitions out again (checked about once a second; see {@link CapacityAssignor})
   * @param shareMove how far this worker's share of the partitions would move then, relative
   *     (0 to 1; {@link CapacityAssignor.Advertised#move}): only a large move is logged at INFO
   */
  public record Settings(List<String> topics, int maxOpen, long drainTimeoutMs, BooleanSupplier reshare,
      DoubleSupplier shareMove) {
    public Settings(List<String> topics, int maxOpen, long drainTimeoutMs) {
      this(topics, maxOpen, drainTimeoutMs, () -> false, () -> 0);
    }
  }

  /** How often the loop asks whether the partitions should be shared out again (its capacity changed). */
  private static final long RESHARE_CHECK_MS = 1_000;
  /** The least time between two rounds this worker asks for, so a capacity that keeps moving cannot cause a storm. */
  private static final long RESHARE_MIN_GAP_MS = 5_000;

  private final Consumer<String, byte[]> consumer;
  /** The request topics to read; grown by {@link #readAlso} from other threads, applied by the loop's thread. */
  private volatile List<String> wanted;
  private List<String> subscribed;
  private final Producer<String, byte[]> producer;
  private final Slots slots;
  private final Topics topics;
  private final Settings settings;
  private final WorkerMetrics metrics;
  private final LongSupplier clock;
  private final RecordCodec<InferenceRequest> requests;
  private final RecordCodec<InferenceReply> replies;
  private final Topic<DeadLetter> deadLetters;
  private final OffsetTracker<TopicPartition> tracker = new OffsetTracker<>();
  private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
  private final Set<TopicPartition> owned = new HashSet<>();
  private final java.util.function.Consumer<Map<String, List<Integer>>> onOwnership;
  private volatile boolean running = true;
  private volatile Throwable failure;
  private boolean paused;
  private long nextReshareCheck;
  private Map<String, List<Integer>> lastOwned = Map.of();
  private long lastReshare = Long.MIN_VALUE / 2;
  private final ReshareLog reshareLog = new ReshareLog();
  /** The group gave this member its partitions at least once (possibly none). */
  private volatile boolean joined;
  private final Loop health;
  private final RateLimitedLog warnings = new RateLimitedLog(log, 60_000);
  /** Why sends are failing for an infrastructure reason now, or null. */
  private volatile String sendTrouble;
  private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "partita-worker-send-retry");
    t.setDaemon(true);
    return t;
  });

  /**
   * @param onOwnership told, after every rebalance, which request-topic partitions this worker owns
   *     (topic to ascending partitions), for the slot status the gateway steers by
   */
  public RequestLoop(Consumer<String, byte[]> consumer, Producer<String, byte[]> producer, Slots slots, Topics topics,
                     Codecs codecs, Settings settings, WorkerMetrics metrics, LongSupplier clock,
                     java.util.function.Consumer<Map<String, List<Integer>>> onOwnership, Loop health) {
    this.onOwnership = onOwnership;
    this.health = health;
    this.requests = codecs.codec(InferenceRequest.class);
    this.replies = codecs.codec(InferenceReply.class);
    this.deadLetters = topics.deadLetter(codecs);
    this.consumer = consumer;
    this.producer = producer;
    this.slots = slots;
    this.topics = topics;
    this.settings = settings;
    this.metrics = metrics;
    this.clock = clock;
  }

  /** Something a producer callback or a slot thread tells the poll thread. */
  private sealed interface Event permits Done, TooLarge, Refused {}

  /** Every answer of a record was acknowledged. */
  private record Done(TopicPartition partition, long offset) implements Event {}

  /** A reply was refused as too large; it is replaced by an error reply. */
  private record TooLarge(Answer answer, String replyTo, String correlation, InferenceReply reply) implements Event {}

  /** The broker refused the reply for the record's own reason; the request goes to the dead-letter topic. */
  private record Refused(Answer answer, String replyTo, Exception error) implements Event {}

  /**
   * The answers of one record: its offset is done when the path that handles it has finished
   * ({@link #release()}) and every record sent for it was acknowledged.
   */
  private final class Answer {
    final ConsumerRecord<String, byte[]> record;
    final RequestHeaders headers;
    final AtomicInteger pending = new AtomicInteger(1);
    final Stages stages = Stages.readNow();

    Answer(ConsumerRecord<String, byte[]> record) {
      this.record = record;
      this.headers = RequestHeaders.of(record.headers());
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
      subscribed = wanted == null ? settings.topics() : wanted;
      consumer.subscribe(subscribed, new Rebalance());
      long backoffMs = FIRST_RETRY_MS;
      while (running) {
        try {
          pass();
          backoffMs = FIRST_RETRY_MS;
        } catch (RuntimeException e) {
          // not tied to one record (those are answered in handle): the consumer or a commit failed
          health.notReady("the request consumer failed: " + e.getMessage());
          warnings.warn("consumer " + e.getClass().getSimpleName(), "The request loop's poll failed ({}); retrying in {} ms",
              e.toString(), backoffMs);
          pause(backoffMs);
          backoffMs = Math.min(MAX_RETRY_MS, backoffMs * 2);
        }
      }
      if (failure == null) {
        Collection<TopicPartition> owned = consumer.assignment();
        drain(owned);
        commitLast(owned);
      }
      health.stopped();
    } catch (RuntimeException e) {
      fail(e);
    } catch (Throwable e) {
      Fatal.haltIfFatal("the worker's request loop", e);
      fail(e);
      throw e;
    } finally {
      retries.shutdownNow();
      warnings.flush();
      try {
        // Leave the group even as a static member: a deliberate stop hands the partitions over at once.
        consumer.close(CloseOptions.timeout(Duration.ofSeconds(5))
            .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
      } catch (RuntimeException e) {
        log.warn("Closing the consumer failed: {}", e.getMessage());
      }
    }
  }

  /**
   * Adds request topics to read (those of base models added to the repository while the worker
   * runs); the loop subscribes to them before its next poll. Topics already read are kept.
   */
  public synchronized void readAlso(Collection<String> topics) {
    Set<String> all = new TreeSet<>(wanted == null ? settings.topics() : wanted);
    if (all.addAll(topics)) {
      wanted = List.copyOf(all);
    }
  }

  /** One poll and what follows it. */
  private void pass() {
    List<String> now = wanted;
    if (now != null && !now.equals(subscribed)) {
      consumer.subscribe(now, new Rebalance());
      subscribed = now;
      log.info("Reading request topics {}", now);
    }
    ConsumerRecords<String, byte[]> records = consumer.poll(POLL);
    for (ConsumerRecord<String, byte[]> record : records) {
      tracker.received(new TopicPartition(record.topic(), record.partition()), record.offset());
      handleSafely(record);
    }
    handleEvents();
    commitAsync();
    backpressure();
    reshareIfCapacityChanged();
    warnings.flushDue();
    String trouble = sendTrouble;
    if (!joined) {
      health.notReady("joining the consumer group");
    } else if (trouble == null) {
      health.ready();
    } else {
      health.notReady(trouble);
    }
  }

  /**
   * Asks the group for a new round when this worker's capacity moved (slots opened, closed or were
   * re-planned), so the partitions follow it; at most once per {@link #RESHARE_MIN_GAP_MS}. Logged
   * at INFO only as {@link ReshareLog} says.
   */
  private void reshareIfCapacityChanged() {
    long now = System.currentTimeMillis();
    if (now < nextReshareCheck) {
      return;
    }
    nextReshareCheck = now + RESHARE_CHECK_MS;
    if (joined && now - lastReshare >= RESHARE_MIN_GAP_MS && settings.reshare().getAsBoolean()) {
      lastReshare = now;
      double move = settings.shareMove().getAsDouble();
      ReshareLog.Notice notice = reshareLog.next(now, move);
      if (notice.info()) {
        log.info("This worker's capacity changed (its share moves by {} %); asking the group to share the request partitions out"
            + " again{}", Math.round(move * 100), notice.quietBefore() == 0 ? ""
            : " (" + notice.quietBefore() + " smaller or closer re-shares since the last such line, at DEBUG)");
      } else {
        log.debug("This worker's capacity changed (its share moves by {} %); asking the group to share the request partitions"
            + " out again", Math.round(move * 100));
      }
      consumer.enforceRebalance("the worker's capacity changed");
    }
  }

  private static void pause(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Handles one record; a failure tied to it (a bug on some path, an encoding that fails) still
   * answers it: dead letter, error reply where the reply-to is known, offset released.
   */
  private void handleSafely(ConsumerRecord<String, byte[]> record) {
    try {
      handle(record);
    } catch (RuntimeException e) {
      Answer answer = new Answer(record);
      deadLetter(answer, e);
      String replyTo = answer.headers.replyTo();
      if (replyTo != null) {
        String id = correlationOf(answer);
        try {
          reply(answer, replyTo, id, Replies.error(id, String.valueOf(topics.baseModelOf(record.topic())), null,
              ErrorCode.MODEL_ERROR, "the worker failed on this request (" + e.getClass().getSimpleName() + "); it was dead-lettered", null));
        } catch (RuntimeException again) {
          log.debug("The error reply for {} failed too: {}", id, again.toString());
        }
      }
      answer.release();
    }
  }

  private static String correlationOf(Answer answer) {
    String correlation = answer.headers.correlationId();
    String key = answer.record.key();
    return correlation != null ? correlation : key != null ? key : "unknown";
  }

  private void handle(ConsumerRecord<String, byte[]> record) {
    Answer answer = new Answer(record);
    String replyTo = answer.headers.replyTo();
    String correlation = answer.headers.correlationId();
    String headerModel = answer.headers.serviceModel();
    String serviceModel = headerModel != null ? headerModel : topics.baseModelOf(record.topic());
    InferenceRequest request;
    try {
      request = requests.decode(record.topic(), record.value());
    } catch (DecodeException e) {
      deadLetter(answer, e);
      if (replyTo != null) {
        String id = correlationOf(answer);
        reply(answer, replyTo, id, Replies.error(id, serviceModel, null, ErrorCode.BAD_INPUT,
            "the record is not an InferenceRequest in Avro single-object encoding; it was dead-lettered", null));
      }
      answer.release();
      return;
    }
    answer.stages.decoded();
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
      String deadlineHeader = answer.headers.deadline();
      Long deadline;
      try {
        deadline = parseDeadline(deadlineHeader);
      } catch (NumberFormatException e) {
        String why = "the deadline header '" + quote(deadlineHeader) + "' is not a whole number of epoch milliseconds";
        deadLetter(answer, new IllegalArgumentException(why));
        reply(answer, replyTo, id, Replies.error(request, null, ErrorCode.BAD_INPUT,
            why + "; send epoch milliseconds (e.g. 1767225600000) or no deadline header", null));
        answer.release();
        return;
      }
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
            }, answer.stages);
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

  /** The deadline in epoch ms, null without the header; NumberFormatException when it is not a whole number. */
  static Long parseDeadline(String header) {
    if (header == null) {
      return null;
    }
    return Long.parseLong(header.strip());
  }

  private static String quote(String value) {
    return value.length() <= QUOTE ? value : value.substring(0, QUOTE) + "...";
  }

  /** Sends a reply for the record; any thread. */
  private void reply(Answer answer, String replyTo, String correlation, InferenceReply reply) {
    ProducerRecord<String, byte[]> out = new ProducerRecord<>(replyTo, reply.getId(), replies.encode(replyTo, reply));
    KafkaHeaders.put(out.headers(), KafkaHeaders.CORRELATION_ID, correlation);
    KafkaHeaders.put(out.headers(), KafkaHeaders.TRACEPARENT, answer.headers.traceparent());
    KafkaHeaders.put(out.headers(), KafkaHeaders.STAGES, answer.stages.header());
    answer.sending();
    send(out, FIRST_RETRY_MS, error -> {
      if (error == null) {
        metrics.reply(reply.getServiceModel(), Replies.outcome(reply));
        answer.release();
      } else if (error instanceof RecordTooLargeException && reply.getError() == null) {
        events.add(new TooLarge(answer, replyTo, correlation, reply));
      } else {
        events.add(new Refused(answer, replyTo, error));
      }
    });
  }

  /**
   * Sends a record; {@code done} gets null on success or the broker's error when the record was
   * refused for its own reason. An infrastructure fault is retried with back-off, for as long as it
   * lasts (the record's offset stays open; backpressure stops fetching), so {@code done} never sees
   * one. Any thread.
   */
  private void send(ProducerRecord<String, byte[]> out, long backoffMs, java.util.function.Consumer<Exception> done) {
    Callback callback = (meta, error) -> {
      if (error == null) {
        sendTrouble = null;
        done.accept(null);
      } else if (refusedForTheRecord(error)) {
        done.accept(error);
      } else {
        retry(out, backoffMs, done, error);
      }
    };
    try {
      producer.send(out, callback);
    } catch (ApiException e) {
      callback.onCompletion(null, e);
    }
  }

  private void retry(ProducerRecord<String, byte[]> out, long backoffMs, java.util.function.Consumer<Exception> done, Exception error) {
    sendTrouble = "sends to " + out.topic() + " fail (" + error.getClass().getSimpleName() + ": " + error.getMessage() + "); retrying";
    metrics.sendRetry(error.getClass().getSimpleName());
    warnings.warn("send " + error.getClass().getSimpleName(), "A send to {} failed ({}); retrying in {} ms", out.topic(), error.toString(), backoffMs);
    try {
      retries.schedule(() -> send(out, Math.min(MAX_RETRY_MS, backoffMs * 2), done), backoffMs, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      log.debug("Not retrying a send to {}: the loop is closing (the record's offset stays uncommitted)", out.topic());
    }
  }

  /**
   * Whether the broker refused a record for the record's own reason (retrying the same record cannot
   * succeed), as opposed to an infrastructure fault (retrying can).
   */
  static boolean refusedForTheRecord(Exception error) {
    return error instanceof RecordTooLargeException
        || error instanceof RecordBatchTooLargeException
        || error instanceof InvalidTopicException
        || error instanceof TopicAuthorizationException
        || error instanceof UnknownTopicOrPartitionException
        || error instanceof InvalidRecordException
        // a topic that does not exist (and is not auto-created) ends as a metadata timeout
        || error instanceof TimeoutException && String.valueOf(error.getMessage()).contains("not present in metadata");
  }

  private void deadLetter(Answer answer, Exception error) {
    ConsumerRecord<String, byte[]> record = answer.record;
    warnings.warn("dead letter " + error.getClass().getSimpleName(), "Dead-lettering {}-{}@{}: {}",
        record.topic(), record.partition(), record.offset(), error.getMessage());
    String serviceModel = String.valueOf(topics.baseModelOf(record.topic()));
    answer.sending();
    sendDeadLetter(answer, DeadLetters.of(record, error, "worker", clock.getAsLong()), serviceModel, true);
  }

  private void sendDeadLetter(Answer answer, DeadLetter letter, String serviceModel, boolean withValue) {
    ConsumerRecord<String, byte[]> record = answer.record;
    ProducerRecord<String, byte[]> out = deadLetters.record(record.key(), letter);
    out.headers().add("source-topic", record.topic().getBytes(StandardCharsets.UTF_8));
    send(out, FIRST_RETRY_MS, e -> {
      if (e == null) {
        metrics.reply(serviceModel, "DEAD_LETTER");
        answer.release();
      } else if (withValue) {
        // the dead-letter topic refused it (too large with the record's value): send it without the value
        DeadLetter smaller = DeadLetter.newBuilder(letter).setValue(null)
            .setError(letter.getError() + " (the record's value was left out: the dead-letter topic refused it: " + e.getMessage() + ")")
            .build();
        sendDeadLetter(answer, smaller, serviceModel, false);
      } else {
        log.error("The dead-letter topic refused the dead letter of {}-{}@{} ({}); it is dropped",
            record.topic(), record.partition(), record.offset(), e.toString());
        answer.release();
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
    } else if (event instanceof Refused r) {
      metrics.refusedReply(String.valueOf(topics.baseModelOf(r.answer().record.topic())), r.error().getClass().getSimpleName());
      deadLetter(r.answer(), new ReplyRefusedException("the broker refused the reply to '" + quote(r.replyTo()) + "': "
          + r.error().getClass().getSimpleName() + ": " + r.error().getMessage(), r.error()));
      r.answer().release();
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
        if (e != null) { // while the group rebalances, every pass's commit fails: a line a minute, the rest counted
          warnings.warn("offset commit " + e.getClass().getSimpleName(), "Committing offsets failed ({}); a later commit covers them",
              e.getMessage());
        }
      });
    }
  }

  /**
   * The last commit of a loop asked to stop. A stop that comes while the group rebalances (a
   * worker's capacity changed, a member joined or left) cannot commit: the group takes no commit
   * until the rebalance completes, and completing it would take on new partitions. That is not a
   * fault of the loop: everything it read was answered, and the next owner of these partitions
   * may redo the requests after the offsets last committed (their replies carry the same ids).
   */
  private void commitLast(Collection<TopicPartition> owned) {
    try {
      commitSync(owned);
    } catch (RebalanceInProgressException | CommitFailedException e) {
      log.warn("Stopping during a rebalance of the worker group: the last offsets of {} were not committed ({}); "
          + "their next owner may redo requests this worker answered", owned, e.getMessage());
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
      joined = true;
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
    if (!byTopic.equals(lastOwned)) {
      log.info("Owning request partitions {}", byTopic);
      lastOwned = byTopic;
    }
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
    health.died(e);
    running = false;
  }

  /** A reply the broker refused for the request's own reason; carried in the dead letter. */
  static final class ReplyRefusedException extends RuntimeException {
    ReplyRefusedException(String message, Throwable cause) {
      super(message, cause);
    }
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
