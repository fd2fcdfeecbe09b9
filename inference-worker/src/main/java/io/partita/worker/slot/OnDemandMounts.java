package io.partita.worker.slot;

import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.worker.serving.WeightFileRef;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * A slot serves every service model of its base model: a request for a service model no slot here
 * was assigned is not refused when a running slot runs its base model. The least loaded such slot
 * takes the service model on and mounts its weight file (checked as every mount is: path, sha256,
 * fit), under the slot's weight-file budget, whose least recently used files are unmounted first
 * and a file in use by a running batch never. The plan's allocation still decides where a service
 * model is warm (mounted at slot start, and routed to by the gateway); this is the path for the
 * rest, so requests on a base model's topic are answered by whichever worker owns the partition.
 */
final class OnDemandMounts {
  private OnDemandMounts() {}

  /**
   * Mounts {@code serviceModel} on the least loaded running slot of its base model.
   *
   * @return that slot, or empty when the service model is unknown or no slot here runs its base model
   */
  static List<Slot> mountOnBaseModel(RepositoryIndex index, String serviceModel, List<Slot> slots) {
    Optional<ServiceModelEntry> entry = index.serviceModel(serviceModel);
    if (entry.isEmpty()) {
      return List.of();
    }
    String base = entry.get().baseModel();
    Optional<Slot> target = slots.stream().filter(s -> s.running() && s.spec().model().equals(base))
        .min(Comparator.comparingInt(Slot::load).thenComparing(s -> s.spec().slot()));
    if (target.isEmpty()) {
      return List.of();
    }
    Slot slot = target.get();
    WeightFileRef file = entry.get().weightFile().map(w -> new WeightFileRef(w.relativePath(), w.sha256())).orElse(null);
    try {
      // the instance id of an unplanned instance, as for an assignment that names none
      slot.mount(serviceModel, slot.spec().name() + "/" + serviceModel, file);
    } catch (IllegalStateException e) {
      return List.of(); // the slot stopped between the check and the mount: routed as not served
    }
    return List.of(slot);
  }
}
