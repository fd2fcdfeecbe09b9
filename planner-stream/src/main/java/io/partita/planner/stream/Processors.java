package io.partita.planner.stream;

import io.partita.common.serde.Codecs;
import io.partita.planner.metrics.PlannerMetrics;
import io.partita.planner.plan.PlanSettings;
import java.time.Duration;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;

/** Suppliers of the planner's processors, for {@link io.partita.planner.PlannerTopology}. */
public final class Processors {
  private Processors() {}

  public static ProcessorSupplier<String, byte[], String, Object> fold(InputKind kind, Codecs codecs, String deadLetterTopic,
      PlannerMetrics metrics) {
    return () -> new FoldProcessor(kind, codecs, deadLetterTopic, metrics);
  }

  public static ProcessorSupplier<String, Object, String, byte[]> plan(PlanSettings settings, Codecs codecs, Duration debounce,
      PlannerMetrics metrics) {
    return plan(settings, codecs, debounce, metrics, false);
  }

  /**
   * @param exhaustive re-plan every key of every table in each pass instead of only what changed
   *     (the tests compare the two; the plans must be the same)
   */
  public static ProcessorSupplier<String, Object, String, byte[]> plan(PlanSettings settings, Codecs codecs, Duration debounce,
      PlannerMetrics metrics, boolean exhaustive) {
    return () -> new PlanProcessor(settings, codecs, debounce, metrics, exhaustive);
  }
}
