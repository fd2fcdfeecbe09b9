package io.partita.gateway.kafka;

import io.partita.avro.InferenceReply;
import io.partita.common.KafkaHeaders;
import io.partita.common.kafka.KafkaClients;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.schemas.DecodeException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads this gateway's reply topic and completes the waiter registered for each correlation id.
 * A waiter is registered before its request is produced and always removed, whether the reply came,
 * the deadline passed or producing failed, so the map never grows without bound. A reply nobody
 * waits for (a duplicate after a worker restart, or one past its deadline) is dropped.
 */
public final class ReplyRouter implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ReplyRouter.class);

  private final Consumer<String, byte[]> consumer;
  private final String topic;
  private final Map<String, CompletableFuture<InferenceReply>> waiting = new ConcurrentHashMap<>();
  private final RecordCodec<InferenceReply> codec;
  private final CompletableFuture<Void> assigned = new CompletableFuture<>();
  private volatile boolean running = true;
  private volatile boolean reading;

  public ReplyRouter(Consumer<String, byte[]> consumer, String topic, Codecs codecs) {
    this.codec = codecs.codec(InferenceReply.class);
    this.consumer = consumer;
    this.topic = topic;
  }

  /** Registers a waiter; the caller must call {@link #forget} when it is done, whatever happened. */
  public CompletableFuture<InferenceReply> expect(String correlationId) {
    CompletableFuture<InferenceReply> future = new CompletableFuture<>();
    if (waiting.putIfAbsent(correlationId, future) != null) {
      throw new IllegalStateException("a request with id " + correlationId + " is already in flight");
    }
    return future;
  }

  public void forget(String correlationId) {
    waiting.remove(correlationId);
  }

  public int inFlight() {
    return waiting.size();
  }

  /** Completes once the reply topic is assigned and positioned, so no reply produced after it is missed. */
  public CompletableFuture<Void> ready() {
    return assigned;
  }

  /** Whether the reply topic is being read (replies can arrive). */
  public boolean reading() {
    return reading;
  }

  @Override
  public void run() {
    try {
      KafkaClients.assignAtEnd(consumer, topic, Duration.ofSeconds(30));
      reading = true;
      assigned.complete(null);
      while (running) {
        for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(100))) {
          String id = KafkaHeaders.get(record.headers(), KafkaHeaders.CORRELATION_ID);
          if (id == null) {
            id = record.key();
          }
          CompletableFuture<InferenceReply> future = id == null ? null : waiting.remove(id);
          if (future == null) {
            continue;
          }
          try {
            future.complete(codec.decode(record.topic(), record.value()));
          } catch (DecodeException e) {
            future.completeExceptionally(e);
          }
        }
      }
    } catch (RuntimeException e) {
      assigned.completeExceptionally(e);
      if (running) {
        log.error("Reply router stopped", e);
      }
    } finally {
      reading = false;
      consumer.close(Duration.ofSeconds(2));
    }
  }

  @Override
  public void close() {
    running = false;
  }
}
