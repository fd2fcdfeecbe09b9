package io.partita.worker.slot;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceRequest;
import io.partita.avro.SlotStatus;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.VersionEntry;
import io.partita.worker.batch.BatchPolicy;
import io.partita.worker.metrics.WorkerMetrics;
import io.partita.worker.serving.Replies;
import io.partita.worker.serving.RequestCheck;
import io.partita.worker.serving.SessionFactory;
import io.partita.worker.serving.ModelSession;
import io.partita.worker.serving.WeightFileMounts;
import io.partita.worker.serving.WeightFileRef;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * The worker's slots, and the router in front of them. {@link #submit} answers a request at once
 * when no slot can take it (NOT_FOUND, NOT_READY, BAD_INPUT), and otherwise queues it on the least
 * loaded slot that runs the version it needs and serves its service model with a usable mount.
 *
 * <p>Version choice: the version the request names; without one, the newest version that has a
 * slot here for the service model.
 */
public final class Slots implements AutoCloseable {
  private final RepositoryIndex index;
  private final List<Slot> slots = new ArrayList<>();
  private final SessionRegistry sessions;
  private final LongSupplier clock;

  /**
   * Settings every slot shares.
   *
   * @param maxDelayMs the batching queue delay
   * @param shareSessions whether one-core slots of one version share a session
   */
  public record Settings(long maxDelayMs, boolean shareSessions) {}

  public Slots(RepositoryIndex index, List<SlotSpec> specs, Settings settings, SessionFactory factory,
               WorkerMetrics metrics, LongSupplier clock, Runnable onChange) {
    this.index = index;
    this.clock = clock;
    this.sessions = new SessionRegistry(factory, index.root(), settings.shareSessions(), clock, onChange);
    for (SlotSpec spec : specs) {
      slots.add(new Slot(spec, new BatchPolicy(spec.maxRows(), settings.maxDelayMs()), sessions, metrics, clock, onChange));
    }
  }

  /**
   * Starts every slot and waits until each has opened its session or failed.
   *
   * @throws IllegalStateException when no slot could open a session
   */
  public void start(Duration timeout) throws InterruptedException {
    slots.forEach(Slot::start);
    for (Slot slot : slots) {
      if (!slot.awaitStarted(timeout)) {
        throw new IllegalStateException("slot " + slot.spec().name() + " did not open its session within " + timeout);
      }
    }
    if (!slots.isEmpty() && slots.stream().noneMatch(Slot::running)) {
      throw new IllegalStateException("no slot could open its session: " + slots.get(0).message());
    }
  }

  public List<Slot> slots() {
    return List.copyOf(slots);
  }

  /** Service models with at least one slot here. */
  public Set<String> serviceModels() {
    Set<String> out = new TreeSet<>();
    for (Slot s : slots) {
      s.instances().forEach(i -> out.add(i.serviceModel()));
    }
    return out;
  }

  /** The slot with this id. */
  public Optional<Slot> slot(String id) {
    return slots.stream().filter(s -> s.spec().slot().equals(id)).findFirst();
  }

  /**
   * The loading interface, by slot id: mounts a service model's weight file on a running slot.
   *
   * @see Slot#mount
   */
  public WeightFileMounts.Mount mount(String slot, String serviceModel, String instanceId, WeightFileRef file) {
    return slot(slot).orElseThrow(() -> new IllegalArgumentException("no slot '" + slot + "' here")).mount(serviceModel, instanceId, file);
  }

  /**
   * Takes a service model off a slot; its weight file is unmounted (once no run uses it) unless
   * another slot sharing the same session still serves it.
   *
   * @return whether the slot served it
   */
  public boolean unmount(String slot, String serviceModel) {
    Slot target = slot(slot).orElseThrow(() -> new IllegalArgumentException("no slot '" + slot + "' here"));
    if (!target.drop(serviceModel)) {
      return false;
    }
    ModelSession session = target.session();
    boolean stillUsed = slots.stream().anyMatch(s -> s != target && s.session() == session && s.serves(serviceModel));
    if (session != null && !stillUsed) {
      session.mounts().unmount(serviceModel);
    }
    return true;
  }

  /** Requests queued or running over all slots. */
  public int queued() {
    int n = 0;
    for (Slot s : slots) {
      n += s.queued();
    }
    return n;
  }

  public List<SlotStatus> statuses() {
    long now = clock.getAsLong();
    return slots.stream().map(s -> s.status(now)).toList();
  }

  /** Routes a request to a slot, or answers it at once. Exactly one answer either way. */
  public void submit(Job job) {
    InferenceRequest request = job.request();
    String name = request.getServiceModel();
    List<Slot> serving = slots.stream().filter(s -> s.serves(name)).toList();
    if (serving.isEmpty()) {
      job.answer().accept(Replies.error(request, null, ErrorCode.NOT_FOUND, "service model '" + name + "' is not served here", null));
      return;
    }
    String model = serving.get(0).spec().model();
    String wanted = request.getVersion();
    List<Slot> candidates;
    if (wanted != null) {
      candidates = serving.stream().filter(s -> s.spec().version().version().equals(wanted)).toList();
      if (candidates.isEmpty()) {
        Optional<ModelEntry> entry = index.model(model);
        boolean exists = entry.isPresent() && entry.get().version(wanted).isPresent();
        job.answer().accept(Replies.error(request, null, exists ? ErrorCode.NOT_READY : ErrorCode.NOT_FOUND, exists
            ? "version '" + wanted + "' of model '" + model + "' has no slot on this worker for '" + name + "'; its slots run versions " + versions(serving)
            : "version '" + wanted + "' of service model '" + name + "' does not exist; versions: "
                + entry.map(e -> e.versions().keySet().toString()).orElse("[]"), null));
        return;
      }
    } else {
      String newest = newest(model, serving);
      candidates = serving.stream().filter(s -> s.spec().version().version().equals(newest)).toList();
    }
    VersionEntry version = candidates.get(0).spec().version();
    String reason = null;
    Slot best = null;
    for (Slot s : candidates) {
      if (!s.running()) {
        reason = reason != null ? reason : "slot " + s.spec().slot() + " is " + s.health().name().toLowerCase()
            + (s.message() == null ? "" : ": " + s.message());
        continue;
      }
      Optional<WeightFileMounts.Mount> mount = s.mount(name);
      if (mount.isEmpty() || mount.get().state() == WeightFileMounts.State.NOT_READY) {
        reason = reason != null ? reason : mount.map(WeightFileMounts.Mount::reason).orElse("not mounted on slot " + s.spec().slot());
        continue;
      }
      if (best == null || s.load() < best.load()) {
        best = s;
      }
    }
    if (best == null) {
      job.answer().accept(Replies.error(request, version.version(), ErrorCode.NOT_READY,
          "service model '" + name + "' is not ready: " + reason, null));
      return;
    }
    Optional<String> problem = RequestCheck.problem(version, request);
    if (problem.isPresent()) {
      job.answer().accept(Replies.error(request, version.version(), ErrorCode.BAD_INPUT, problem.get(), best.spec().name()));
      return;
    }
    best.enqueue(job, RequestCheck.batching(version, request));
  }

  private static List<String> versions(List<Slot> slots) {
    return slots.stream().map(s -> s.spec().version().version()).distinct().sorted().toList();
  }

  /** The newest of the versions these slots run, in the repository's version order. */
  private String newest(String model, List<Slot> serving) {
    Set<String> run = new TreeSet<>(versions(serving));
    Optional<ModelEntry> entry = index.model(model);
    String newest = null;
    if (entry.isPresent()) {
      for (String v : entry.get().versions().keySet()) {
        if (run.contains(v)) {
          newest = v;
        }
      }
    }
    return newest != null ? newest : serving.stream().map(s -> s.spec().version().version()).max(Comparator.naturalOrder()).orElseThrow();
  }

  /** Stops every slot (each runs what it has queued first), then closes the sessions. */
  public void stop(Duration timeout) {
    slots.forEach(Slot::requestStop);
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Slot s : slots) {
      s.awaitStopped(deadline);
    }
    if (slots.stream().noneMatch(Slot::runnerAlive)) {
      sessions.close();
    }
  }

  @Override
  public void close() {
    stop(Duration.ofSeconds(10));
  }
}
