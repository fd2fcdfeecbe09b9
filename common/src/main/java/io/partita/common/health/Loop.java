package io.partita.common.health;

/**
 * One loop's liveness, written by the loop's own thread and read by health endpoints and metrics.
 * Every transition is a single volatile write of an immutable snapshot, so readers never see a torn
 * state.
 */
public final class Loop {
  /** Where a loop stands. Only {@link #READY} serves. */
  public enum State {
    STARTING("is starting"),
    READY("is ready"),
    NOT_READY("is not ready"),
    DEAD("died"),
    STOPPED("is stopped");

    private final String words;

    State(String words) {
      this.words = words;
    }

    String describe() {
      return words;
    }
  }

  /** An immutable view of one loop: its name, state, why (when not ready) and since when (epoch ms). */
  public record Snapshot(String name, State state, String reason, long sinceMs) {}

  private final String name;
  private volatile Snapshot current;

  Loop(String name) {
    this.name = name;
    this.current = new Snapshot(name, State.STARTING, "", System.currentTimeMillis());
  }

  public String name() {
    return name;
  }

  public Snapshot snapshot() {
    return current;
  }

  public boolean isReady() {
    return current.state() == State.READY;
  }

  /** The loop is caught up enough to serve. Cheap when already ready (called on every pass). */
  public void ready() {
    if (current.state() != State.READY) {
      current = new Snapshot(name, State.READY, "", System.currentTimeMillis());
    }
  }

  /** The loop runs but cannot serve yet or for now (behind, waiting for an assignment...). */
  public void notReady(String why) {
    Snapshot s = current;
    if (s.state() == State.DEAD || s.state() == State.STOPPED) {
      return;
    }
    if (s.state() != State.NOT_READY || !s.reason().equals(why)) {
      current = new Snapshot(name, State.NOT_READY, why, System.currentTimeMillis());
    }
  }

  /** The loop ended by a fault; it stays dead until the process registers it again. */
  public void died(Throwable cause) {
    String why = cause == null ? "" : cause.getClass().getSimpleName()
        + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
    current = new Snapshot(name, State.DEAD, why, System.currentTimeMillis());
  }

  /** The loop ended on purpose (the process is closing). */
  public void stopped() {
    if (current.state() != State.DEAD) {
      current = new Snapshot(name, State.STOPPED, "", System.currentTimeMillis());
    }
  }
}
