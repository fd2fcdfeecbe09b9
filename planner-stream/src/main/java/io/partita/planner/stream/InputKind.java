package io.partita.planner.stream;

import io.partita.common.Topics;
import java.util.function.Function;

/** The planner's input topics: the source that reads each, the processor that folds it and its store. */
public enum InputKind {
  TIMINGS("read-timings", "fold-timings", Topics::profileTimings, "timings-store"),
  CATALOG_MODELS("read-catalog-models", "store-catalog-models", Topics::catalogModels, "catalog-models-store"),
  CATALOG_SERVICES("read-catalog-services", "store-catalog-services", Topics::catalogServices, "catalog-services-store"),
  HOST_ENVIRONMENTS("read-host-environments", "store-host-environments", Topics::hostEnvironments, "host-environments-store"),
  HOST_LIVENESS("read-host-liveness", "store-host-liveness", Topics::hostLiveness, "host-liveness-store"),
  SLOT_STATUS("read-slot-status", "store-slot-status", Topics::workerStatus, "slot-status-store"),
  DEMAND("read-demand", "store-demand", Topics::demand, "demand-store");

  /** Grouping-mode timing events (a whole grouping measured at once) live apart from the matrix. */
  public static final String GROUPING_TIMINGS_STORE = "grouping-timings-store";

  private final String source;
  private final String processor;
  private final Function<Topics, String> topic;
  private final String store;

  InputKind(String source, String processor, Function<Topics, String> topic, String store) {
    this.source = source;
    this.processor = processor;
    this.topic = topic;
    this.store = store;
  }

  public String source() {
    return source;
  }

  public String processor() {
    return processor;
  }

  public String topic(Topics topics) {
    return topic.apply(topics);
  }

  public String store() {
    return store;
  }
}
