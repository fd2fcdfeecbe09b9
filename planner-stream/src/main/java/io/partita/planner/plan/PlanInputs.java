package io.partita.planner.plan;

import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.planning.version.HostFacts;
import io.partita.planning.version.VersionRequirements;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;

/**
 * Everything the planner knows, as the input tables hold it: each map sorted by its key, so that
 * every plan built from it is the same whatever order the records arrived in; and the lookups the
 * methods make again and again, answered from indexes ({@link InputTables}) instead of a scan of a
 * whole table.
 *
 * <p>{@code versions}: catalog, key model/version; {@code serviceModels}: catalog, key service model;
 * {@code hosts}: environments, key host; {@code slots}: slot status, key host/slot; {@code demand}:
 * traffic, key service model; {@code timings}: the timing matrix, the latest stable
 * single-partition measurement per model/version/host/pool/size/batch/provider; {@code groupings}:
 * the latest stable grouping-mode measurement per model/version/host/pool/batch/provider/sizes.
 */
public final class PlanInputs {
  private final InputTables tables;

  /** A snapshot of these maps (copied), for callers that build inputs by hand (tests, tools). */
  public PlanInputs(SortedMap<String, ModelVersion> versions, SortedMap<String, ServiceModel> serviceModels,
      SortedMap<String, HostEnvironment> hosts, SortedMap<String, SlotStatus> slots, SortedMap<String, Demand> demand,
      SortedMap<String, TimingEvent> timings, SortedMap<String, TimingEvent> groupings) {
    tables = new InputTables();
    load(InputTables.Table.VERSIONS, versions);
    load(InputTables.Table.SERVICE_MODELS, serviceModels);
    load(InputTables.Table.HOSTS, hosts);
    load(InputTables.Table.SLOTS, slots);
    load(InputTables.Table.DEMAND, demand);
    load(InputTables.Table.TIMINGS, timings);
    load(InputTables.Table.GROUPINGS, groupings);
  }

  /** The live view of {@code tables}. */
  PlanInputs(InputTables tables) {
    this.tables = tables;
  }

  private void load(InputTables.Table table, Map<String, ?> records) {
    // Timing events are copied: the tables share their ids between events (InputTables.intern).
    records.forEach((k, v) -> tables.put(table, k, v instanceof TimingEvent e ? TimingEvent.newBuilder(e).build() : v));
  }

  public SortedMap<String, ModelVersion> versions() {
    return Collections.unmodifiableSortedMap(tables.versions);
  }

  public SortedMap<String, ServiceModel> serviceModels() {
    return Collections.unmodifiableSortedMap(tables.serviceModels);
  }

  public SortedMap<String, HostEnvironment> hosts() {
    return Collections.unmodifiableSortedMap(tables.hosts);
  }

  public SortedMap<String, SlotStatus> slots() {
    return Collections.unmodifiableSortedMap(tables.slots);
  }

  public SortedMap<String, Demand> demand() {
    return Collections.unmodifiableSortedMap(tables.demand);
  }

  public SortedMap<String, TimingEvent> timings() {
    return Collections.unmodifiableSortedMap(tables.timings);
  }

  public SortedMap<String, TimingEvent> groupings() {
    return Collections.unmodifiableSortedMap(tables.groupings);
  }

  /** The models that have at least one version in the catalog, sorted, each with its versions in key order. */
  public SortedMap<String, List<ModelVersion>> catalogModels() {
    return tables.catalogModels();
  }

  /** The service models of one base model, by name. */
  public SortedMap<String, ServiceModel> serviceModelsOf(String baseModel) {
    return tables.serviceModelsOf(baseModel);
  }

  /** Requests per second for a base model: the sum of its service models' Demand (0 when none). */
  public double demandOf(String baseModel) {
    return tables.demandOf(baseModel);
  }

  /** The tightest requirements the service models of a base model place on it. */
  public VersionRequirements requirementsOf(String baseModel) {
    return tables.requirementsOf(baseModel);
  }

  /** The facts version choice needs about a host ({@link Plans#hostOf}); null for an unknown host. */
  public HostFacts factsOf(String host) {
    return tables.factsOf(host);
  }

  /** The versions of a model that a host has single-partition timings of. */
  public Set<String> measuredVersions(String model, String host) {
    return tables.measuredVersions(model, host);
  }

  /** The planned hosts that lack single-partition timings of some catalog version of a model, sorted. */
  public SortedSet<String> hostsLackingTimings(String model) {
    return tables.hostsLackingTimings(model);
  }

  /** The hosts that have single-partition timings of some version of a model (any host, planned or not). */
  Set<String> hostsMeasuring(String model) {
    return tables.hostsMeasuring(model);
  }

  /** The predictions made since the tables last changed ({@link PredictedProfiles.PassCache}). */
  PredictedProfiles.PassCache predictions() {
    return tables.predictions();
  }

  /** The grouping-mode measurements on one pool of one host, by key. */
  public SortedMap<String, TimingEvent> groupingsOn(String host, String pool) {
    return tables.groupingsOn(host, pool);
  }
}
