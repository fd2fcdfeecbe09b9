package io.partita.planner.plan;

import static io.partita.planner.plan.Plans.catalogModels;
import static io.partita.planner.plan.Plans.requirementsOf;

import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionCandidate;
import io.partita.avro.VersionChoice;
import io.partita.planning.version.HostFacts;
import io.partita.planning.version.TimingObservation;
import io.partita.planning.version.VersionHysteresis;
import io.partita.planning.version.VersionOutcome;
import io.partita.planning.version.VersionPlan;
import io.partita.planning.version.VersionProblem;
import io.partita.planning.version.VersionSelector;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Method 4, version choice, for the plan table {@code <p>.plan.versions} (key model/host): builds
 * the problem from the input tables and calls {@link io.partita.planning.version.VersionSelector}, keeping
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
    List<HostFacts> others = new ArrayList<>();
    in.hosts().keySet().stream().filter(h -> !h.equals(host)).forEach(h -> others.add(in.factsOf(h)));
    return new VersionProblem(in.factsOf(host), others, candidates(versions), observations, requirementsOf(in, model));
  }

  private static List<io.partita.planning.version.ModelVersion> candidates(List<ModelVersion> versions) {
    return versions.stream().map(v -> new io.partita.planning.version.ModelVersion(v.getVersion(),
        Set.copyOf(v.getProviders()), v.getPrecision(), v.getMemoryBytes() == null ? 0 : v.getMemoryBytes(),
        v.getAccuracy())).toList();
  }

  /**
   * A model's observations as a pass needs them: per version and host, that host's observations of
   * the version, read by key and kept for the pass, since the most similar host that measured a
   * version is often the source of many predicting hosts.
   */
  public static final class Evidence {
    private final PlanInputs in;
    private final String model;
    private final Map<String, List<TimingObservation>> byVersionHost = new HashMap<>();

    private Evidence(PlanInputs in, String model) {
      this.in = in;
      this.model = model;
    }

    /** The host's own observations: per version, its timings at the smallest batch it measured. */
    List<TimingObservation> own(String host, List<ModelVersion> versions) {
      List<TimingObservation> out = new ArrayList<>();
      for (ModelVersion v : versions) {
        out.addAll(read(v.getVersion(), host));
      }
      return out;
    }

    /**
     * A source host's observations of one version, kept for the pass (a host's own are read once
     * a pass, so {@link #own} does not keep them).
     */
    List<TimingObservation> of(String version, String host) {
      return byVersionHost.computeIfAbsent(version + Keys.SEP + host, k -> read(version, host));
    }

    /** One host's observations of one version: its timings of it at the smallest batch it measured. */
    private List<TimingObservation> read(String version, String host) {
      String prefix = Keys.modelVersion(model, version) + Keys.SEP + host + Keys.SEP;
      SortedMap<String, TimingEvent> events = in.timings().subMap(prefix, prefix + Character.MAX_VALUE);
      int smallest = Integer.MAX_VALUE;
      for (TimingEvent e : events.values()) {
        smallest = Math.min(smallest, e.getBatch());
      }
      HostEnvironment env = in.hosts().get(host);
      List<TimingObservation> out = new ArrayList<>();
      for (TimingEvent e : events.values()) {
        if (e.getBatch() == smallest) {
          out.add(new TimingObservation(e.getVersion(), e.getHost(), Plans.batchTimeMs(e, env)));
        }
      }
      return out;
    }

    /** Whether {@code host} measured every one of these versions itself. */
    boolean measuredAll(String host, List<ModelVersion> versions) {
      Set<String> own = in.measuredVersions(model, host);
      for (ModelVersion v : versions) {
        if (!own.contains(v.getVersion())) {
          return false;
        }
      }
      return true;
    }
  }

  /** The evidence of one model for one pass. */
  public static Evidence evidence(PlanInputs in, String model) {
    return new Evidence(in, model);
  }

  /**
   * The version problem of one model on one host as a pass solves it, with only the observations
   * that can decide the choice ({@code VersionPlansTest} checks that it chooses, version by version,
   * as the full problem with every host's observations and every other host does):
   * <ul>
   *   <li>each version the host measured: its own observations, because {@link VersionSelector}
   *       takes a version's own median whenever the host has one;
   *   <li>each version it did not measure and can run ({@link VersionSelector#canRun}): the
   *       observations of that version on the most similar other host that measured it and loads
   *       the providers it needs, which is the host the selector predicts it from; that host is
   *       found by walking the other hosts in similarity order ({@link SimilarHosts}, made once per
   *       host and pass) to the first that qualifies, and is the only other host of the problem
   *       with observations of that version, so the selector can find no other;
   *   <li>a version it cannot run: nothing, since the selector excludes it before it looks.
   * </ul>
   * A host that measured every version is planned from its own observations alone. At 1,000 hosts
   * the full problem of each predicting host held every host's observations of the model: 4 s a
   * pass while five new hosts waited for their profiles.
   */
  public static VersionProblem reducedProblem(PlanInputs in, String model, String host, Evidence evidence) {
    List<ModelVersion> versions = catalogModels(in).get(model);
    HostEnvironment env = in.hosts().get(host);
    if (versions == null || env == null) {
      return null;
    }
    HostFacts facts = in.factsOf(host);
    var candidates = candidates(versions);
    List<TimingObservation> timings = new ArrayList<>(evidence.own(host, versions));
    if (evidence.measuredAll(host, versions)) {
      return new VersionProblem(facts, List.of(), candidates, timings, requirementsOf(in, model));
    }
    Set<String> own = in.measuredVersions(model, host);
    // the catalog versions this host never measured but can run: each needs one source host
    var wanted = new ArrayList<>(candidates);
    wanted.removeIf(v -> own.contains(v.versionId()) || !VersionSelector.canRun(facts, v));
    List<HostFacts> sources = new ArrayList<>();
    Set<String> measuring = in.hostsMeasuring(model);
    if (!wanted.isEmpty() && !measuring.isEmpty()) {
      SimilarHosts order = SimilarHosts.of(in, host);
      for (int place : order.walk(measuring)) {
        String there = order.hosts().get(place);
        HostFacts source = order.facts().get(place);
        Set<String> measured = in.measuredVersions(model, there);
        boolean used = false;
        for (var it = wanted.iterator(); it.hasNext(); ) {
          var v = it.next();
          if (measured.contains(v.versionId()) && source.providers().containsAll(v.requiredProviders())) {
            timings.addAll(evidence.of(v.versionId(), there));
            used = true;
            it.remove();
          }
        }
        if (used) {
          sources.add(source);
        }
        if (wanted.isEmpty()) {
          break;
        }
      }
    }
    return new VersionProblem(facts, sources, candidates, timings, requirementsOf(in, model));
  }

  /**
   * The hosts whose choice for {@code model} may depend on other hosts: those that did not
   * measure every catalog version of it themselves (their choice may be a prediction from another
   * host). A change on one host re-plans that host and these, not every host.
   */
  public static Set<String> predictingHosts(PlanInputs in, String model) {
    // kept by the input tables as hosts, the catalog and timings change (PlanInputs#hostsLackingTimings)
    return new TreeSet<>(in.hostsLackingTimings(model));
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
    return choice(versionProblem(in, model, host, observations), model, host, running, hysteresis);
  }

  /** As above, from the model's {@link Evidence} of this pass ({@link #reducedProblem}). */
  public static VersionChoice versionChoice(PlanInputs in, String model, String host, String running, double hysteresis,
                                            Evidence evidence) {
    return choice(reducedProblem(in, model, host, evidence), model, host, running, hysteresis);
  }

  private static VersionChoice choice(VersionProblem problem, String model, String host, String running,
                                      double hysteresis) {
    if (problem == null) {
      return null;
    }
    VersionPlan plan = VersionHysteresis.keepVersion(VersionSelector.choose(problem), running, hysteresis);
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
