package io.partita.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;

/**
 * An open-loop load: calls start at a fixed rate whatever the answers do (as users arrive), spread
 * round-robin over the callers, and every call's outcome is kept: when it was sent, when it was
 * answered and how ({@link Outcome}), or that it never was. A closed loop hides a stall (callers
 * wait, so fewer calls are made); an open loop shows it as latency and as calls left unanswered.
 */
public final class OpenLoad {
  private OpenLoad() {}

  /** One way to make a call: it must not block for long (send, then answer through the future). */
  public interface Caller {
    /** Starts call number {@code seq}; the future completes with its outcome (a failure counts as {@code FAILED}). */
    CompletableFuture<Outcome> call(long seq);
  }

  /**
   * How a call was answered.
   *
   * @param code {@code OK}, an error code of the reply ({@code NOT_READY}, {@code DEADLINE_EXCEEDED}, ...),
   *     {@code CONNECTION} (no server could be reached) or {@code FAILED} (the caller failed otherwise)
   * @param host the host that answered, when the answer says ({@code partita_host}, a reply's instance)
   * @param detail a few words for an error, or null
   */
  public record Outcome(String code, String host, String detail) {
    public static final String OK = "OK";

    public static Outcome ok(String host) {
      return new Outcome(OK, host, null);
    }

    public boolean ok() {
      return OK.equals(code);
    }
  }

  /**
   * One call.
   *
   * @param sentNanos {@link System#nanoTime()} when it was started
   * @param answeredNanos when its outcome came, or -1 when it never came (lost)
   */
  public record Call(long seq, String caller, long sentNanos, long answeredNanos, Outcome outcome) {
    public boolean answered() {
      return answeredNanos >= 0;
    }

    public double latencyMs() {
      return (answeredNanos - sentNanos) / 1e6;
    }
  }

  /**
   * Runs the load: {@code perSecond} calls a second for {@code length}, then waits up to
   * {@code grace} for the answers still out. A call without an answer by then is recorded as lost.
   *
   * @param callers by name (the name goes into each {@link Call})
   * @param onSecond told every second of the run with the seconds elapsed (to inject a fault at a
   *     given time, print progress), on the load's own thread; may be null
   */
  public static Calls run(Map<String, Caller> callers, double perSecond, Duration length, Duration grace,
      LongConsumer onSecond) throws InterruptedException {
    if (callers.isEmpty() || !(perSecond > 0)) {
      throw new IllegalArgumentException("an open load needs callers and a positive rate, had " + callers.keySet() + " at " + perSecond);
    }
    List<String> names = new ArrayList<>(callers.keySet());
    ConcurrentLinkedQueue<Call> done = new ConcurrentLinkedQueue<>();
    Map<Long, Long> out = new ConcurrentHashMap<>(); // seq -> sent nanos, while unanswered
    long start = System.nanoTime();
    long interval = (long) (1e9 / perSecond);
    long total = length.toNanos() / interval;
    long nextSecond = 1;
    for (long seq = 0; seq < total; seq++) {
      long wait = start + seq * interval - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait);
      }
      while (onSecond != null && System.nanoTime() - start >= nextSecond * 1_000_000_000L) {
        onSecond.accept(nextSecond++);
      }
      String name = names.get((int) (seq % names.size()));
      long id = seq;
      long sent = System.nanoTime();
      out.put(id, sent);
      CompletableFuture<Outcome> future;
      try {
        future = callers.get(name).call(seq);
      } catch (RuntimeException e) {
        future = CompletableFuture.failedFuture(e);
      }
      future.whenComplete((outcome, failure) -> {
        long now = System.nanoTime();
        if (out.remove(id) != null) { // else the grace had passed: it stays lost
          done.add(new Call(id, name, sent, now, failure == null ? outcome
              : new Outcome("FAILED", null, String.valueOf(rootCause(failure)))));
        }
      });
    }
    long graceEnd = System.nanoTime() + grace.toNanos();
    while (!out.isEmpty() && System.nanoTime() < graceEnd) {
      TimeUnit.MILLISECONDS.sleep(50);
    }
    List<Call> all = new ArrayList<>(done);
    for (Long seq : new ArrayList<>(out.keySet())) {
      Long sent = out.remove(seq);
      if (sent != null) {
        all.add(new Call(seq, names.get((int) (seq % names.size())), sent, -1, null));
      }
    }
    all.sort(Comparator.comparingLong(Call::seq));
    return new Calls(all, start);
  }

  private static Throwable rootCause(Throwable t) {
    Throwable cause = t;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }
}
