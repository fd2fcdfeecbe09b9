package io.partita.worker.metrics;

import io.partita.common.health.Loop;
import io.partita.common.health.Loops;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What the worker's health endpoints answer, decided without any HTTP: the endpoint (JDK server
 * today, perhaps Netty or Vert.x later) only writes the status and body this returns.
 *
 * <ul>
 *   <li>Live: 200 unless a loop died (a dead loop never comes back by itself: restart the process);
 *       503 naming it.
 *   <li>Ready: 200 only while every registered loop is ready (alive and caught up) and nothing else
 *       the worker checks is wrong (a slot runner that ended); otherwise 503 naming the first loop
 *       or part that is not.
 * </ul>
 */
public final class WorkerHealth {
  /** An endpoint's answer. */
  public record Answer(int status, String body) {
    public boolean ok() {
      return status == 200;
    }
  }

  private final Loops loops;
  private final Supplier<Optional<String>> others;

  /**
   * @param others why the worker cannot serve for a reason outside the loops (empty when none)
   */
  public WorkerHealth(Loops loops, Supplier<Optional<String>> others) {
    this.loops = loops;
    this.others = others;
  }

  public Answer live() {
    for (Loop.Snapshot s : loops.snapshot()) {
      if (s.state() == Loop.State.DEAD) {
        return new Answer(503, "not live: loop '" + s.name() + "' died" + (s.reason().isEmpty() ? "" : ": " + s.reason()) + "\n");
      }
    }
    return new Answer(200, "live\n");
  }

  public Answer ready() {
    Optional<String> why = loops.notReady();
    if (why.isEmpty()) {
      why = others.get();
    }
    return why.map(w -> new Answer(503, "not ready: " + w + "\n")).orElseGet(() -> new Answer(200, "ready\n"));
  }
}
