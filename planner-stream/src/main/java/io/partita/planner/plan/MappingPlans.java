package io.partita.planner.plan;

import static io.partita.planner.plan.Plans.POOLS;
import static io.partita.planner.plan.Plans.catalogModels;
import static io.partita.planner.plan.Plans.timingsOf;
import static io.partita.planner.plan.Plans.poolIds;

import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.MappedModel;
import io.partita.avro.ServiceMapping;
import io.partita.avro.ServiceModel;
import io.partita.avro.TimingEvent;
import io.partita.planning.Assignment;
import io.partita.planning.MappingPlan;
import io.partita.planning.MappingPlanner;
import io.partita.planning.MappingProblem;
import io.partita.planning.ResourceSpec;
import io.partita.planning.ServiceSpec;
import io.partita.planning.ServiceStage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Method 2, mapping models to kinds of hardware, for the plan table {@code <p>.plan.mappings} (key
 * service): builds the timing matrix and the services from the input tables and calls {@link
 * io.partita.planning.MappingPlanner}. Pure: no Kafka, no clock.
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
   * @param chosen model/host -> chosen version id
   */
  public static MappingProblem mappingProblem(PlanInputs in, PlanSettings settings, Map<String, String> chosen) {
    List<ResourceSpec> resources = new ArrayList<>();
    for (HostEnvironment env : in.hosts().values()) {
      for (String pool : POOLS) {
        if (!poolIds(env, pool).isEmpty()) {
          resources.add(new ResourceSpec(env.getHostId() + Keys.SEP + pool, pool));
        }
      }
    }
    Set<String> models = catalogModels(in).keySet();
    Map<String, Map<String, Double>> latency = new TreeMap<>();
    for (String model : models) {
      Map<String, Double> row = new TreeMap<>();
      for (ResourceSpec r : resources) {
        String host = r.id().substring(0, r.id().lastIndexOf(Keys.SEP));
        String version = chosen.get(Keys.modelHost(model, host));
        if (version == null) {
          continue;
        }
        double best = Double.POSITIVE_INFINITY;
        for (TimingEvent e : timingsOf(in, model, version, host, r.kind())) {
          best = Math.min(best, Plans.batchTimeMs(e, in.hosts().get(host)) / e.getBatch());
        }
        if (best < Double.POSITIVE_INFINITY) {
          row.put(r.id(), best);
        }
      }
      latency.put(model, row);
    }
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
    SortedMap<String, ServiceMapping> out = new TreeMap<>();
    MappingProblem problem;
    String invalid = null;
    try {
      problem = mappingProblem(in, settings, chosen);
    } catch (IllegalArgumentException e) {
      problem = null;
      invalid = e.getMessage();
    }
    if (problem == null && invalid == null) {
      return out;
    }
    if (problem == null) {
      for (String service : servicesOf(in).keySet()) {
        out.put(service, unplanned(service, invalid.startsWith("resources: must span at least two kinds")
            ? "only one kind of resource: the mapping method needs at least two, so each model runs on every"
                + " pool where its chosen version was measured (" + invalid + ")"
            : "invalid mapping problem: " + invalid));
      }
      return out;
    }
    MappingPlan plan = MappingPlanner.plan(problem);
    Map<String, String> kindOf = new TreeMap<>();
    problem.resources().forEach(r -> kindOf.put(r.id(), r.kind()));
    for (ServiceSpec service : problem.services()) {
      io.partita.planning.ServiceMapping sm = plan.services().stream()
          .filter(s -> s.serviceId().equals(service.id())).findFirst().orElse(null);
      List<MappedModel> assigned = new ArrayList<>();
      for (Assignment a : plan.assignments()) {
        if (!a.serviceId().equals(service.id())) {
          continue;
        }
        String host = a.resourceId().substring(0, a.resourceId().lastIndexOf(Keys.SEP));
        double rate = service.stages().stream().filter(s -> s.modelId().equals(a.modelId()))
            .mapToDouble(ServiceStage::requestsPerSecond).findFirst().orElse(0);
        assigned.add(MappedModel.newBuilder().setModel(a.modelId())
            .setVersion(chosen.getOrDefault(Keys.modelHost(a.modelId(), host), ""))
            .setResource(a.resourceId()).setKind(kindOf.get(a.resourceId())).setLatencyMs(a.latencyMs())
            .setRequestsPerSecond(rate).setLoadMsPerSecond(a.loadMsPerSecond()).build());
      }
      List<String> errors = plan.errors().stream().filter(e -> e.contains("of service " + service.id() + " ")).toList();
      out.put(service.id(), ServiceMapping.newBuilder().setService(service.id())
          .setPlanned(plan.planned() && errors.isEmpty())
          .setReason(errors.isEmpty() ? null : "a model of the service can run on no resource")
          .setErrors(errors)
          .setChosenScheme(sm == null ? null : sm.chosen().name())
          .setWhy(sm == null ? null : sm.why())
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
