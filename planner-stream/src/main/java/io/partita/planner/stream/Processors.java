package io.partita.planner.stream;

import io.partita.planner.plan.PlanSettings;
import java.time.Duration;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;

/** Suppliers of the planner's processors, for {@link io.partita.planner.PlannerTopology}. */
public final class Processors {
  private Processors() {}

  public static ProcessorSupplier<String, byte[], String, byte[]> fold(InputKind kind) {
    return () -> new FoldProcessor(kind);
  }

  public static ProcessorSupplier<String, byte[], String, byte[]> plan(PlanSettings settings, Duration debounce) {
    return () -> new PlanProcessor(settings, debounce);
  }
}
