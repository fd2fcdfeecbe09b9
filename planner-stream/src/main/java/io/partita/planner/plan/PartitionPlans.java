package io.partita.planner.plan;

import static io.partita.planner.plan.Plans.POOLS;
import static io.partita.planner.plan.Plans.catalogModels;
import static io.partita.planner.plan.Plans.poolIds;
import static io.partita.planner.plan.Plans.poolMemory;
import static io.partita.planner.plan.Plans.demandOf;
import static io.partita.planner.plan.Plans.requirementsOf;

import io.partita.avro.ExcludedSize;
import io.partita.avro.GroupingOption;
import io.partita.avro.HostEnvironment;
import io.partita.avro.PartitionPlan;
import io.partita.planner.plan.Plans.Profile;
import io.partita.planning.grouping.AssessedGrouping;
import io.partita.planning.grouping.Grouping;
import io.partita.planning.grouping.GroupingMeasurement;
import io.partita.planning.grouping.GroupingPlan;
import io.partita.planning.grouping.GroupingProblem;
import io.partita.planning.grouping.Interference;
import io.partita.planning.grouping.MeasuredChoice;
import io.partita.planning.grouping.MeasuredGroupings;
import io.partita.planning.grouping.MeasurementSource;
import io.partita.planning.grouping.ModelDemand;
import io.partita.planning.grouping.ModelShare;
import io.partita.planning.grouping.PoolPlacement;
import io.partita.planning.grouping.PoolSharing;
import io.partita.planning.grouping.PoolSplitProblem;
import io.partita.planning.grouping.ServingFactor;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Method 1, partitioning each pool of a host, for the plan table {@code <p>.plan.partitions} (key
 * model/version/host/pool): every catalog model gets a place ({@link io.partita.planning.grouping.PoolSharing}),
 * measured ones grouped by {@link io.partita.planning.grouping.GroupingPlanner} and chosen by what was
 * measured in grouping mode ({@link MeasuredGroupings}: measurements where they exist, predictions
 * corrected by the pool's interference elsewhere), ones this host has not measured yet from the
 * most similar host's timings ({@link PredictedProfiles}, {@code predictedFrom} names it), the rest
 * by default ({@link DefaultPlacements}), running sizes kept within the hysteresis margin. Pure.
 */
public final class PartitionPlans {

  private PartitionPlans() {}

  /**
   * The pool-split problem of one pool of one host: every catalog model whose version chosen for
   * the host was measured on this pool, and which the mapping puts on this kind of pool (or which
   * no planned mapping covers). Null when no model qualifies.
   *
   * @param chosenOnHost model -> version chosen for this host
   * @param kinds model -> pool kinds from the mapping
   */
  public static PoolSplitProblem poolProblem(PlanInputs in, PlanSettings settings, String host, String pool,
      Map<String, String> chosenOnHost, Map<String, Set<String>> kinds) {
    return poolProblem(in, settings, host, pool, profiles(in, host, pool, chosenOnHost, kinds));
  }

  /**
   * model -> the profile it is planned from on one pool of a host (its own timings, or predicted
   * from a similar host while it has none: {@link PredictedProfiles}), for every catalog model whose
   * version chosen for the host has one there and which the mapping puts on this kind of pool (or
   * which no planned mapping covers).
   */
  static SortedMap<String, PredictedProfiles.HostProfile> profiles(PlanInputs in, String host, String pool,
      Map<String, String> chosenOnHost, Map<String, Set<String>> kinds) {
    SortedMap<String, PredictedProfiles.HostProfile> out = new TreeMap<>();
    HostEnvironment env = in.hosts().get(host);
    if (env == null || poolIds(env, pool).isEmpty()) {
      return out;
    }
    for (String model : catalogModels(in).keySet()) {
      String version = chosenOnHost.get(model);
      Set<String> allowed = kinds.get(model);
      if (version == null || (allowed != null && !allowed.contains(pool))) {
        continue;
      }
      PredictedProfiles.HostProfile profile = PredictedProfiles.of(in, model, version, host, pool);
      if (profile != null) {
        out.put(model, profile);
      }
    }
    return out;
  }

  private static PoolSplitProblem poolProblem(PlanInputs in, PlanSettings settings, String host, String pool,
      Map<String, PredictedProfiles.HostProfile> profiles) {
    HostEnvironment env = in.hosts().get(host);
    if (env == null || poolIds(env, pool).isEmpty()) {
      return null;
    }
    List<ModelDemand> demands = new ArrayList<>();
    profiles.forEach((model, hp) -> demands.add(new ModelDemand(model, demandOf(in, model), hp.profile().batch(),
        hp.profile().points(), requirementsOf(in, model).latencyObjectiveMs())));
    if (demands.isEmpty()) {
      return null;
    }
    return new PoolSplitProblem(poolIds(env, pool).size(), poolMemory(env, pool),
        settings.bufferBytesPerPartition(), settings.bufferThresholdBytes(), settings.objective(), demands);
  }

  /**
   * The partition plans of every pool of one host, key model/version/host/pool. Every catalog
   * model gets a place ({@link PoolSharing}): the measured ones split the pools where they were
   * measured; one the split leaves without a resource shares resources with the others; one with
   * no measurement on this host at all is planned on the CPU pool from the most similar host that
   * measured it there, scaled by baseline scores ({@link PredictedProfiles}; {@code predictedFrom}
   * names that host, {@code why} says so), until this host's own timings arrive; one nobody similar
   * measured either gets a default single-resource partition ({@code defaultPlan = true}) on the
   * first pool its default version can run on, so it is served before the profiler has timed it.
   */
  public static SortedMap<String, PartitionPlan> partitions(PlanInputs in, PlanSettings settings, String host,
      Map<String, String> chosenOnHost, Map<String, Set<String>> kinds) {
    return partitions(in, settings, host, chosenOnHost, kinds, Map.of());
  }

  /**
   * As above, keeping the sizes of the live plan of a key ({@code running}, key
   * model/version/host/pool) unless the fresh grouping beats them by more than {@code
   * planner.hysteresis} ({@link MeasuredGroupings#keepRunning}).
   */
  public static SortedMap<String, PartitionPlan> partitions(PlanInputs in, PlanSettings settings, String host,
      Map<String, String> chosenOnHost, Map<String, Set<String>> kinds, Map<String, PartitionPlan> running) {
    SortedMap<String, PartitionPlan> out = new TreeMap<>();
    HostEnvironment env = in.hosts().get(host);
    if (env == null) {
      return out;
    }
    Map<String, String> defaults = new TreeMap<>(DefaultPlacements.unmeasured(in, host, chosenOnHost));
    Map<String, SortedMap<String, PredictedProfiles.HostProfile>> profiles = new TreeMap<>();
    for (String pool : POOLS) {
      profiles.put(pool, profiles(in, host, pool, chosenOnHost, kinds));
      // A model planned from a predicted profile needs no default placement.
      defaults.keySet().removeAll(profiles.get(pool).keySet());
    }
    Map<String, Interference> interferences = new TreeMap<>();
    for (String pool : POOLS) {
      PoolSplitProblem problem = poolProblem(in, settings, host, pool, profiles.get(pool));
      Map<String, String> defaultsHere = new TreeMap<>();
      defaults.forEach((model, version) -> {
        if (pool.equals(DefaultPlacements.pool(in, model, version, env))) {
          defaultsHere.put(model, version);
        }
      });
      if (problem == null && defaultsHere.isEmpty()) {
        continue;
      }
      int poolSize = poolIds(env, pool).size();
      List<PoolPlacement> placements = PoolSharing.split(poolSize, poolMemory(env, pool),
          settings.bufferBytesPerPartition(), settings.bufferThresholdBytes(), settings.objective(),
          problem == null ? List.of() : problem.models(), defaultsHere.keySet(), settings.defaultPartitionsLimit());
      for (PoolPlacement placement : placements) {
        String model = placement.modelId();
        ModelShare share = placement.share();
        if (placement.kind() == PoolPlacement.Kind.DEFAULT) {
          String version = defaultsHere.get(model);
          out.put(Keys.partition(model, version, host, pool), DefaultPlacements.plan(model, version, host, pool,
              poolSize, share, demandOf(in, model)));
          continue;
        }
        String version = chosenOnHost.get(model);
        PredictedProfiles.HostProfile hostProfile = profiles.get(pool).get(model);
        Profile profile = hostProfile.profile();
        // A predicted profile is compared by its scaled points alone: no grouping of it ran here.
        Map<List<Integer>, GroupingMeasurement> profiled = hostProfile.own() ? GroupingEvidence.measured(in, model,
            version, host, pool, profile.batch(), profile.provider(), MeasurementSource.PROFILER) : Map.of();
        Map<List<Integer>, GroupingMeasurement> served = hostProfile.own() ? GroupingEvidence.measured(in, model,
            version, host, pool, profile.batch(), profile.provider(), MeasurementSource.SERVING) : Map.of();
        Interference interference = interferences.computeIfAbsent(pool, p -> GroupingEvidence.interference(in, host, p));
        List<Integer> lastServed = hostProfile.own() ? GroupingEvidence.lastServed(in, model, version, host, pool,
            profile.batch(), profile.provider()) : null;
        MeasuredChoice choice = choose(share, placement, problem, settings,
            running.get(Keys.partition(model, version, host, pool)), profile, profiled, served, lastServed,
            interference);
        Map<List<Integer>, GroupingMeasurement> measured = ServingFactor.none().compared(profiled, served);
        GroupingPlan g = choice.plan();
        PartitionPlan.Builder b = PartitionPlan.newBuilder().setModel(model).setVersion(version).setHost(host)
            .setPool(pool).setProvider(profile.provider()).setBatch(profile.batch())
            .setPoolSize(poolSize).setShareResources(share.resources())
            .setShareMemoryBytes(share.memoryBytes()).setRequestsPerSecond(share.requestsPerSecond())
            .setPlanned(g.planned()).setUnmetRequestsPerSecond(share.unmetRequestsPerSecond())
            .setNoEligibleReason(g.noEligibleReason()).setMethod(g.method() == null ? "none" : g.method())
            .setPlacement(placement.kind().name().toLowerCase(Locale.ROOT)).setDefaultPlan(false);
        List<GroupingOption> runnersUp = new ArrayList<>();
        for (Grouping r : g.runnersUp()) {
          // as the choice compared it (under the serving factor when one applied)
          AssessedGrouping a = choice.ranked().stream().filter(x -> x.grouping().sizes().equals(r.sizes())).findFirst()
              .orElseGet(() -> MeasuredGroupings.assess(r, measured, interference));
          runnersUp.add(GroupingOption.newBuilder().setSizes(r.sizes()).setThroughput(r.throughputPerSecond())
              .setMaxLatencyMs(r.maxLatencyMs()).setBasis(basis(a)).setExpectedThroughput(a.expectedThroughputPerSecond())
              .setMeasuredThroughput(a.measuredThroughputPerSecond()).build());
        }
        List<ExcludedSize> excluded = new ArrayList<>();
        g.excludedSizes().forEach(x -> excluded.add(new ExcludedSize(x.size(), x.reason())));
        b.setRunnersUp(runnersUp).setExcludedSizes(excluded);
        String predicted = hostProfile.own() ? null
            : "predicted from " + hostProfile.predicted().describe(Plans.hostOf(env)) + " (no timing of its own yet)";
        b.setPredictedFrom(hostProfile.own() ? null : hostProfile.predicted().source().hostId()).setWhy(predicted);
        if (g.planned()) {
          AssessedGrouping chosen = choice.choice();
          b.setSizes(g.choice().sizes()).setPredictedThroughput(g.choice().throughputPerSecond())
              .setMeasuredThroughput(chosen.measuredThroughputPerSecond())
              .setMaxLatencyMs(g.choice().maxLatencyMs()).setMemoryBytes(g.choice().memoryBytes())
              .setBasis(basis(chosen)).setExpectedThroughput(chosen.expectedThroughputPerSecond())
              .setInterferenceFactor(chosen.interferenceFactor())
              .setWhy(predicted == null ? choice.why() : predicted + ": " + choice.why());
        } else {
          b.setSizes(List.of()).setPredictedThroughput(0).setMaxLatencyMs(0).setMemoryBytes(0);
        }
        out.put(Keys.partition(model, version, host, pool), b.build());
      }
    }
    return out;
  }

  private static String basis(AssessedGrouping a) {
    return a.basis().name().toLowerCase(Locale.ROOT);
  }

  /**
   * The share's grouping chosen by what was measured ({@link MeasuredGroupings}), keeping the
   * running sizes when the choice is not better by the hysteresis margin. A shared placement's
   * single partition is not a choice: it is only assessed.
   *
   * <p>When a grouping of this batch and provider was measured from serving, the choice is made
   * under the pool's serving factor ({@link MeasuredGroupings#servingFactor}), read from the
   * grouping served last ({@code lastServed}, normally the running one): alternatives with only
   * idle or predicted figures are scaled by what serving costs here, so a plan does not switch away
   * from its running grouping under load only because serving is slower than the profiler's idle
   * runs. The factor does not depend on the running plan: right after a switch the new grouping has
   * not served yet and the one it replaced still sets the factor, so the next pass compares as this
   * one did and does not switch back.
   */
  private static MeasuredChoice choose(ModelShare share, PoolPlacement placement, PoolSplitProblem problem,
      PlanSettings settings, PartitionPlan running, Profile profile, Map<List<Integer>, GroupingMeasurement> profiled,
      Map<List<Integer>, GroupingMeasurement> served, List<Integer> lastServed, Interference interference) {
    GroupingPlan fresh = share.plan();
    ModelDemand demand = problem == null ? null
        : problem.models().stream().filter(m -> m.modelId().equals(share.modelId())).findFirst().orElse(null);
    if (!fresh.planned() || demand == null || share.resources() <= 0 || placement.kind() != PoolPlacement.Kind.SPLIT) {
      Map<List<Integer>, GroupingMeasurement> measured = ServingFactor.none().compared(profiled, served);
      AssessedGrouping a = fresh.planned() ? MeasuredGroupings.assess(fresh.choice(), measured, interference) : null;
      return new MeasuredChoice(fresh, a, a == null ? List.of() : List.of(a), null);
    }
    GroupingProblem grouping = new GroupingProblem(share.modelId(), share.resources(), share.memoryBytes(),
        demand.batchSize(), demand.profile(), settings.bufferBytesPerPartition(), share.bufferThresholdBytes(),
        demand.sloMs(), settings.objective());
    boolean keeps = running != null && running.getPlanned() && !running.getDefaultPlan()
        && running.getPlacement().equals(placement.kind().name().toLowerCase(Locale.ROOT))
        && running.getBatch() == profile.batch() && running.getProvider().equals(profile.provider());
    ServingFactor serving = lastServed == null ? ServingFactor.none()
        : MeasuredGroupings.servingFactor(grouping, lastServed, profiled, served, interference);
    Map<List<Integer>, GroupingMeasurement> measured = serving.compared(profiled, served);
    MeasuredChoice choice = MeasuredGroupings.choose(grouping, fresh, measured, interference, serving);
    if (!keeps) {
      return choice;
    }
    return MeasuredGroupings.keepRunning(grouping, choice, running.getSizes(), measured, interference,
        settings.hysteresis(), serving);
  }
}
