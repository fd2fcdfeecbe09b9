package io.partita.worker.kafka;

import io.partita.avro.SlotStatus;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.health.Fatal;
import io.partita.common.health.Loop;
import io.partita.common.log.RateLimitedLog;
import io.partita.common.serde.Codecs;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes every slot's {@link SlotStatus} to {@code <prefix>.workers.status} (compacted, key
 * {@code host/slot}) at a fixed interval and soon after any change (changes arriving together are
 * published once). Status is best effort: a failed write is logged and the next one replaces it;
 * it never stops the worker. Closing publishes a last time (the slots then say STOPPED).
 *
 * <p>Its {@link Loop} is ready while passes run and their sends go through, not ready while they
 * fail (the gateway steers by these statuses, so a worker that cannot publish them is not serving
 * well). A {@link VirtualMachineError} in a pass ends the process ({@link Fatal}); anything else is
 * caught, so the scheduler never silently drops the task.
 */
public final class StatusPublisher implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(StatusPublisher.class);

  private final Producer<String, byte[]> producer;
  private final Topic<SlotStatus> topic;
  private final Supplier<List<SlotStatus>> statuses;
  private final long intervalMs;
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "partita-worker-status");
    t.setDaemon(true);
    return t;
  });
  private final AtomicBoolean pending = new AtomicBoolean();
  private final Loop health;
  private final RateLimitedLog warnings = new RateLimitedLog(log, 60_000);

  public StatusPublisher(Producer<String, byte[]> producer, Topics topics, Codecs codecs, Supplier<List<SlotStatus>> statuses,
                         long intervalMs, Loop health) {
    this.health = health;
    this.producer = producer;
    this.topic = topics.workerStatus(codecs);
    this.statuses = statuses;
    this.intervalMs = intervalMs;
  }

  public void start() {
    scheduler.scheduleAtFixedRate(this::publish, 0, intervalMs, TimeUnit.MILLISECONDS);
  }

  /** Something changed: publish soon. */
  public void changed() {
    if (pending.compareAndSet(false, true)) {
      try {
        scheduler.execute(() -> {
          pending.set(false);
          publish();
        });
      } catch (RejectedExecutionException e) {
        pending.set(false); // closing: the last publish covers it
      }
    }
  }

  /**
   * Deletes a closed slot's status (a tombstone on the compacted topic). Sent from the publishing
   * thread, after any status of that slot it was about to send, so the tombstone is the last word.
   */
  public void tombstone(String key) {
    Runnable send = () -> producer.send(topic.record(key, null), (meta, e) -> {
      if (e != null) {
        log.warn("The tombstone of slot status {} was not written: {}", key, e.getMessage());
      }
    });
    try {
      scheduler.execute(send);
    } catch (RejectedExecutionException e) {
      send.run();
    }
  }

  /** The key of a slot's status. */
  public static String key(SlotStatus status) {
    return status.getHost() + "/" + status.getSlot();
  }

  private void publish() {
    try {
      for (SlotStatus status : statuses.get()) {
        producer.send(topic.record(key(status), status), (meta, e) -> {
          if (e != null) {
            health.notReady("slot status is not written: " + e.getMessage());
            warnings.warn("status " + e.getClass().getSimpleName(), "Slot status {} was not written: {}", key(status), e.getMessage());
          } else {
            health.ready();
          }
        });
      }
      if (health.snapshot().state() == Loop.State.STARTING) {
        health.ready();
      }
    } catch (RuntimeException e) {
      health.notReady("publishing slot status failed: " + e.getMessage());
      warnings.warn("status " + e.getClass().getSimpleName(), "Publishing slot status failed: {}", e.getMessage());
    } catch (Throwable e) {
      Fatal.haltIfFatal("the worker's status publisher", e);
      health.died(e);
      throw e;
    }
  }

  @Override
  public void close() {
    scheduler.shutdown();
    try {
      scheduler.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    publish();
    producer.flush();
    health.stopped();
  }
}
