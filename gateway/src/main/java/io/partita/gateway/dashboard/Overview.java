package io.partita.gateway.dashboard;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.avro.AssignedServiceModel;
import io.partita.avro.HostLiveness;
import io.partita.avro.JobStatus;
import io.partita.avro.PartitionPlan;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.avro.VersionChoice;
import io.partita.gateway.jobs.JobStates;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The dashboard's first screen as JSON: every service model a client can call, with whether it can
 * answer now (its ready instances of those planned and, in words, why not), this gateway's calls to
 * it over the window, and where it runs (hosts, slots, the model version each host runs); and a
 * one-line health summary (hosts, slots ready, requests per second, jobs, recent dead letters).
 *
 * <p>It explains, it does not decide: readiness is the planner's route (which the planner derives
 * from the workers' slot status). When nothing is planned, the reason is the first of: no route from
 * the planner, no host reported, the base model measured nowhere, the planner's own reasons (no
 * version a host can run, no eligible grouping). Built from what {@link DashboardState} and
 * {@link Traffic} hold, for one viewer, at a time the caller gives: no Kafka, no clock.
 */
final class Overview {
  static final String READY = "READY";
  static final String PARTLY_READY = "PARTLY_READY";
  static final String NOT_READY = "NOT_READY";

  /** One planned instance of a service model, as the route (or, before a route, the plan) has it. */
  private record Instance(String instanceId, String host, String slot, String version, boolean ready, String reason) {}

  private final DashboardState state;
  private final Traffic traffic;
  private final Set<String> serviceModels;
  private final int windowSeconds;
  private final int recentSeconds;

  /**
   * @param serviceModels the service models this gateway offers; the catalog's and the routes' are shown too
   * @param windowSeconds the window of the traffic figures
   * @param recentSeconds how far back the summary counts dead letters
   */
  Overview(DashboardState state, Traffic traffic, Set<String> serviceModels, int windowSeconds, int recentSeconds) {
    this.state = state;
    this.traffic = traffic;
    this.serviceModels = Set.copyOf(serviceModels);
    this.windowSeconds = windowSeconds;
    this.recentSeconds = recentSeconds;
  }

  ObjectNode build(Views.Viewer viewer, long nowMs) {
    Set<String> names = new TreeSet<>(serviceModels);
    names.addAll(state.routes.rows.keySet());
    names.addAll(state.catalog.rows.keySet());
    List<SlotAssignment> assignments = state.assignments.values();
    Set<String> left = hostsLeft();
    ObjectNode out = Views.JSON.createObjectNode().put("windowSeconds", windowSeconds);
    ObjectNode summary = out.putObject("summary");
    ArrayNode models = out.putArray("models");
    int ready = 0;
    double rate = 0;
    double errorRate = 0;
    for (String name : names) {
      if (!viewer.mayUse().test(name)) {
        continue;
      }
      ObjectNode m = model(name, assignments, left);
      models.add(m);
      ready += m.get("state").asText().equals(READY) ? 1 : 0;
      rate += m.get("rate").asDouble();
      errorRate += m.get("errorRate").asDouble();
    }
    Set<String> hosts = new TreeSet<>();
    state.hosts.values().forEach(h -> hosts.add(h.getHostId()));
    assignments.forEach(a -> hosts.add(a.getHost()));
    summary.put("hosts", hosts.size());
    ArrayNode hostsLeft = summary.putArray("hostsLeft");
    left.stream().filter(hosts::contains).forEach(hostsLeft::add);
    summary.put("slots", assignments.size());
    summary.put("slotsReady", assignments.stream().filter(this::slotReady).count());
    summary.put("models", models.size()).put("modelsReady", ready);
    summary.put("requestsPerSecond", Views.round(rate)).put("errorsPerSecond", Views.round(errorRate));
    long running = 0;
    long queued = 0;
    for (JobStatus j : state.jobs.values()) {
      if (viewer.mayUse().test(j.getServiceModel()) && !JobStates.isFinal(j.getState())) {
        running += j.getStartedAt() > 0 ? 1 : 0;
        queued += j.getStartedAt() > 0 ? 0 : 1;
      }
    }
    summary.put("jobsRunning", running).put("jobsQueued", queued);
    if (viewer.seesDeadLetters()) {
      List<DashboardState.Letter> letters = state.letters();
      long since = nowMs - recentSeconds * 1000L;
      long recent = letters.stream().filter(l -> l.timestamp() >= since).count();
      // Only the last ones are kept: when every kept letter is recent, there may have been more.
      boolean atLeast = letters.size() >= state.lettersKept() && recent == letters.size() && recent > 0;
      summary.putObject("deadLetters").put("count", recent).put("windowSeconds", recentSeconds).put("atLeast", atLeast);
    } else {
      summary.putNull("deadLetters");
    }
    return out;
  }

  private ObjectNode model(String name, List<SlotAssignment> assignments, Set<String> left) {
    Route route = state.routes.rows.get(name);
    ServiceModel catalog = state.catalog.rows.get(name);
    List<Instance> instances = instances(name, route, assignments);
    String base = catalog != null ? catalog.getBaseModel() : baseModel(name, route, assignments);
    int planned = instances.size();
    int ready = (int) instances.stream().filter(Instance::ready).count();
    String status = ready == 0 ? NOT_READY : ready < planned ? PARTLY_READY : READY;
    String reason;
    if (planned == 0) {
      reason = notPlanned(route, catalog, base);
    } else if (ready < planned) {
      Set<String> causes = new LinkedHashSet<>();
      instances.stream().filter(i -> !i.ready())
          .forEach(i -> causes.add(i.reason() != null ? i.reason() : "instance " + i.instanceId() + " is not ready"));
      reason = String.join("; ", causes);
    } else {
      reason = null;
    }
    if (catalog != null && planned > 0 && catalog.getInstances() > planned) {
      String shortfall = "only " + planned + " of the " + catalog.getInstances() + " instances wanted are planned";
      reason = reason == null ? shortfall : reason + "; " + shortfall;
    }
    ObjectNode m = Views.JSON.createObjectNode().put("model", name).put("baseModel", base).put("state", status)
        .put("readyInstances", ready).put("plannedInstances", planned)
        .put("wantedInstances", catalog == null ? null : catalog.getInstances()).put("reason", reason);
    Traffic.Figures f = traffic.figures(name);
    m.put("rate", f == null ? 0 : Views.round(f.rate())).put("errorRate", f == null ? 0 : Views.round(f.errorRate()))
        .put("requestsInWindow", f == null ? 0 : f.windowRequests()).put("errorsInWindow", f == null ? 0 : f.windowErrors())
        .put("p50Ms", f == null ? null : f.p50Ms()).put("p99Ms", f == null ? null : f.p99Ms());
    Map<String, List<Instance>> byHost = new TreeMap<>();
    instances.forEach(i -> byHost.computeIfAbsent(i.host(), h -> new ArrayList<>()).add(i));
    ArrayNode where = m.putArray("where");
    byHost.forEach((host, list) -> {
      ObjectNode w = where.addObject().put("host", host);
      ArrayNode versions = w.putArray("versions");
      list.stream().map(Instance::version).filter(v -> v != null).distinct().sorted().forEach(versions::add);
      ArrayNode slots = w.putArray("slots");
      list.stream().map(Instance::slot).distinct().sorted().forEach(slots::add);
      w.put("readyInstances", list.stream().filter(Instance::ready).count()).put("instances", list.size())
          .put("hostLeft", left.contains(host));
    });
    ArrayNode array = m.putArray("instances");
    instances.forEach(i -> array.addObject().put("instanceId", i.instanceId()).put("host", i.host()).put("slot", i.slot())
        .put("version", i.version()).put("ready", i.ready()).put("reason", i.reason()));
    return m;
  }

  /** The route's instances with the version their slot is planned to run; before any route, the plan's, none ready. */
  private static List<Instance> instances(String name, Route route, List<SlotAssignment> assignments) {
    List<Instance> out = new ArrayList<>();
    if (route != null) {
      for (RouteInstance i : route.getInstances()) {
        SlotAssignment a = assignments.stream().filter(s -> s.getHost().equals(i.getHost()) && s.getSlot().equals(i.getSlot()))
            .findFirst().orElse(null);
        out.add(new Instance(i.getInstanceId(), i.getHost(), i.getSlot(), a == null ? null : a.getVersion(), i.getReady(),
            i.getReady() ? null : i.getReason()));
      }
      return out;
    }
    for (SlotAssignment a : assignments) {
      for (AssignedServiceModel asm : a.getServiceModels()) {
        if (asm.getServiceModel().equals(name)) {
          out.add(new Instance(asm.getInstanceId(), a.getHost(), a.getSlot(), a.getVersion(), false,
              "the planner has published no route for it yet"));
        }
      }
    }
    return out;
  }

  /** The base model as the plan has it, when the catalog was not read: from a slot serving it, or the route's request topic. */
  private String baseModel(String name, Route route, List<SlotAssignment> assignments) {
    for (SlotAssignment a : assignments) {
      if (a.getServiceModels().stream().anyMatch(asm -> asm.getServiceModel().equals(name))) {
        return a.getModel();
      }
    }
    return route == null ? null : state.topics.baseModelOf(route.getRequestTopic());
  }

  /** Why no instance of a service model is planned, in the order a newcomer would check. */
  private String notPlanned(Route route, ServiceModel catalog, String base) {
    if (route == null && catalog == null) {
      return "the planner has published no route for it yet (is the planner running?)";
    }
    if (state.hosts.rows.isEmpty()) {
      return "no host has reported yet (each host's profiler publishes its environment)";
    }
    if (base != null && state.timings.rows.values().stream().noneMatch(t -> t.getOk() && t.getModel().equals(base))) {
      return "no host has measured " + base + " yet (the profiler measures it, then the planner places it)";
    }
    Set<String> causes = new LinkedHashSet<>();
    for (VersionChoice v : state.versions.values()) {
      if (v.getModel().equals(base) && v.getChosenVersion() == null && v.getNoChoiceReason() != null) {
        causes.add(v.getHost() + ": " + v.getNoChoiceReason());
      }
    }
    for (PartitionPlan p : state.partitions.values()) {
      if (p.getModel().equals(base) && !p.getPlanned() && p.getNoEligibleReason() != null) {
        causes.add(p.getHost() + ": " + p.getNoEligibleReason());
      }
    }
    return causes.isEmpty() ? "the planner placed no instance of it" : String.join("; ", causes);
  }

  /** A slot is ready when it serves at least one instance and its route says every one of them is ready. */
  private boolean slotReady(SlotAssignment a) {
    if (a.getServiceModels().isEmpty()) {
      return false;
    }
    for (AssignedServiceModel asm : a.getServiceModels()) {
      Route route = state.routes.rows.get(asm.getServiceModel());
      boolean ready = route != null && route.getInstances().stream().anyMatch(i -> i.getReady()
          && i.getInstanceId().equals(asm.getInstanceId()) && i.getHost().equals(a.getHost()) && i.getSlot().equals(a.getSlot()));
      if (!ready) {
        return false;
      }
    }
    return true;
  }

  private Set<String> hostsLeft() {
    Set<String> out = new TreeSet<>();
    for (HostLiveness l : state.liveness.values()) {
      if ("LEFT".equals(l.getState())) {
        out.add(l.getHost());
      }
    }
    return out;
  }
}
