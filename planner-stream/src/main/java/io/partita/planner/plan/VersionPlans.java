package io.partita.planner.plan;

import static io.partita.planner.plan.Plans.catalogModels;
import static io.partita.planner.plan.Plans.requirementsOf;
import static io.partita.planner.plan.Plans.hostOf;

import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionCandidate;
import io.partita.avro.VersionChoice;
import io.partita.planning.HostFacts;
import io.partita.planning.Hysteresis;
import io.partita.planning.TimingObservation;
import io.partita.planning.VersionOutcome;
import io.partita.planning.VersionPlan;
import io.partita.planning.VersionProblem;
import io.partita.planning.VersionSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Method 4, version choice, for the plan table {@code <p>.plan.versions} (key model/host): builds
 * the problem from the input tables and calls {@link io.partita.planning.VersionSelector}, keeping
 * the running version within the hysteresis margin. Pure: no Kafka, no clock.
 */
public final class VersionPlans {

  private VersionPlans() {}

  /**
   * The input of version choice for one model on one host. Observations: every stable
   * single-partition measurement of the model's versions at the smallest batch size measured for
   * that version on that host, its p50 latency (so a latency objective compares with the latency
   * of one small request).
   */
  public static VersionProblem versionProblem(PlanInputs in, String model, String host) {
    return versionProblem(in, model, host, observations(in, model));
  }

  /**
   * As {@link #versionProblem(PlanInputs, String, String)} with the model's observations already
   * made ({@link #observations}): they depend on the model only, so a pass over every host of a model
   * makes them once instead of once per host (with 50 hosts that was 7 % of a replay's time).
   */
  public static VersionProblem versionProblem(PlanInputs in, String model, String host,
                                              List<TimingObservation> observations) {
    List<ModelVersion> versions = catalogModels(in).get(model);
    HostEnvironment env = in.hosts().get(host);
    if (versions == null || env == null) {
      return null;
    }
    List<io.partita.planning.ModelVersion> candidates = new ArrayList<>();
    for (ModelVersion v : versions) {
      candidates.add(new io.partita.planning.ModelVersion(v.getVersion(), Set.copyOf(v.getProviders()),
          v.getPrecision(), v.getMemoryBytes() == null ? 0 : v.getMemoryBytes(), v.getAccuracy()));
    }
    List<HostFacts> others = new ArrayList<>();
    in.hosts().values().stream().filter(h -> !h.getHostId().equals(host)).forEach(h -> others.add(hostOf(h)));
    return new VersionProblem(hostOf(env), others, candidates, observations, requirementsOf(in, model));
  }

  /** The observations of a model's versions on every host (see {@link #versionProblem(PlanInputs, String, String)}). */
  public static List<TimingObservation> observations(PlanInputs in, String model) {
    Map<String, Integer> smallestBatch = new TreeMap<>();
    List<TimingEvent> events = new ArrayList<>();
    String prefix = model + Keys.SEP;
    for (TimingEvent e : in.timings().subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      events.add(e);
      smallestBatch.merge(e.getVersion() + Keys.SEP + e.getHost(), e.getBatch(), Math::min);
    }
    List<TimingObservation> out = new ArrayList<>();
    for (TimingEvent e : events) {
      if (e.getBatch() == smallestBatch.get(e.getVersion() + Keys.SEP + e.getHost())) {
        out.add(new TimingObservation(e.getVersion(), e.getHost(), Plans.batchTimeMs(e, in.hosts().get(e.getHost()))));
      }
    }
    return out;
  }

  /** The version choice for one model on one host; null when the model or the host is unknown. */
  public static VersionChoice versionChoice(PlanInputs in, String model, String host) {
    return versionChoice(in, model, host, null, 0);
  }

  /**
   * The version choice for one model on one host, keeping {@code running} (the version chosen by the
   * live plan, or null) unless the fastest qualifying version beats it by more than {@code
   * hysteresis} ({@link Hysteresis#keepVersion}). The record names the objective ranked by and the
   * latency objective every candidate was held against.
   */
  public static VersionChoice versionChoice(PlanInputs in, String model, String host, String running, double hysteresis) {
    return versionChoice(in, model, host, running, hysteresis, observations(in, model));
  }

  /** As above, with the model's {@link #observations} already made. */
  public static VersionChoice versionChoice(PlanInputs in, String model, String host, String running, double hysteresis,
                                            List<TimingObservation> observations) {
    VersionProblem problem = versionProblem(in, model, host, observations);
    if (problem == null) {
      return null;
    }
    VersionPlan plan = Hysteresis.keepVersion(VersionSelector.choose(problem), running, hysteresis);
    List<VersionCandidate> candidates = new ArrayList<>();
    for (VersionOutcome o : plan.outcomes()) {
      candidates.add(VersionCandidate.newBuilder().setVersion(o.versionId()).setStatus(o.status().name())
          .setLatencyMs(o.latencyMs()).setPredicted(o.predicted()).setSourceHost(o.sourceHost())
          .setAccuracy(o.accuracy()).setReason(o.reason()).build());
    }
    return VersionChoice.newBuilder().setModel(model).setHost(host).setChosenVersion(plan.chosenVersionId())
        .setNoChoiceReason(plan.noChoiceReason()).setCandidates(candidates).setObjective(plan.objective().text())
        .setLatencyObjectiveMs(problem.requirements().latencyObjectiveMs()).build();
  }
}
