package io.partita.worker.slot;

import io.partita.models.repo.VersionEntry;
import io.partita.runtime.SlotConfig;
import io.partita.worker.serving.WeightFileRef;
import java.util.List;
import java.util.Objects;

/**
 * One slot as the worker runs it: a {@code SlotAssignment} checked against the model repository,
 * with the worker's defaults filled in.
 *
 * @param host the host id
 * @param slot the slot id, unique on the host
 * @param version the model version the slot runs
 * @param pool cpu or gpu
 * @param session how its ONNX Runtime session runs (CPUs, threads and spinning, or the CUDA device): the same
 *     record the profiler measures a partition with, opened through the runtime module
 * @param maxRows the largest batch, in rows, after the model's limit and the settings
 * @param budgetBytes memory budget for mounted weight files; 0 = no limit
 * @param instances the service models it serves
 */
public record SlotSpec(String host, String slot, VersionEntry version, String pool, SlotConfig session,
                       int maxRows, long budgetBytes, List<Instance> instances) {

  /**
   * One model instance on the slot.
   *
   * @param file the weight file, or null for the base model
   */
  public record Instance(String serviceModel, String instanceId, WeightFileRef file) {
    public Instance {
      Objects.requireNonNull(serviceModel, "serviceModel");
      Objects.requireNonNull(instanceId, "instanceId");
    }
  }

  public SlotSpec {
    instances = List.copyOf(instances);
  }

  public String model() {
    return version.model();
  }

  /** {@code host/slot}: the status key, and the {@code instance} of its replies. */
  public String name() {
    return host + "/" + slot;
  }

  /** A one-core CPU partition: its session may be shared with other such slots of the same version. */
  public boolean oneCore() {
    return session.oneCore();
  }
}
