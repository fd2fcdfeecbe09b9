package io.partita.common.kafka;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.EpochMicros;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topic;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The request/reply core the gateway and {@code PartitaClient} share: the calls waiting for a reply
 * on one reply topic, how a request record is written (key, headers, deadline), and how a reply
 * record finds its call. It runs no thread: the owner polls its reply topic and hands every record
 * to {@link #take}, which never throws.
 *
 * <p>Guarantees, the same for every user:
 * <ul>
 *   <li>a waiter is registered before its record is produced, so a fast reply is never missed, and
 *       removed however the call ends (reply, deadline, produce failure, close), so the map never
 *       grows without bound;</li>
 *   <li>an id already in flight is refused: the call's future fails with an
 *       {@link IllegalStateException} whose message says "already in flight", and nothing is sent;</li>
 *   <li>a reply nobody waits for is dropped and counted, and counted again as a duplicate when its id
 *       was answered recently (a worker restarted mid-batch may answer twice), or as foreign when it
 *       names no request this process sent recently: then another process reads and writes the same
 *       reply topic (a client id or {@code gateway.id} used twice), and a warning says so, at most
 *       once a minute;</li>
 *   <li>a reply that cannot be decoded is counted; what happens to the call it names is the owner's
 *       {@link Unreadable} choice;</li>
 *   <li>{@link #failAll} (on close) fails every waiting call with the reason given.</li>
 * </ul>
 */
public final class PendingCalls {

  /** What an unreadable reply does to the call its correlation id names. */
  public enum Unreadable {
    /** The call is answered at once with an {@code UNKNOWN} error reply (the gateway: no 504 at the deadline). */
    ANSWER_WITH_ERROR,
    /** The call keeps waiting for a readable reply until its deadline (the client: a forged record cannot end a call). */
    KEEP_WAITING
  }

  /** What {@link #take} did with one reply record. */
  public enum Taken { ANSWERED, DROPPED, DUPLICATE, FOREIGN, UNREADABLE }

  /** A record's outcome, with the decode failure when it was {@link Taken#UNREADABLE}. */
  public record Outcome(Taken taken, String correlationId, Throwable failure) {}

  private static final Logger log = LoggerFactory.getLogger(PendingCalls.class);
  /** How many recently ended calls are remembered to tell a duplicate or a late reply from a foreign one. */
  private static final int REMEMBERED = 50_000;
  /** Least time between two warnings about foreign replies. */
  private static final long FOREIGN_WARNING_MS = 60_000;

  private final Topic<InferenceReply> replies;
  private final Unreadable unreadable;
  private final Executor answers;
  private final LongSupplier clock;
  private final Map<String, CompletableFuture<InferenceReply>> waiting = new ConcurrentHashMap<>();
  /** Calls that ended recently: true when answered, false when they ended otherwise (deadline, produce failure, close). */
  private final Map<String, Boolean> ended = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
      return size() > REMEMBERED;
    }
  });
  /** When the broker acknowledged each call's request (epoch micros), kept only while {@link #stampAcks} is on. */
  private final Map<String, Long> acked = new ConcurrentHashMap<>();
  private volatile boolean stampAcks;
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong duplicates = new AtomicLong();
  private final AtomicLong foreign = new AtomicLong();
  private final AtomicLong undecodable = new AtomicLong();
  private volatile long lastForeignWarning = Long.MIN_VALUE;

  /**
   * @param replies where this process's replies come back ({@code reply-to} of every request)
   * @param answers where whatever waits on a call's future runs (never the reply loop's thread nor
   *     the JVM's shared timeout thread)
   * @param clock epoch milliseconds, for the {@code deadline} header
   */
  public PendingCalls(Topic<InferenceReply> replies, Unreadable unreadable, Executor answers, LongSupplier clock) {
    this.replies = replies;
    this.unreadable = unreadable;
    this.answers = answers;
    this.clock = clock;
  }

  /**
   * Registers the call, then produces {@code request} to {@code topic} ({@code partition} null: the
   * producer's partitioner). The future completes with the reply (an error reply too), fails with a
   * {@link java.util.concurrent.TimeoutException} at {@code timeoutMs}, with the produce failure, or
   * with an {@link IllegalStateException} when the id is already in flight.
   */
  public CompletableFuture<InferenceReply> send(Producer<String, byte[]> producer, Topic<InferenceRequest> topic, Integer partition,
      InferenceRequest request, long timeoutMs, String traceparent) {
    String id = request.getId();
    CompletableFuture<InferenceReply> reply = new CompletableFuture<>();
    if (waiting.putIfAbsent(id, reply) != null) {
      return CompletableFuture.failedFuture(new IllegalStateException("a request with id " + id + " is already in flight"));
    }
    CompletableFuture<InferenceReply> result = reply.orTimeout(timeoutMs, TimeUnit.MILLISECONDS)
        .whenCompleteAsync((r, e) -> {
          waiting.remove(id, reply);
          if (e != null) {
            acked.remove(id);
            ended.putIfAbsent(id, Boolean.FALSE);
          }
        }, answers);
    try {
      ProducerRecord<String, byte[]> record = topic.record(partition, id, request);
      KafkaHeaders.put(record.headers(), KafkaHeaders.SERVICE_MODEL, request.getServiceModel());
      KafkaHeaders.put(record.headers(), KafkaHeaders.CORRELATION_ID, id);
      KafkaHeaders.put(record.headers(), KafkaHeaders.REPLY_TO, replies.name());
      KafkaHeaders.put(record.headers(), KafkaHeaders.DEADLINE, Long.toString(clock.getAsLong() + timeoutMs));
      KafkaHeaders.put(record.headers(), KafkaHeaders.TRACEPARENT, traceparent);
      producer.send(record, (metadata, failure) -> {
        if (failure != null) {
          reply.completeExceptionally(failure);
        } else if (stampAcks && !reply.isDone()) {
          acked.put(id, EpochMicros.now());
        }
      });
    } catch (RuntimeException e) {
      reply.completeExceptionally(e);
    }
    return result;
  }

  /** Hands one reply record to the call it names; never throws. */
  public Outcome take(ConsumerRecord<String, byte[]> record) {
    String id = null;
    try {
      id = KafkaHeaders.get(record.headers(), KafkaHeaders.CORRELATION_ID);
      if (id == null) {
        id = record.key();
      }
    } catch (RuntimeException e) {
      undecodable.incrementAndGet();
      return new Outcome(Taken.UNREADABLE, null, e);
    }
    if (id == null || !waiting.containsKey(id)) {
      dropped.incrementAndGet();
      Boolean answered = id == null ? null : ended.get(id);
      if (Boolean.TRUE.equals(answered)) {
        duplicates.incrementAndGet();
        return new Outcome(Taken.DUPLICATE, id, null);
      }
      if (id != null && answered == null) {
        foreignReply(id);
        return new Outcome(Taken.FOREIGN, id, null);
      }
      return new Outcome(Taken.DROPPED, id, null);
    }
    InferenceReply reply;
    try {
      reply = replies.decode(record.value());
    } catch (Throwable e) { // DecodeException, or anything a hostile record makes the decoder throw
      if (e instanceof VirtualMachineError fatal) {
        throw fatal;
      }
      undecodable.incrementAndGet();
      if (unreadable == Unreadable.ANSWER_WITH_ERROR) {
        complete(id, unreadableReply(id, e));
      }
      return new Outcome(Taken.UNREADABLE, id, e);
    }
    return complete(id, reply) ? new Outcome(Taken.ANSWERED, id, null) : new Outcome(Taken.DROPPED, id, null);
  }

  private boolean complete(String id, InferenceReply reply) {
    CompletableFuture<InferenceReply> future = waiting.remove(id);
    if (future == null) {
      dropped.incrementAndGet();
      return false;
    }
    ended.put(id, Boolean.TRUE);
    future.complete(reply);
    return true;
  }

  /** Counts a reply to a request this process did not send recently, and warns at most once a minute. */
  private void foreignReply(String id) {
    long n = foreign.incrementAndGet();
    long now = clock.getAsLong();
    long last = lastForeignWarning;
    if (last == Long.MIN_VALUE || now - last >= FOREIGN_WARNING_MS) {
      lastForeignWarning = now;
      log.warn("Reply {} on {} answers no request this process sent recently ({} such replies so far). If more come, "
          + "another gateway or client reads and writes this reply topic: give each its own gateway.id or client id, "
          + "or each reads and drops the other's replies. Replies to requests sent before a restart look the same "
          + "for a while.", printable(id), replies.name(), n);
    }
  }

  /** An id from a record, fit for one log line: control characters replaced, at most 80 characters. */
  static String printable(String id) {
    StringBuilder out = new StringBuilder(Math.min(id.length(), 80) + 3);
    for (int i = 0; i < id.length() && i < 80; i++) {
      char c = id.charAt(i);
      out.append(Character.isISOControl(c) ? '?' : c);
    }
    return id.length() > 80 ? out.append("...").toString() : out.toString();
  }

  private static InferenceReply unreadableReply(String id, Throwable e) {
    return InferenceReply.newBuilder().setId(id).setServiceModel("").setModelVersion(null)
        .setError(new InferenceError(ErrorCode.UNKNOWN, "the reply to this request could not be read ("
            + e.getClass().getSimpleName() + "); the request may have run"))
        .build();
  }

  /**
   * Whether to remember when the broker acknowledged each request ({@link #takeAcked}), for a
   * caller that reports where a round trip's time went; off by default (it costs a map entry per call).
   */
  public void stampAcks(boolean on) {
    stampAcks = on;
    if (!on) {
      acked.clear();
    }
  }

  /** When the broker acknowledged call {@code id}'s request (epoch micros), forgetting it; 0 when unknown. */
  public long takeAcked(String id) {
    Long at = id == null ? null : acked.remove(id);
    return at == null ? 0 : at;
  }

  /** Fails every waiting call (on close): {@code why} becomes an {@link IllegalStateException}. */
  public void failAll(String why) {
    for (String id : waiting.keySet()) {
      CompletableFuture<InferenceReply> future = waiting.remove(id);
      if (future != null) {
        future.completeExceptionally(new IllegalStateException(why));
      }
    }
  }

  public String replyTopic() {
    return replies.name();
  }

  /** Calls waiting for a reply. */
  public int inFlight() {
    return waiting.size();
  }

  /** Replies dropped because nobody waited for them (late, foreign, or a duplicate). */
  public long dropped() {
    return dropped.get();
  }

  /** Of those, second replies for a call already answered. */
  public long duplicates() {
    return duplicates.get();
  }

  /** Of those, replies to requests this process did not send recently (another process on this reply topic). */
  public long foreign() {
    return foreign.get();
  }

  /** Replies that could not be decoded. */
  public long undecodable() {
    return undecodable.get();
  }
}
