package io.partita.gateway.kafka;

import io.partita.avro.InferenceReply;
import io.partita.common.Topic;
import io.partita.common.health.Fatal;
import io.partita.common.health.LoopGuard;
import io.partita.common.kafka.PendingCalls;
import io.partita.common.kafka.TopicFollower;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;

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
 * survive ends the process ({@link Fatal}). The loop's state is in its
 * {@link LoopGuard}, which readiness reads.
 *
 * <p>What waits on a reply runs on this router's answer threads (a pool of its own,
 * {@code partita-gateway-answers-*}), never on the loop's thread nor on the JVM's shared timeout
 * thread, so a client slow to take its answer cannot hold up the replies of everyone else.
 */
public final class ReplyRouter implements Runnable, AutoCloseable {
  private final PendingCalls calls;
  private final LoopGuard guard;
  private final ExecutorService answers;
  private final TopicFollower follower;

  public ReplyRouter(Consumer<String, byte[]> consumer, Topic<InferenceReply> replies, LoopGuard guard) {
    this.guard = guard;
    AtomicInteger n = new AtomicInteger();
    this.answers = Executors.newFixedThreadPool(Math.max(4, Runtime.getRuntime().availableProcessors() * 2), r -> {
      Thread t = new Thread(r, "partita-gateway-answers-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    // A reply that cannot be read answers its call at once (500) rather than leaving it to its deadline (504).
    this.calls = new PendingCalls(replies, PendingCalls.Unreadable.ANSWER_WITH_ERROR, answers, System::currentTimeMillis);
    this.follower = new TopicFollower(consumer, TopicFollower.Settings.fromEnd("a reply record", replies.name()), guard,
        new TopicFollower.Reader() {
          @Override
          public void apply(ConsumerRecord<String, byte[]> record) {
            take(record);
          }

          @Override
          public void ended(Throwable failure) {
            calls.failAll("the gateway is closing");
          }
        });
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
    return follower.caughtUp();
  }

  /** Whether the reply topic is being read (replies can arrive). */
  public boolean reading() {
    return follower.following() && guard.loop().isReady();
  }

  @Override
  public void run() {
    follower.run();
  }

  /** Hands one reply to the call waiting on it; an unreadable one is counted and answered with an error. */
  private void take(ConsumerRecord<String, byte[]> record) {
    PendingCalls.Outcome outcome = calls.take(record);
    if (outcome.taken() == PendingCalls.Taken.UNREADABLE) {
      guard.skipped(outcome.correlationId() == null ? "a reply record" : "the reply to a call in flight",
          record.topic(), record.partition(), record.offset(), outcome.failure());
    }
  }

  @Override
  public void close() {
    follower.close();
    answers.shutdown();
  }
}
