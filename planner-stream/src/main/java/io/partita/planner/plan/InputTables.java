package io.partita.planner.plan;

import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.HostLiveness;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.planning.version.HostFacts;
import io.partita.planning.version.VersionObjective;
import io.partita.planning.version.VersionRequirements;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The input tables, decoded, kept up to date one record at a time, with the indexes the planning
 * methods look things up by (a model's versions, a base model's service models, its summed demand
 * and tightest requirements, a host's facts, the grouping-mode measurements of one host's pool).
 * Its hosts are the planned ones: an environment whose host's worker has not left ({@link HostStates}).
 * A planning pass reads it through {@link #view()}, so no pass decodes a whole table: at 1,000
 * hosts and 500 models that was 2 million timing events per pass. Pure: no Kafka, no clock.
 *
 * <p>The planner keeps one per task, fed by the fold processors after each store write; it is
 * rebuilt from the stores when the task starts, so it is always a function of the stores.
 */
public final class InputTables {
  /** The tables, as the input topics and stores name them. */
  public enum Table { VERSIONS, SERVICE_MODELS, HOSTS, LIVENESS, SLOTS, DEMAND, TIMINGS, GROUPINGS }

  final TreeMap<String, ModelVersion> versions = new TreeMap<>();
  final TreeMap<String, ServiceModel> serviceModels = new TreeMap<>();
  /** Every host's environment, and its last liveness record. */
  private final TreeMap<String, HostEnvironment> environments = new TreeMap<>();
  private final TreeMap<String, HostLiveness> liveness = new TreeMap<>();
  /** The hosts to plan ({@link HostStates}: not those whose worker left), as the methods read them. */
  final TreeMap<String, HostEnvironment> hosts = new TreeMap<>();
  final TreeMap<String, SlotStatus> slots = new TreeMap<>();
  final TreeMap<String, Demand> demand = new TreeMap<>();
  final TreeMap<String, TimingEvent> timings = new TreeMap<>();
  final TreeMap<String, TimingEvent> groupings = new TreeMap<>();

  /** model -> its catalog versions in key order. */
  private final TreeMap<String, List<ModelVersion>> catalogModels = new TreeMap<>();
  /** base model -> its service models by name. */
  private final Map<String, TreeMap<String, ServiceModel>> serviceModelsByBase = new HashMap<>();
  /** model -> host -> version -> how many single-partition timings of it the host has. */
  private final Map<String, Map<String, Map<String, Integer>>> measured = new HashMap<>();
  /**
   * model -> the planned hosts that lack single-partition timings of some catalog version of it
   * (their choice of its version may be predicted from other hosts), kept as hosts, the catalog and
   * timings change: a pass asks for every model whose version it re-plans, and walking every host
   * for it cost most of a churn pass's version stage at 1,000 hosts.
   */
  private final Map<String, TreeSet<String>> lacking = new HashMap<>();
  /** host/pool -> its grouping-mode measurements by key. */
  private final Map<String, TreeMap<String, TimingEvent>> groupingsByPool = new HashMap<>();
  /** Derived lazily, dropped when what they are derived from changes. */
  private final Map<String, Double> demandByBase = new HashMap<>();
  private final Map<String, VersionRequirements> requirementsByBase = new HashMap<>();
  private final Map<String, HostFacts> facts = new HashMap<>();
  /** Repeated ids (model, version, host, pool, provider) held once: timing events repeat them millions of times. */
  private final Map<String, String> ids = new HashMap<>();
  /** The predicted profiles of one pass, dropped at every change: they read most tables. */
  private final PredictedProfiles.PassCache predictions = new PredictedProfiles.PassCache();

  private final PlanInputs view = new PlanInputs(this);

  /** The tables as a pass reads them: live, unmodifiable views (valid until the next change). */
  public PlanInputs view() {
    return view;
  }

  /** Sets ({@code value} non-null) or removes one record. */
  public void put(Table table, String key, Object value) {
    predictions.clear();
    switch (table) {
      case VERSIONS -> putVersion(key, (ModelVersion) value);
      case SERVICE_MODELS -> putServiceModel(key, (ServiceModel) value);
      case HOSTS -> {
        set(environments, key, (HostEnvironment) value);
        refreshHost(key);
      }
      case LIVENESS -> {
        set(liveness, key, (HostLiveness) value);
        refreshHost(key);
      }
      case SLOTS -> set(slots, key, (SlotStatus) value);
      case DEMAND -> {
        ServiceModel sm = serviceModels.get(key);
        if (sm != null) {
          demandByBase.remove(sm.getBaseModel());
        }
        set(demand, key, (Demand) value);
      }
      case TIMINGS -> putTiming(key, value == null ? null : intern((TimingEvent) value));
      case GROUPINGS -> putGrouping(key, value == null ? null : intern((TimingEvent) value));
      default -> throw new IllegalArgumentException("no table " + table);
    }
  }

  public void clear() {
    for (Table t : Table.values()) {
      map(t).clear();
    }
    hosts.clear();
    catalogModels.clear();
    serviceModelsByBase.clear();
    groupingsByPool.clear();
    measured.clear();
    lacking.clear();
    demandByBase.clear();
    requirementsByBase.clear();
    facts.clear();
    ids.clear();
    predictions.clear();
  }

  private Map<String, ?> map(Table t) {
    return switch (t) {
      case VERSIONS -> versions;
      case SERVICE_MODELS -> serviceModels;
      case HOSTS -> environments;
      case LIVENESS -> liveness;
      case SLOTS -> slots;
      case DEMAND -> demand;
      case TIMINGS -> timings;
      case GROUPINGS -> groupings;
    };
  }

  private static <T> void set(TreeMap<String, T> map, String key, T value) {
    if (value == null) {
      map.remove(key);
    } else {
      map.put(key, value);
    }
  }

  /** Whether a host is planned follows its environment and its liveness. */
  private void refreshHost(String host) {
    facts.remove(host);
    boolean was = hosts.containsKey(host);
    HostEnvironment env = environments.get(host);
    if (env != null && HostStates.planned(liveness.get(host))) {
      hosts.put(host, env);
    } else {
      hosts.remove(host);
    }
    if (was != hosts.containsKey(host)) {
      for (String model : catalogModels.keySet()) {
        refreshLacking(model, host);
      }
    }
  }

  /** Whether {@code host} is planned and lacks timings of some catalog version of {@code model}. */
  private void refreshLacking(String model, String host) {
    List<ModelVersion> list = catalogModels.get(model);
    if (list == null) {
      return;
    }
    if (hosts.containsKey(host) && !measuredAll(model, host, list)) {
      lacking.computeIfAbsent(model, m -> new TreeSet<>()).add(host);
    } else {
      TreeSet<String> of = lacking.get(model);
      if (of != null && of.remove(host) && of.isEmpty()) {
        lacking.remove(model);
      }
    }
  }

  private boolean measuredAll(String model, String host, List<ModelVersion> list) {
    Map<String, Map<String, Integer>> byHost = measured.get(model);
    Map<String, Integer> own = byHost == null ? null : byHost.get(host);
    if (own == null) {
      return false;
    }
    for (int i = 0; i < list.size(); i++) {
      if (!own.containsKey(list.get(i).getVersion())) {
        return false;
      }
    }
    return true;
  }

  private void putVersion(String key, ModelVersion value) {
    ModelVersion old = value == null ? versions.remove(key) : versions.put(key, value);
    if (old != null) {
      refreshModel(old.getModel());
    }
    if (value != null) {
      refreshModel(value.getModel());
    }
  }

  private void refreshModel(String model) {
    // Keys are model/version (the fold refuses a record whose key says otherwise), so a model's
    // versions are the key range of its prefix, in key order.
    String prefix = model + Keys.SEP;
    List<ModelVersion> list = new ArrayList<>(versions.subMap(prefix, prefix + Character.MAX_VALUE).values());
    lacking.remove(model);
    if (list.isEmpty()) {
      catalogModels.remove(model);
    } else {
      catalogModels.put(model, Collections.unmodifiableList(list));
      for (String host : hosts.keySet()) {
        refreshLacking(model, host);
      }
    }
  }

  private void putServiceModel(String key, ServiceModel value) {
    ServiceModel old = value == null ? serviceModels.remove(key) : serviceModels.put(key, value);
    if (old != null) {
      TreeMap<String, ServiceModel> of = serviceModelsByBase.get(old.getBaseModel());
      if (of != null) {
        of.remove(key);
        if (of.isEmpty()) {
          serviceModelsByBase.remove(old.getBaseModel());
        }
      }
      demandByBase.remove(old.getBaseModel());
      requirementsByBase.remove(old.getBaseModel());
    }
    if (value != null) {
      serviceModelsByBase.computeIfAbsent(value.getBaseModel(), b -> new TreeMap<>()).put(key, value);
      demandByBase.remove(value.getBaseModel());
      requirementsByBase.remove(value.getBaseModel());
    }
  }

  private void putTiming(String key, TimingEvent value) {
    TimingEvent old = value == null ? timings.remove(key) : timings.put(key, value);
    if (old == null && value != null) {
      measured.computeIfAbsent(value.getModel(), k -> new HashMap<>()).computeIfAbsent(value.getHost(), k -> new HashMap<>())
          .merge(value.getVersion(), 1, Integer::sum);
      refreshLacking(value.getModel(), value.getHost());
    } else if (old != null && value == null) {
      Map<String, Map<String, Integer>> hosts = measured.get(old.getModel());
      Map<String, Integer> versions = hosts == null ? null : hosts.get(old.getHost());
      if (versions != null) {
        versions.computeIfPresent(old.getVersion(), (v, n) -> n > 1 ? n - 1 : null);
        if (versions.isEmpty()) {
          hosts.remove(old.getHost());
        }
        if (hosts.isEmpty()) {
          measured.remove(old.getModel());
        }
      }
      refreshLacking(old.getModel(), old.getHost());
    }
  }

  private void putGrouping(String key, TimingEvent value) {
    TimingEvent old = value == null ? groupings.remove(key) : groupings.put(key, value);
    if (old != null) {
      String pool = Keys.hostPool(old.getHost(), old.getPool());
      TreeMap<String, TimingEvent> on = groupingsByPool.get(pool);
      if (on != null) {
        on.remove(key);
        if (on.isEmpty()) {
          groupingsByPool.remove(pool);
        }
      }
    }
    if (value != null) {
      groupingsByPool.computeIfAbsent(Keys.hostPool(value.getHost(), value.getPool()), p -> new TreeMap<>()).put(key, value);
    }
  }

  private TimingEvent intern(TimingEvent e) {
    e.setModel(id(e.getModel()));
    e.setVersion(id(e.getVersion()));
    e.setHost(id(e.getHost()));
    e.setPool(id(e.getPool()));
    e.setProvider(id(e.getProvider()));
    e.setCondition(id(e.getCondition()));
    return e;
  }

  private String id(String s) {
    return s == null ? null : ids.computeIfAbsent(s, k -> k);
  }

  // ------------------------------------------------------------------ lookups for PlanInputs

  SortedMap<String, List<ModelVersion>> catalogModels() {
    return Collections.unmodifiableSortedMap(catalogModels);
  }

  SortedMap<String, ServiceModel> serviceModelsOf(String base) {
    TreeMap<String, ServiceModel> of = serviceModelsByBase.get(base);
    return of == null ? Collections.emptySortedMap() : Collections.unmodifiableSortedMap(of);
  }

  Set<String> hostsMeasuring(String model) {
    Map<String, Map<String, Integer>> hosts = measured.get(model);
    return hosts == null ? Set.of() : Collections.unmodifiableSet(hosts.keySet());
  }

  PredictedProfiles.PassCache predictions() {
    return predictions;
  }

  SortedSet<String> hostsLackingTimings(String model) {
    TreeSet<String> of = lacking.get(model);
    return of == null ? Collections.emptySortedSet() : Collections.unmodifiableSortedSet(of);
  }

  Set<String> measuredVersions(String model, String host) {
    Map<String, Map<String, Integer>> hosts = measured.get(model);
    Map<String, Integer> versions = hosts == null ? null : hosts.get(host);
    return versions == null ? Set.of() : Collections.unmodifiableSet(versions.keySet());
  }

  SortedMap<String, TimingEvent> groupingsOn(String host, String pool) {
    TreeMap<String, TimingEvent> on = groupingsByPool.get(Keys.hostPool(host, pool));
    return on == null ? Collections.emptySortedMap() : Collections.unmodifiableSortedMap(on);
  }

  double demandOf(String base) {
    Double cached = demandByBase.get(base);
    if (cached != null) {
      return cached;
    }
    double sum = 0;
    for (ServiceModel sm : serviceModelsOf(base).values()) {
      Demand d = demand.get(sm.getName());
      if (d != null) {
        sum += d.getRequestsPerSecond();
      }
    }
    demandByBase.put(base, sum);
    return sum;
  }

  VersionRequirements requirementsOf(String base) {
    VersionRequirements cached = requirementsByBase.get(base);
    if (cached != null) {
      return cached;
    }
    Double latency = null;
    Double accuracy = null;
    Long memory = null;
    VersionObjective objective = VersionObjective.LATENCY;
    for (ServiceModel sm : serviceModelsOf(base).values()) {
      if (VersionObjective.parse(sm.getVersionObjective()).orElse(VersionObjective.LATENCY) == VersionObjective.ACCURACY) {
        objective = VersionObjective.ACCURACY;
      }
      if (sm.getLatencyObjectiveMs() != null) {
        latency = latency == null ? sm.getLatencyObjectiveMs() : Math.min(latency, sm.getLatencyObjectiveMs());
      }
      if (sm.getMinAccuracy() != null) {
        accuracy = accuracy == null ? sm.getMinAccuracy() : Math.max(accuracy, sm.getMinAccuracy());
      }
      if (sm.getMemoryCapBytes() != null) {
        memory = memory == null ? sm.getMemoryCapBytes() : Math.min(memory, sm.getMemoryCapBytes());
      }
    }
    VersionRequirements out = new VersionRequirements(latency, accuracy, memory, objective);
    requirementsByBase.put(base, out);
    return out;
  }

  HostFacts factsOf(String host) {
    HostFacts cached = facts.get(host);
    if (cached != null) {
      return cached;
    }
    HostEnvironment env = hosts.get(host);
    if (env == null) {
      return null;
    }
    HostFacts out = Plans.hostOf(env);
    facts.put(host, out);
    return out;
  }
}
