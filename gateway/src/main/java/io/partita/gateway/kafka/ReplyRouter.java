package io.partita.gateway.kafka;

import io.partita.avro.InferenceReply;
import io.partita.common.Topic;
import io.partita.common.kafka.KafkaClients;
import io.partita.common.kafka.PendingCalls;
import io.partita.gateway.health.LoopGuard;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.RecordDeserializationException;

/**
 * Reads this gateway's reply topic and hands each record to the calls waiting on it
 * ({@link PendingCalls}, the request/reply core shared with {@code PartitaClient}): a waiter is
 * registered before its request is produced and always removed, whether the reply came, the
 * deadline passed or producing failed. A reply nobody waits for (a duplicate after a worker
 * restart, or one past its deadline) is dropped.
 *
 * <p>No one record stops this loop: a reply that cannot be decoded (garbage, a huge declared count
 * the decoder refuses, anything the decoder throws) is counted and passed over, and the call
 * waiting for it, if any, gets an {@code UNKNOWN} error reply at once instead of waiting for its
 * deadline. A poll that fails makes the loop NOT_READY while it lasts. A fault the process cannot
 * survive ends the process ({@link io.partita.common.health.Fatal}). The loop's state is in its
 * {@link LoopGuard}, which readiness reads.
 *
 * <p>What waits on a reply runs on this router's answer threads ({@link #answers()}), never on the
 * loop's thread nor on the JVM's shared timeout thread, so a client slow to take its answer cannot
 * hold up the replies of everyone else.
 */
public final class ReplyRouter implements Runnable, AutoCloseable {
  private final Consumer<String, byte[]> consumer;
  private final String topic;
  private final PendingCalls calls;
  private final CompletableFuture<Void> assigned = new CompletableFuture<>();
  private final LoopGuard guard;
  private final ExecutorService answers;
  private volatile boolean running = true;
  private volatile boolean reading;

  public ReplyRouter(Consumer<String, byte[]> consumer, Topic<InferenceReply> replies, LoopGuard guard) {
    this.consumer = consumer;
    this.topic = replies.name();
    this.guard = guard;
    AtomicInteger n = new AtomicInteger();
    this.answers = Executors.newFixedThreadPool(Math.max(4, Runtime.getRuntime().availableProcessors() * 2), r -> {
      Thread t = new Thread(r, "partita-gateway-answers-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    // A reply that cannot be read answers its call at once (500) rather than leaving it to its deadline (504).
    this.calls = new PendingCalls(replies, PendingCalls.Unreadable.ANSWER_WITH_ERROR, answers, System::currentTimeMillis);
  }

  /** The calls waiting on this reply topic; {@link RequestProducer} sends through it. */
  public PendingCalls calls() {
    return calls;
  }

  public int inFlight() {
    return calls.inFlight();
  }

  /** Completes once the reply topic is assigned and positioned, so no reply produced after it is missed. */
  public CompletableFuture<Void> ready() {
    return assigned;
  }

  /** Whether the reply topic is being read (replies can arrive). */
  public boolean reading() {
    return reading && guard.loop().isReady();
  }

  @Override
  public void run() {
    boolean died = false;
    try {
      KafkaClients.assignAtEnd(consumer, topic, Duration.ofSeconds(30));
      reading = true;
      assigned.complete(null);
      guard.ready();
      while (running) {
        ConsumerRecords<String, byte[]> records;
        try {
          records = consumer.poll(Duration.ofMillis(100));
        } catch (RecordDeserializationException e) {
          guard.skipped("a reply record", e.topicPartition().topic(), e.topicPartition().partition(), e.offset(), e);
          consumer.seek(e.topicPartition(), e.offset() + 1);
          continue;
        } catch (KafkaException e) {
          if (!running) {
            break;
          }
          guard.faulted("reading " + topic, e);
          if (!guard.backOff()) {
            running = false;
          }
          continue;
        }
        guard.ready();
        for (ConsumerRecord<String, byte[]> record : records) {
          PendingCalls.Outcome outcome = calls.take(record);
          if (outcome.taken() == PendingCalls.Taken.UNREADABLE) {
            guard.skipped(outcome.correlationId() == null ? "a reply record" : "the reply to a call in flight",
                record.topic(), record.partition(), record.offset(), outcome.failure());
          }
        }
        guard.flush();
      }
    } catch (Throwable e) {
      assigned.completeExceptionally(e);
      if (running) {
        died = true;
        guard.died(e);
      }
    } finally {
      reading = false;
      if (!died) {
        guard.stopped();
      }
      calls.failAll("the gateway is closing");
      consumer.close(Duration.ofSeconds(2));
    }
  }

  @Override
  public void close() {
    running = false;
    answers.shutdown();
  }
}
