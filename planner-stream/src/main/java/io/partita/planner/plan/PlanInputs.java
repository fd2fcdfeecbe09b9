package io.partita.planner.plan;

import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Everything the planner knows, as the input tables hold it: each map sorted by its key, so that
 * every plan built from it is the same whatever order the records arrived in.
 *
 * @param versions catalog, key model/version
 * @param serviceModels catalog, key service model
 * @param hosts environments, key host
 * @param slots slot status, key host/slot
 * @param demand traffic, key service model
 * @param timings the timing matrix: latest stable single-partition measurement per
 *     model/version/host/pool/size/batch/provider
 * @param groupings latest stable grouping-mode measurement per model/version/host/pool/batch/provider/sizes
 */
public record PlanInputs(
    SortedMap<String, ModelVersion> versions,
    SortedMap<String, ServiceModel> serviceModels,
    SortedMap<String, HostEnvironment> hosts,
    SortedMap<String, SlotStatus> slots,
    SortedMap<String, Demand> demand,
    SortedMap<String, TimingEvent> timings,
    SortedMap<String, TimingEvent> groupings) {

  public PlanInputs {
    versions = Collections.unmodifiableSortedMap(new TreeMap<>(versions));
    serviceModels = Collections.unmodifiableSortedMap(new TreeMap<>(serviceModels));
    hosts = Collections.unmodifiableSortedMap(new TreeMap<>(hosts));
    slots = Collections.unmodifiableSortedMap(new TreeMap<>(slots));
    demand = Collections.unmodifiableSortedMap(new TreeMap<>(demand));
    timings = Collections.unmodifiableSortedMap(new TreeMap<>(timings));
    groupings = Collections.unmodifiableSortedMap(new TreeMap<>(groupings));
  }
}
