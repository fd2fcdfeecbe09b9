package io.partita.worker.slot;

import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.worker.serving.WeightFileMounts;
import io.partita.worker.serving.WeightFileRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A slot serves every service model of its base model. The plan's instances of a service model are
 * the least number of slots that keep its weight file mounted (mounted when the slot opens, so the
 * first request finds it there); they do not bound where its requests run. Any slot of the base
 * model may take a request: one that does not hold the weight file yet mounts it then (checked as
 * every mount is: path, sha256, fit), under the slot's weight-file budget, whose least recently
 * used files are unmounted first and a file in use by a running batch never. So a burst or a job on
 * one service model runs on every slot of its base model, as requests produced by any Kafka client
 * to the base model's topic are answered by whichever worker owns the partition.
 */
final class OnDemandMounts {
  private OnDemandMounts() {}

  /**
   * The slots that may take a request for {@code serviceModel}: every slot (in any state) of its base
   * model when the repository knows it, else the slots it was mounted on by name (the loading
   * interface mounts service models the repository does not list).
   */
  static List<Slot> candidates(RepositoryIndex index, String serviceModel, List<Slot> slots) {
    Optional<ServiceModelEntry> entry = index.serviceModel(serviceModel);
    String base = entry.map(ServiceModelEntry::baseModel).orElse(null);
    List<Slot> out = new ArrayList<>(slots.size());
    for (Slot s : slots) { // a loop, not a stream: this runs for every request
      if (s.spec().model().equals(base) || s.serves(serviceModel)) {
        out.add(s);
      }
    }
    return out;
  }

  /**
   * Mounts {@code serviceModel}'s weight file on {@code slot}, a running slot of its base model that
   * does not serve it yet, with the instance id of an unplanned instance ({@code host/slot/service model}).
   *
   * @return the mount (NOT_READY with the reason when it failed), or empty when the service model is
   *     unknown or the slot stopped in the meantime
   */
  static Optional<WeightFileMounts.Mount> mount(RepositoryIndex index, String serviceModel, Slot slot) {
    Optional<ServiceModelEntry> entry = index.serviceModel(serviceModel);
    if (entry.isEmpty()) {
      return Optional.empty();
    }
    WeightFileRef file = entry.get().weightFile().map(w -> new WeightFileRef(w.relativePath(), w.sha256())).orElse(null);
    try {
      return Optional.of(slot.mount(serviceModel, slot.spec().name() + "/" + serviceModel, file));
    } catch (IllegalStateException e) {
      return Optional.empty(); // the slot stopped between the check and the mount
    }
  }
}
