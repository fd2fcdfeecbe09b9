package io.partita.common.health;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The long-running loops of one process (a worker's request loop, a gateway's reply router, a plan
 * follower...) and whether each can serve. Readiness endpoints and loop metrics read this one
 * registry, so "ready" cannot say 200 while a loop is dead.
 *
 * <p>A loop registers once, starts {@link Loop.State#STARTING} (not ready), says
 * {@link Loop#ready()} when it is caught up enough to serve, and {@link Loop#died(Throwable)} when it
 * ends by a fault. {@link Loop#stopped()} marks a deliberate stop (the process is closing), which
 * also counts as not ready. The registry does not restart loops and does not end the process: see
 * {@link Fatal} for faults the process cannot survive.
 */
public final class Loops {
  private final List<Loop> loops = new CopyOnWriteArrayList<>();

  /** Registers a loop under a name unique in this process (a second registration replaces the first). */
  public Loop register(String name) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("loop name must not be blank");
    }
    loops.removeIf(l -> l.name().equals(name));
    Loop loop = new Loop(name);
    loops.add(loop);
    return loop;
  }

  /** Removes a loop that no longer exists on purpose (a slot closed by a re-plan, say). */
  public void remove(Loop loop) {
    loops.remove(loop);
  }

  /** A snapshot of every loop, in registration order. */
  public List<Loop.Snapshot> snapshot() {
    List<Loop.Snapshot> out = new ArrayList<>(loops.size());
    for (Loop l : loops) {
      out.add(l.snapshot());
    }
    return out;
  }

  /**
   * Why this process cannot serve now: the first loop that is not ready, named with its state and
   * reason ({@code "loop 'worker-requests' died: OutOfMemoryError: ..."}); empty when every loop is
   * ready.
   */
  public Optional<String> notReady() {
    for (Loop l : loops) {
      Loop.Snapshot s = l.snapshot();
      if (s.state() != Loop.State.READY) {
        String why = s.reason() == null || s.reason().isEmpty() ? "" : ": " + s.reason();
        return Optional.of("loop '" + s.name() + "' " + s.state().describe() + why);
      }
    }
    return Optional.empty();
  }

  /** True when every registered loop is ready (vacuously true when none is registered). */
  public boolean allReady() {
    return notReady().isEmpty();
  }
}
