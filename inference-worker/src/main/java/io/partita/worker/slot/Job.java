package io.partita.worker.slot;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import java.util.function.Consumer;

/**
 * One request handed to the slots, and how to answer it. The slots call {@code answer} exactly
 * once, with a result or an error.
 *
 * @param recordTimestampMs the Kafka record's timestamp (for the reply's queue time)
 * @param arrivedAtMs when the worker read it (wall clock, for batching and deadlines)
 * @param arrivedAtNanos the same instant on the monotonic clock (for the queue-wait metric)
 * @param deadlineMs epoch ms after which it is answered DEADLINE_EXCEEDED; Long.MAX_VALUE for none
 * @param stages when it passed the worker's stages (the slot stamps its run)
 */
public record Job(InferenceRequest request, long recordTimestampMs, long arrivedAtMs, long arrivedAtNanos,
                  long deadlineMs, Consumer<InferenceReply> answer, Stages stages) {

  /** A job whose stages nobody reads (tests, callers outside the Kafka loop). */
  public Job(InferenceRequest request, long recordTimestampMs, long arrivedAtMs, long arrivedAtNanos,
      long deadlineMs, Consumer<InferenceReply> answer) {
    this(request, recordTimestampMs, arrivedAtMs, arrivedAtNanos, deadlineMs, answer, new Stages());
  }
}
