package io.partita.planner.plan;

import io.partita.common.Topics;
import io.partita.planning.grouping.GroupingObjective;

/**
 * The planning choices that are not inputs on topics.
 *
 * @param topics names the request topics that routes and assignments point to
 * @param objective what a grouping optimises ({@code planner.objective})
 * @param bufferBytesPerPartition inter-partition buffer per partition ({@code planner.buffer.bytes})
 * @param bufferThresholdBytes limit on partitions times buffer ({@code planner.buffer.threshold.bytes})
 * @param defaultRequestsPerSecond the rate a model is mapped with while no Demand is known for it
 *     ({@code planner.default.rate})
 * @param hysteresis how much better (relative) a new grouping or version must be than the running
 *     one to replace it ({@code planner.hysteresis}, default 0.10): measurement noise never flips a plan
 * @param measure how the planner asks for grouping-mode measurements ({@code planner.measure.*})
 * @param serving how the planner learns from what the serving slots ran ({@code planner.serving.*})
 * @param mappingPoolLimit above this many pools the mapping works on classes of alike pools
 *     ({@code planner.mapping.max-pools}, default {@value #DEFAULT_MAPPING_POOL_LIMIT}; {@link
 *     MappingPlans#mappingProblem(PlanInputs, PlanSettings, MappingPlans.ChosenVersions)})
 * @param routeOnDemandLimit how many slots beyond its planned instances a service model's route lists
 *     for on-demand mounts ({@code planner.routes.on-demand.max}, default {@value
 *     #DEFAULT_ROUTE_ON_DEMAND_LIMIT}; {@link RoutePlans})
 * @param defaultPartitionsLimit how many single-resource partitions a model not measured on a host
 *     yet gets, at most, on a pool no measured model wants ({@code planner.default.partitions.max},
 *     default {@value #DEFAULT_PARTITIONS_LIMIT}; {@link DefaultPlacements})
 * @param mappingDrift how far (relative) every figure of the mapping problem may drift from the one
 *     the running mapping was planned on before it is planned afresh ({@code planner.mapping.drift},
 *     default {@value #DEFAULT_MAPPING_DRIFT}; {@link io.partita.planning.mapping.MappingProblem#within})
 */
public record PlanSettings(
    Topics topics,
    GroupingObjective objective,
    long bufferBytesPerPartition,
    long bufferThresholdBytes,
    double defaultRequestsPerSecond,
    double hysteresis,
    MeasureSettings measure,
    ServingSettings serving,
    int mappingPoolLimit,
    int routeOnDemandLimit,
    int defaultPartitionsLimit,
    double mappingDrift) {

  /** The default of {@code planner.hysteresis}: 10 %, beyond the few percent timings move by between runs. */
  public static final double DEFAULT_HYSTERESIS = 0.10;

  /** The default of {@code planner.mapping.max-pools}. */
  public static final int DEFAULT_MAPPING_POOL_LIMIT = 64;

  /**
   * The default of {@code planner.routes.on-demand.max}: every slot of a base model of up to 16
   * slots, and a bounded, stable share of a larger fleet's.
   */
  public static final int DEFAULT_ROUTE_ON_DEMAND_LIMIT = 16;

  /**
   * The default of {@code planner.default.partitions.max}: a fresh two-core host serves a model on
   * both cores before the profiler timed it, and a large one loads a model it never measured onto
   * two cores, not all of them.
   */
  public static final int DEFAULT_PARTITIONS_LIMIT = 2;

  /**
   * The default of {@code planner.mapping.drift}: 1 %. A host joining or leaving a class of 250 alike
   * pools moves its capacity by 0.4 % and its median times by less, and timing noise of one pool
   * among them hardly moves its median; a demand, time or class that moves by more re-plans the
   * mapping. Within 1 % any mapping's cost moves by at most 3.1 % either way ({@link
   * io.partita.planning.mapping.MappingProblem#driftFactor}), so two mappings' costs move against
   * each other by at most 6.2 %: less than the 10 % hysteresis a fresh mapping has to beat the
   * running one by.
   */
  public static final double DEFAULT_MAPPING_DRIFT = 0.01;

  /** Settings with the default drift of the mapping problem. */
  public PlanSettings(Topics topics, GroupingObjective objective, long bufferBytesPerPartition,
      long bufferThresholdBytes, double defaultRequestsPerSecond, double hysteresis, MeasureSettings measure,
      ServingSettings serving, int mappingPoolLimit, int routeOnDemandLimit, int defaultPartitionsLimit) {
    this(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond, hysteresis, measure,
        serving, mappingPoolLimit, routeOnDemandLimit, defaultPartitionsLimit, DEFAULT_MAPPING_DRIFT);
  }

  /** Settings with the default limit of a default placement's partitions. */
  public PlanSettings(Topics topics, GroupingObjective objective, long bufferBytesPerPartition,
      long bufferThresholdBytes, double defaultRequestsPerSecond, double hysteresis, MeasureSettings measure,
      ServingSettings serving, int mappingPoolLimit, int routeOnDemandLimit) {
    this(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond, hysteresis, measure,
        serving, mappingPoolLimit, routeOnDemandLimit, DEFAULT_PARTITIONS_LIMIT);
  }

  /** Settings with the default route limit. */
  public PlanSettings(Topics topics, GroupingObjective objective, long bufferBytesPerPartition,
      long bufferThresholdBytes, double defaultRequestsPerSecond, double hysteresis, MeasureSettings measure,
      ServingSettings serving, int mappingPoolLimit) {
    this(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond, hysteresis, measure,
        serving, mappingPoolLimit, DEFAULT_ROUTE_ON_DEMAND_LIMIT);
  }

  /** Settings with the default pool limit of the mapping. */
  public PlanSettings(Topics topics, GroupingObjective objective, long bufferBytesPerPartition,
      long bufferThresholdBytes, double defaultRequestsPerSecond, double hysteresis, MeasureSettings measure,
      ServingSettings serving) {
    this(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond, hysteresis, measure,
        serving, DEFAULT_MAPPING_POOL_LIMIT);
  }

  /** Settings with the default {@link MeasureSettings} and {@link ServingSettings}. */
  public PlanSettings(Topics topics, GroupingObjective objective, long bufferBytesPerPartition,
      long bufferThresholdBytes, double defaultRequestsPerSecond, double hysteresis) {
    this(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond, hysteresis,
        MeasureSettings.DEFAULTS, ServingSettings.DEFAULTS);
  }

  public PlanSettings {
    if (measure == null) {
      throw new IllegalArgumentException("measure: must be given (MeasureSettings.DEFAULTS or OFF)");
    }
    if (serving == null) {
      throw new IllegalArgumentException("serving: must be given (ServingSettings.DEFAULTS or OFF)");
    }
    if (bufferBytesPerPartition < 0) {
      throw new IllegalArgumentException("planner.buffer.bytes: must be >= 0, was " + bufferBytesPerPartition);
    }
    if (bufferThresholdBytes < 0) {
      throw new IllegalArgumentException("planner.buffer.threshold.bytes: must be >= 0, was " + bufferThresholdBytes);
    }
    if (!(defaultRequestsPerSecond > 0) || Double.isInfinite(defaultRequestsPerSecond)) {
      throw new IllegalArgumentException("planner.default.rate: must be a finite number > 0, was "
          + defaultRequestsPerSecond);
    }
    if (defaultPartitionsLimit < 1) {
      throw new IllegalArgumentException("planner.default.partitions.max: must be >= 1, was " + defaultPartitionsLimit);
    }
    if (routeOnDemandLimit < 0) {
      throw new IllegalArgumentException("planner.routes.on-demand.max: must be >= 0, was " + routeOnDemandLimit);
    }
    if (!(mappingDrift >= 0 && mappingDrift < 1)) {
      throw new IllegalArgumentException("planner.mapping.drift: must be a number from 0 (plan the mapping afresh on"
          + " any change) up to but excluding 1, was " + mappingDrift);
    }
    if (mappingPoolLimit < 0) {
      throw new IllegalArgumentException("planner.mapping.max-pools: must be >= 0, was " + mappingPoolLimit);
    }
    if (!(hysteresis >= 0 && hysteresis < 1)) {
      throw new IllegalArgumentException("planner.hysteresis: must be a number from 0 (always take the newest plan) "
          + "up to but excluding 1, was " + hysteresis);
    }
  }

  public static PlanSettings defaults(Topics topics) {
    return new PlanSettings(topics, GroupingObjective.THROUGHPUT, 0, Long.MAX_VALUE, 1.0, DEFAULT_HYSTERESIS);
  }

  /** The same settings with other measuring settings. */
  public PlanSettings withMeasure(MeasureSettings other) {
    return new PlanSettings(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond,
        hysteresis, other, serving, mappingPoolLimit, routeOnDemandLimit, defaultPartitionsLimit, mappingDrift);
  }

  /** The same settings with other serving-evidence settings. */
  public PlanSettings withServing(ServingSettings other) {
    return new PlanSettings(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond,
        hysteresis, measure, other, mappingPoolLimit, routeOnDemandLimit, defaultPartitionsLimit, mappingDrift);
  }

  /** The same settings with another pool limit of the mapping. */
  public PlanSettings withMappingPoolLimit(int pools) {
    return new PlanSettings(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond,
        hysteresis, measure, serving, pools, routeOnDemandLimit, defaultPartitionsLimit, mappingDrift);
  }

  /** The same settings with another limit of a route's on-demand entries. */
  public PlanSettings withRouteOnDemandLimit(int slots) {
    return new PlanSettings(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond,
        hysteresis, measure, serving, mappingPoolLimit, slots, defaultPartitionsLimit, mappingDrift);
  }

  /** The same settings with another limit of a default placement's partitions. */
  public PlanSettings withDefaultPartitionsLimit(int partitions) {
    return new PlanSettings(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond,
        hysteresis, measure, serving, mappingPoolLimit, routeOnDemandLimit, partitions, mappingDrift);
  }

  /** The same settings with another drift of the mapping problem. */
  public PlanSettings withMappingDrift(double drift) {
    return new PlanSettings(topics, objective, bufferBytesPerPartition, bufferThresholdBytes, defaultRequestsPerSecond,
        hysteresis, measure, serving, mappingPoolLimit, routeOnDemandLimit, defaultPartitionsLimit, drift);
  }
}
