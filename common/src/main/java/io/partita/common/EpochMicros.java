package io.partita.common;

/**
 * Wall-clock time in epoch microseconds, for stage timestamps that records carry (the
 * {@link KafkaHeaders#STAGES} header): the wall clock read once, advanced by the monotonic clock,
 * so two stamps in one process never go backwards. Stamps from different processes compare only
 * as well as their hosts' clocks agree.
 */
public final class EpochMicros {
  private static final long BASE_MICROS = System.currentTimeMillis() * 1000;
  private static final long BASE_NANOS = System.nanoTime();

  private EpochMicros() {}

  public static long now() {
    return BASE_MICROS + (System.nanoTime() - BASE_NANOS) / 1000;
  }
}
