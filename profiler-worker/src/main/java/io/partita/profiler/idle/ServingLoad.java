package io.partita.profiler.idle;

import java.util.HashMap;
import java.util.Map;

/**
 * The serving load of one host, folded from its slots' statuses. Pure: no Kafka, no clock (the
 * time of a reading is passed in); not thread-safe ({@link IdleGate} guards it).
 *
 * <p>A slot's rate is the growth of its {@code answered} counter between its last two statuses
 * over the time between them. Until a slot has two statuses (or after its counter went down: the
 * worker restarted) its rate is unknown and counts as 0; its in-flight and queued requests still
 * count. A status older than the last one seen for the slot is ignored.
 *
 * <p>A reading counts only live slots: serving health ({@link SlotLoad#serving()}) and a status no
 * older than {@link IdleSettings#staleMillis()}. No live slot is {@link MeasuringCondition#NO_SERVING}.
 */
public final class ServingLoad {

  /** The host's load at one instant. */
  public record Reading(int liveSlots, int inFlight, double ratePerSecond, boolean idle) {
    public MeasuringCondition condition() {
      return liveSlots == 0 ? MeasuringCondition.NO_SERVING : idle ? MeasuringCondition.IDLE : null;
    }
  }

  private record Seen(SlotLoad last, double rate) {}

  private final Map<String, Seen> slots = new HashMap<>();

  public void update(SlotLoad status) {
    Seen before = slots.get(status.slot());
    if (before == null) {
      slots.put(status.slot(), new Seen(status, 0));
      return;
    }
    SlotLoad last = before.last();
    if (status.timestampMs() < last.timestampMs()) {
      return; // an older status arriving late
    }
    double rate;
    if (status.answered() < last.answered()) {
      rate = 0; // the counter restarted with the worker
    } else if (status.timestampMs() == last.timestampMs()) {
      rate = before.rate();
    } else {
      rate = (status.answered() - last.answered()) * 1000.0 / (status.timestampMs() - last.timestampMs());
    }
    slots.put(status.slot(), new Seen(status, rate));
  }

  /** The slot's status was deleted (its worker closed it). */
  public void remove(String slot) {
    slots.remove(slot);
  }

  public Reading read(long nowMs, IdleSettings settings) {
    int live = 0;
    int inFlight = 0;
    double rate = 0;
    for (Seen seen : slots.values()) {
      SlotLoad s = seen.last();
      if (!s.serving() || nowMs - s.timestampMs() > settings.staleMillis()) {
        continue;
      }
      live++;
      inFlight += s.inFlight() + s.queueDepth();
      rate += seen.rate();
    }
    boolean idle = inFlight <= settings.maxInFlight() && rate <= settings.maxRate();
    return new Reading(live, inFlight, rate, idle);
  }
}
