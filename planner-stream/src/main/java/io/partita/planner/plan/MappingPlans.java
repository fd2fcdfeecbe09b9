package io.partita.planner.plan;

import static io.partita.planner.plan.Plans.POOLS;
import static io.partita.planner.plan.Plans.catalogModels;
import static io.partita.planner.plan.Plans.poolIds;

import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.MappedModel;
import io.partita.avro.ServiceMapping;
import io.partita.avro.ServiceModel;
import io.partita.avro.TimingEvent;
import io.partita.planning.mapping.Assignment;
import io.partita.planning.mapping.MappingHysteresis;
import io.partita.planning.mapping.MappingPlan;
import io.partita.planning.mapping.MappingPlanner;
import io.partita.planning.mapping.MappingProblem;
import io.partita.planning.mapping.ResourceSpec;
import io.partita.planning.mapping.ServiceSpec;
import io.partita.planning.mapping.ServiceStage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Method 2, mapping models to kinds of hardware, for the plan table {@code <p>.plan.mappings} (key
 * service): builds the timing matrix and the services from the input tables and calls {@link
 * io.partita.planning.mapping.MappingPlanner}. Pure: no Kafka, no clock.
 */
public final class MappingPlans {

  private MappingPlans() {}

  /**
   * The mapping problem over every pool of every host (resource {@code host/pool}, kind the pool),
   * with {@code T[m][host/pool]} = the fastest per-item time ({@code p50 / batch}) of the model's
   * version chosen for that host, measured on that pool. Services: the catalog's service models
   * grouped by their {@code service} (or their base model), one stage per base model with the
   * summed Demand of its service models, or the default rate while none is known. Null when there
   * is no service or no resource.
   *
   * <p><b>Classes of alike pools.</b> With more than {@link PlanSettings#mappingPoolLimit()} pools
   * ({@code planner.mapping.max-pools}, default 64), a resource
   * is a class of alike pools instead: the pools of one kind on hosts with the same hardware (CPU:
   * the CPU model, usable cores, CPU flags and execution providers; GPU: the GPUs' names and memory
   * and the providers). Its id says what the pools are ({@link #className}: {@code cpu: Xeon 6338,
   * 32 cores}), not which hosts, so hosts joining and leaving keep it; its capacity is its pool
   * count, so a model mapped there spreads its load over them; its time for a model is the median
   * of its pools' times; the version it names is the one chosen on its first host. The mapping
   * decides a model's kind of pool and the model then runs on every pool of that kind where it was
   * measured, so a class loses nothing the plan uses,
   * and the problem stays as large as the fleet has kinds of hardware, not hosts: the improvement
   * pass is quadratic in placements times resources, and 2,000 pools made one pass of 50 models
   * take 0.3 s, of 500 models minutes.
   *
   * @param chosen model/host -> chosen version id
   */
  public static MappingProblem mappingProblem(PlanInputs in, PlanSettings settings, Map<String, String> chosen) {
    return mappingProblem(in, settings, (model, host) -> chosen.get(Keys.modelHost(model, host)));
  }

  /** The chosen version of a model on a host, or null: how the planner looks it up in the live plan. */
  @FunctionalInterface
  public interface ChosenVersions {
    String of(String model, String host);
  }

  /** As above, with the chosen versions looked up. */
  public static MappingProblem mappingProblem(PlanInputs in, PlanSettings settings, ChosenVersions chosen) {
    return problem(in, settings, MappingMatrix.full(in, settings, chosen));
  }

  /**
   * The resources and times of a mapping problem ({@link MappingMatrix}), and per resource the host
   * whose chosen version the plan names (a class's first).
   */
  public record Matrix(List<ResourceSpec> resources, Map<String, Map<String, Double>> latency,
                       Map<String, String> hostOf) {}

  /**
   * The mapping problem of a matrix, or null when there is nothing to map or the problem is invalid
   * (the mapping records then say why: {@link #mappings(PlanInputs, PlanSettings, Matrix,
   * ChosenVersions, Collection)}).
   */
  public static MappingProblem problemOrNull(PlanInputs in, PlanSettings settings, Matrix matrix) {
    try {
      return problem(in, settings, matrix);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** The mapping problem of a matrix: its resources and times, and the services; null when there is nothing to map. */
  static MappingProblem problem(PlanInputs in, PlanSettings settings, Matrix matrix) {
    if (matrix == null) {
      return null;
    }
    Set<String> models = catalogModels(in).keySet();
    List<ResourceSpec> resources = matrix.resources();
    Map<String, Map<String, Double>> latency = matrix.latency();
    List<ServiceSpec> services = new ArrayList<>();
    for (Map.Entry<String, List<ServiceModel>> service : servicesOf(in).entrySet()) {
      Map<String, double[]> rates = new TreeMap<>();
      Map<String, Boolean> known = new TreeMap<>();
      for (ServiceModel sm : service.getValue()) {
        if (!models.contains(sm.getBaseModel())) {
          continue;
        }
        Demand d = in.demand().get(sm.getName());
        rates.computeIfAbsent(sm.getBaseModel(), m -> new double[1])[0] += d == null ? 0 : d.getRequestsPerSecond();
        known.merge(sm.getBaseModel(), d != null, Boolean::logicalOr);
      }
      List<ServiceStage> stages = new ArrayList<>();
      rates.forEach((m, r) -> stages.add(new ServiceStage(m, known.get(m) ? r[0] : settings.defaultRequestsPerSecond())));
      if (!stages.isEmpty()) {
        services.add(new ServiceSpec(service.getKey(), stages));
      }
    }
    if (services.isEmpty() || resources.isEmpty()) {
      return null;
    }
    return new MappingProblem(resources, latency, services);
  }

  /** The class of alike pools a host's pool belongs to: kind first, then what makes pools alike. */
  static String hardware(HostEnvironment env, String pool) {
    List<String> providers = new ArrayList<>(env.getExecutionProviders());
    providers.sort(null);
    if (pool.equals(Plans.CPU)) {
      List<String> flags = new ArrayList<>(env.getCpuFlags());
      flags.sort(null);
      return pool + "|" + env.getCpuModel() + "|" + poolIds(env, pool).size() + "|" + flags + "|" + providers;
    }
    List<String> gpus = new ArrayList<>();
    env.getGpus().forEach(g -> gpus.add(g.getName() + ":" + g.getMemoryBytes()));
    gpus.sort(null);
    return pool + "|" + gpus + "|" + providers;
  }

  /**
   * The id of a class of alike pools, from what makes them alike and not from its hosts, so that
   * hosts joining and leaving keep it: {@code cpu: <CPU model>, <n> cores} or {@code gpu: <n> x
   * <GPU name>} (two classes that would read alike are told apart by {@code #2}, {@code #3} in the
   * order of their full descriptions).
   */
  static String className(HostEnvironment env, String pool) {
    String name;
    if (pool.equals(Plans.CPU)) {
      name = "cpu: " + env.getCpuModel() + ", " + poolIds(env, pool).size() + " cores";
    } else {
      List<String> gpus = new ArrayList<>();
      env.getGpus().forEach(g -> gpus.add(g.getName()));
      gpus.sort(null);
      name = "gpu: " + gpus.size() + " x " + String.join(" + ", new TreeSet<>(gpus));
    }
    return name.replace(Keys.SEP, "-");
  }

  /** The median (the mean of the middle two for an even count). */
  static double median(List<Double> values) {
    double[] a = new double[values.size()];
    for (int i = 0; i < a.length; i++) {
      a[i] = values.get(i);
    }
    return median(a, a.length);
  }

  /** The median of the first {@code n} values (at least one) of {@code a}, which it reorders. */
  static double median(double[] a, int n) {
    double upper = select(a, n, n / 2);
    if (n % 2 == 1) {
      return upper;
    }
    // After selecting the n/2-th, everything left of it is no larger: the (n/2 - 1)-th is their maximum.
    double lower = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n / 2; i++) {
      lower = Math.max(lower, a[i]);
    }
    return (lower + upper) / 2;
  }

  /**
   * The k-th smallest of the first {@code n} values (0-based), leaving smaller or equal values
   * before index k: a selection in linear expected time instead of a sort (the mapping takes a
   * median per class and model every pass). The pivot is the middle element, so the result does not
   * depend on any randomness.
   */
  private static double select(double[] a, int n, int k) {
    int lo = 0;
    int hi = n - 1;
    while (lo < hi) {
      double pivot = a[(lo + hi) >>> 1];
      int i = lo;
      int j = hi;
      while (i <= j) {
        while (Double.compare(a[i], pivot) < 0) {
          i++;
        }
        while (Double.compare(a[j], pivot) > 0) {
          j--;
        }
        if (i <= j) {
          double t = a[i];
          a[i] = a[j];
          a[j] = t;
          i++;
          j--;
        }
      }
      if (k <= j) {
        hi = j;
      } else if (k >= i) {
        lo = i;
      } else {
        break;
      }
    }
    return a[k];
  }

  /** Service models grouped by service id ({@code service}, else the base model), sorted. */
  public static SortedMap<String, List<ServiceModel>> servicesOf(PlanInputs in) {
    SortedMap<String, List<ServiceModel>> out = new TreeMap<>();
    for (ServiceModel sm : in.serviceModels().values()) {
      String id = sm.getService() != null && !sm.getService().isBlank() ? sm.getService() : sm.getBaseModel();
      out.computeIfAbsent(id, k -> new ArrayList<>()).add(sm);
    }
    return out;
  }

  /** One ServiceMapping per service (key service id), or none when there is nothing to map. */
  public static SortedMap<String, ServiceMapping> mappings(PlanInputs in, PlanSettings settings, Map<String, String> chosen) {
    return mappings(in, settings, (model, host) -> chosen.get(Keys.modelHost(model, host)));
  }

  /** As above, with the chosen versions looked up, and no running mapping. */
  public static SortedMap<String, ServiceMapping> mappings(PlanInputs in, PlanSettings settings, ChosenVersions chosen) {
    return mappings(in, settings, chosen, List.of());
  }

  /**
   * As above, keeping the running mapping ({@code running}: the live records) unless the fresh one
   * lowers the bottleneck by more than {@code planner.hysteresis} ({@link Hysteresis#keepMapping}):
   * with a class of alike pools as one resource, models compete for the same few resources, and a
   * few percent of timing noise moved models between CPU and GPU (and with them their partitions
   * on every host of the fleet).
   */
  public static SortedMap<String, ServiceMapping> mappings(PlanInputs in, PlanSettings settings, ChosenVersions chosen,
      Collection<ServiceMapping> running) {
    return mappings(in, settings, MappingMatrix.full(in, settings, chosen), chosen, running);
  }

  /** As above, with the matrix already made (the planner keeps it between passes: {@link MappingMatrix#update}). */
  public static SortedMap<String, ServiceMapping> mappings(PlanInputs in, PlanSettings settings, Matrix matrix,
      ChosenVersions chosen, Collection<ServiceMapping> running) {
    return mappings(in, settings, matrix, problemOrNull(in, settings, matrix), chosen, running);
  }

  /**
   * As above, with the matrix's problem already made ({@link #problemOrNull}; the planner holds it
   * against the problem the running mapping was planned on first).
   */
  public static SortedMap<String, ServiceMapping> mappings(PlanInputs in, PlanSettings settings, Matrix matrix,
      MappingProblem problem, ChosenVersions chosen, Collection<ServiceMapping> running) {
    SortedMap<String, ServiceMapping> out = new TreeMap<>();
    if (problem == null) {
      String invalid;
      try {
        problem(in, settings, matrix);
        return out; // nothing to map
      } catch (IllegalArgumentException e) {
        invalid = e.getMessage();
      }
      for (String service : servicesOf(in).keySet()) {
        out.put(service, unplanned(service, invalid.startsWith("resources: must span at least two kinds")
            ? "only one kind of resource: the mapping method needs at least two, so each model runs on every"
                + " pool where its chosen version was measured (" + invalid + ")"
            : "invalid mapping problem: " + invalid));
      }
      return out;
    }
    Map<String, String> incumbent = new TreeMap<>();
    for (ServiceMapping m : running) {
      if (m.getPlanned()) {
        m.getAssignments().forEach(a -> incumbent.put(m.getService() + "/" + a.getModel(), a.getResource()));
      }
    }
    MappingPlan fresh = MappingPlanner.plan(problem);
    MappingPlan plan = MappingHysteresis.keepMapping(problem, fresh, incumbent, settings.hysteresis());
    String kept = plan == fresh ? null : MappingHysteresis.KEPT_MAPPING + ": the fresh mapping's bottleneck "
        + fresh.costMsPerSecond() + " ms/s is not lower than the running one's " + plan.costMsPerSecond()
        + " ms/s by more than " + settings.hysteresis();
    Map<String, String> kindOf = new TreeMap<>();
    problem.resources().forEach(r -> kindOf.put(r.id(), r.kind()));
    for (ServiceSpec service : problem.services()) {
      io.partita.planning.mapping.ServiceMapping sm = plan.services().stream()
          .filter(s -> s.serviceId().equals(service.id())).findFirst().orElse(null);
      List<MappedModel> assigned = new ArrayList<>();
      for (Assignment a : plan.assignments()) {
        if (!a.serviceId().equals(service.id())) {
          continue;
        }
        String host = matrix.hostOf().get(a.resourceId());
        double rate = service.stages().stream().filter(s -> s.modelId().equals(a.modelId()))
            .mapToDouble(ServiceStage::requestsPerSecond).findFirst().orElse(0);
        assigned.add(MappedModel.newBuilder().setModel(a.modelId())
            .setVersion(Objects.requireNonNullElse(chosen.of(a.modelId(), host), ""))
            .setResource(a.resourceId()).setKind(kindOf.get(a.resourceId())).setLatencyMs(a.latencyMs())
            .setRequestsPerSecond(rate).setLoadMsPerSecond(a.loadMsPerSecond()).build());
      }
      List<String> errors = plan.errors().stream().filter(e -> e.contains("of service " + service.id() + " ")).toList();
      out.put(service.id(), ServiceMapping.newBuilder().setService(service.id())
          .setPlanned(plan.planned() && errors.isEmpty())
          .setReason(errors.isEmpty() ? null : "a model of the service can run on no resource")
          .setErrors(errors)
          .setChosenScheme(sm == null ? null : sm.chosen().name())
          .setWhy(kept != null ? kept : sm == null ? null : sm.why())
          .setModelFirstCostMsPerSecond(sm == null ? null : sm.modelFirst().costMsPerSecond())
          .setHardwareFirstCostMsPerSecond(sm == null ? null : sm.hardwareFirst().costMsPerSecond())
          .setCostMsPerSecond(plan.costMsPerSecond()).setPipelineLatencyMs(plan.pipelineLatencyMs())
          .setAssignments(assigned)
          .setExactComputed(plan.exact() != null && plan.exact().computed())
          .setExactCostMsPerSecond(plan.exact() != null && plan.exact().computed() ? plan.exact().costMsPerSecond() : null)
          .setGap(plan.exact() == null ? null : plan.exact().gap())
          .setExactReason(plan.exact() == null ? null : plan.exact().reason())
          .build());
    }
    return out;
  }

  private static ServiceMapping unplanned(String service, String reason) {
    return ServiceMapping.newBuilder().setService(service).setPlanned(false).setReason(reason)
        .setErrors(List.of()).setCostMsPerSecond(0).setPipelineLatencyMs(0).setAssignments(List.of())
        .setExactComputed(false).build();
  }

  /** model -> the pool kinds the planned mappings put it on; a model absent here may use any pool. */
  public static SortedMap<String, Set<String>> kinds(Collection<ServiceMapping> mappings) {
    SortedMap<String, Set<String>> out = new TreeMap<>();
    for (ServiceMapping m : mappings) {
      if (!m.getPlanned()) {
        continue;
      }
      for (MappedModel a : m.getAssignments()) {
        out.computeIfAbsent(a.getModel(), k -> new TreeSet<>()).add(a.getKind());
      }
    }
    return out;
  }
}
