package io.partita.worker.slot;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceRequest;
import io.partita.avro.SlotStatus;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.VersionEntry;
import io.partita.runtime.SessionOpener;
import io.partita.worker.batch.BatchPolicy;
import io.partita.worker.fetch.ModelFetcher;
import io.partita.worker.metrics.WorkerMetrics;
import io.partita.worker.serving.ModelSession;
import io.partita.worker.serving.Replies;
import io.partita.worker.serving.RequestCheck;
import io.partita.worker.serving.WeightFileMounts;
import io.partita.worker.serving.WeightFileRef;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's slots, and the router in front of them. {@link #submit} answers a request at once
 * when no slot can take it (NOT_FOUND, NOT_READY, BAD_INPUT), and otherwise queues it on the least
 * loaded running slot of its base model that runs the version it needs, whether or not the plan put
 * its service model there: a slot that does not hold the weight file yet mounts it first
 * ({@link OnDemandMounts}), so a burst or a job on one service model uses every slot of its base
 * model. A slot whose mount of the service model failed is passed over.
 *
 * <p>Version choice: the version the request names; without one, the newest version that has a
 * slot here for the service model.
 */
public final class Slots implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Slots.class);

  private volatile RepositoryIndex index; // replaced by refresh() when the repository gained models
  /** The slots that take requests; replaced as a whole when the plan changes (read without a lock). */
  private volatile List<Slot> slots = List.of();
  private final SessionRegistry sessions;
  private final LongSupplier clock;
  private final Settings settings;
  private final WorkerMetrics metrics;
  private final Runnable onChange;
  private boolean closed; // guarded by this

  /**
   * Settings every slot shares.
   *
   * @param maxDelayMs how long a batch may wait for more requests
   * @param shareSessions one-core slots of one model version share one session
   * @param acrossWeightFiles open a qualifying model in its per-row LoRA form, so requests of different weight files
   *     share a batch (docs/models.md says which graphs qualify)
   * @param modelCache where model and weight files are fetched, their sha256 checked against the catalog (or the
   *     scan), before a session opens or mounts them ({@code worker.model.cache.dir}); empty: opened in the repository
   * @param repository the model repository that repository-path URIs are relative to; empty for a worker without one
   *     (fed by the catalog), which then fetches only {@code http(s):} and {@code file:} URIs
   * @param warmUpRequests synthetic requests each slot opened by {@link #apply} runs before it takes requests
   *     ({@link #warmUp}; 0 = none)
   */
  public record Settings(long maxDelayMs, boolean shareSessions, boolean acrossWeightFiles,
                         Optional<Path> modelCache, Optional<Path> repository, int warmUpRequests) {
    public Settings(long maxDelayMs, boolean shareSessions, boolean acrossWeightFiles) {
      this(maxDelayMs, shareSessions, acrossWeightFiles, Optional.empty(), Optional.empty());
    }

    public Settings(long maxDelayMs, boolean shareSessions, boolean acrossWeightFiles,
                    Optional<Path> modelCache, Optional<Path> repository) {
      this(maxDelayMs, shareSessions, acrossWeightFiles, modelCache, repository, 0);
    }
  }

  /** How long a warm-up may take in all (a heavy model's few hundred runs). */
  static final Duration WARM_UP_TIMEOUT = Duration.ofSeconds(30);

  public Slots(RepositoryIndex index, List<SlotSpec> specs, Settings settings, SessionOpener opener,
               WorkerMetrics metrics, LongSupplier clock, Runnable onChange) {
    this.index = index;
    this.clock = clock;
    this.settings = settings;
    this.metrics = metrics;
    this.onChange = onChange;
    this.sessions = new SessionRegistry(opener, index.root(), settings.shareSessions(), settings.acrossWeightFiles(), clock, onChange,
        settings.modelCache().map(dir -> new ModelFetcher(
            settings.repository(), dir,
            HttpClient.newHttpClient(), Duration.ofMinutes(10))));
    List<Slot> list = new ArrayList<>();
    for (SlotSpec spec : specs) {
      list.add(newSlot(spec));
    }
    list.forEach(Slot::registerGauges);
    slots = List.copyOf(list);
  }

  private Slot newSlot(SlotSpec spec) {
    return new Slot(spec, new BatchPolicy(spec.maxRows(), settings.maxDelayMs()), sessions, metrics, clock, onChange);
  }

  /**
   * The outcome of {@link #apply}.
   *
   * @param applied whether the new slots serve now
   * @param reason why not, naming the slot at fault
   * @param retired the {@code host/slot} names of slots that were closed and that no slot uses any more
   */
  public record Change(boolean applied, String reason, List<String> retired) {}

  /**
   * Replaces the slots with {@code specs} without losing a request. A slot whose spec is unchanged
   * keeps running untouched; one whose spec differs only in the largest batch keeps running and
   * takes the new limit. The new slots are opened first (sessions, pinning, mounts); when one of
   * them fails to open or cannot mount a weight file, they are closed again and the current slots
   * keep serving (the change is not applied, and the reason says why). Otherwise requests are routed
   * to the new slots from then on, and the old ones are drained (they run every batch they queued or
   * were running) and closed; a request routed to an old slot just as it stopped taking requests is
   * routed again to the new ones.
   */
  public synchronized Change apply(List<SlotSpec> specs, Duration startTimeout, Duration drainTimeout)
      throws InterruptedException {
    if (closed) {
      return new Change(false, "the worker is stopping", List.of());
    }
    List<Slot> current = slots;
    List<Slot> next = new ArrayList<>();
    List<Slot> opened = new ArrayList<>();
    List<Runnable> retunes = new ArrayList<>();
    for (SlotSpec spec : specs) {
      Slot same = current.stream().filter(s -> s.spec().equals(spec) && s.running()).findFirst().orElse(null);
      Slot similar = same != null ? null : current.stream()
          .filter(s -> s.running() && !next.contains(s) && sameButBatch(s.spec(), spec)).findFirst().orElse(null);
      if (same != null) {
        next.add(same);
      } else if (similar != null) {
        next.add(similar);
        retunes.add(() -> similar.retune(spec));
      } else {
        Slot created = newSlot(spec);
        opened.add(created);
        next.add(created);
      }
    }
    if (opened.isEmpty() && next.size() == current.size()) {
      retunes.forEach(Runnable::run);
      return new Change(true, null, List.of());
    }
    opened.forEach(Slot::start);
    String problem = null;
    for (Slot s : opened) {
      if (!s.awaitStarted(startTimeout)) {
        problem = "slot " + s.spec().name() + " did not open its session within " + startTimeout;
      } else if (!s.running()) {
        problem = "slot " + s.spec().name() + ": " + s.message();
      } else {
        for (SlotSpec.Instance i : s.instances()) {
          Optional<WeightFileMounts.Mount> m = s.mount(i.serviceModel());
          if (m.isEmpty() || m.get().state() == WeightFileMounts.State.NOT_READY) {
            problem = "slot " + s.spec().name() + ": instance " + i.instanceId() + " of '" + i.serviceModel() + "' is not ready: "
                + m.map(WeightFileMounts.Mount::reason).orElse("not mounted");
            break;
          }
        }
      }
      if (problem != null) {
        break;
      }
    }
    if (problem != null) {
      retire(opened, drainTimeout);
      return new Change(false, problem, List.of());
    }
    // The new sessions' first runs before the first client's (the old slots serve meanwhile).
    warmUp(opened, settings.warmUpRequests());
    List<Slot> old = current.stream().filter(s -> !next.contains(s)).toList();
    old.forEach(Slot::removeGauges);
    opened.forEach(Slot::registerGauges);
    retunes.forEach(Runnable::run);
    slots = List.copyOf(next);
    onChange.run();
    log.info("Slots now {}; draining {}", next.stream().map(s -> s.spec().name()).toList(), old.stream().map(s -> s.spec().name()).toList());
    retire(old, drainTimeout);
    List<String> retired = new ArrayList<>();
    for (Slot s : old) {
      if (next.stream().noneMatch(n -> n.spec().name().equals(s.spec().name()))) {
        retired.add(s.spec().name());
      }
    }
    return new Change(true, null, retired);
  }

  /**
   * Whether applying {@code specs} would open or close a slot: false when every spec is a running
   * slot's, or differs from it only in the largest batch (which {@link #apply} takes in place), and
   * no other slot runs.
   */
  public boolean wouldReplace(List<SlotSpec> specs) {
    List<Slot> current = slots;
    if (current.size() != specs.size()) {
      return true;
    }
    List<Slot> matched = new ArrayList<>();
    for (SlotSpec spec : specs) {
      Slot match = current.stream().filter(s -> s.running() && !matched.contains(s)
          && (s.spec().equals(spec) || sameButBatch(s.spec(), spec))).findFirst().orElse(null);
      if (match == null) {
        return true;
      }
      matched.add(match);
    }
    return false;
  }

  /** Whether two specs differ at most in the largest batch (a running slot then takes the new one in place). */
  private static boolean sameButBatch(SlotSpec a, SlotSpec b) {
    return a.equals(new SlotSpec(b.host(), b.slot(), b.version(), b.pool(), b.session(), a.maxRows(), b.budgetBytes(), b.instances()));
  }

  /** Stops the slots (each runs what it holds first), then releases their sessions. */
  private void retire(List<Slot> retiring, Duration timeout) {
    retiring.forEach(Slot::requestStop);
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Slot s : retiring) {
      s.awaitStopped(deadline);
      s.removeGauges();
      if (!s.runnerAlive()) {
        sessions.release(s.session());
      }
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
    return slots;
  }

  /**
   * Runs {@code requests} synthetic requests through each running slot ({@link WarmUp}), so the JIT
   * has compiled the serving path before the worker says it is ready. Logged once; a failure is
   * logged and does not stop the slot.
   */
  public void warmUp(int requests) throws InterruptedException {
    warmUp(slots, requests);
  }

  private void warmUp(List<Slot> targets, int requests) throws InterruptedException {
    if (requests <= 0 || targets.isEmpty()) {
      return;
    }
    WarmUp.Outcome o = WarmUp.run(index, targets, requests, WARM_UP_TIMEOUT);
    if (o.problem() != null) {
      log.warn("Warm-up of slots {}: {} of {} synthetic requests failed or were not run; the slots serve anyway: {}",
          targets.stream().map(s -> s.spec().name()).toList(), o.failed(), o.requests(), o.problem());
    } else {
      log.info("Warmed up slots {}: {} synthetic requests in {} ms", targets.stream().map(s -> s.spec().name()).toList(),
          o.requests(), o.millis());
    }
  }

  /** The base model of a service model of the repository, if it has one. */
  public Optional<String> baseModelOf(String serviceModel) {
    return index.serviceModel(serviceModel).map(e -> e.baseModel());
  }

  /**
   * Takes a newer scan of the same repository (a model was added while the worker runs), so that
   * the next {@link #apply} can place its versions and requests find its service models. Slots
   * already running keep the entries they were opened with.
   */
  public void refresh(RepositoryIndex newer) {
    if (!newer.root().equals(index.root())) {
      throw new IllegalArgumentException("a scan of " + newer.root() + " cannot replace one of " + index.root());
    }
    index = newer;
  }

  /**
   * Service models with at least one slot here: those assigned to a slot, and every service model
   * of the repository whose base model a slot here runs (any slot of a base model serves all of them).
   */
  public Set<String> serviceModels() {
    Set<String> out = new TreeSet<>();
    Set<String> models = new TreeSet<>();
    for (Slot s : slots) {
      s.instances().forEach(i -> out.add(i.serviceModel()));
      models.add(s.spec().model());
    }
    index.serviceModels().values().stream().filter(e -> models.contains(e.baseModel())).forEach(e -> out.add(e.name()));
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

  /**
   * Routes a request to a slot, or answers it at once. Exactly one answer either way. A slot that
   * stopped taking requests because {@link #apply} replaced it is skipped: the request is routed
   * again over the slots that replaced it.
   */
  public void submit(Job job) {
    for (int attempt = 0; ; attempt++) {
      List<Slot> current = slots;
      Slot chosen = route(job, current);
      if (chosen == null) {
        return;
      }
      RequestCheck.Batching batching = RequestCheck.batching(chosen.spec().version(), job.request());
      if (chosen.offer(job, batching)) {
        return;
      }
      if (current == slots || attempt >= 3) {
        chosen.enqueue(job, batching); // answers NOT_READY: the slot stops and nothing replaced it
        return;
      }
    }
  }

  /** The slot to run the request on, or null when it was answered here. */
  private Slot route(Job job, List<Slot> slots) {
    InferenceRequest request = job.request();
    String name = request.getServiceModel();
    List<Slot> serving = OnDemandMounts.candidates(index, name, slots);
    if (serving.isEmpty()) {
      Optional<String> base = index.serviceModel(name).map(ServiceModelEntry::baseModel);
      // A service model the repository has, on a worker that runs no slot of its base model now: this
      // worker still owns some of the base model's partitions while the plan moves them (retriable).
      job.answer().accept(base.isPresent()
          ? Replies.error(request, null, ErrorCode.NOT_READY, "no slot of base model '" + base.get() + "' runs on this worker now"
              + " (its request partitions are moving to the hosts that run it); retry", null)
          : Replies.error(request, null, ErrorCode.NOT_FOUND, "service model '" + name + "' is not served here", null));
      return null;
    }
    String model = serving.get(0).spec().model();
    String wanted = request.getVersion();
    List<Slot> candidates;
    if (wanted != null) {
      candidates = running(serving, wanted);
      if (candidates.isEmpty()) {
        Optional<ModelEntry> entry = index.model(model);
        boolean exists = entry.isPresent() && entry.get().version(wanted).isPresent();
        job.answer().accept(Replies.error(request, null, exists ? ErrorCode.NOT_READY : ErrorCode.NOT_FOUND, exists
            ? "version '" + wanted + "' of model '" + model + "' has no slot on this worker for '" + name + "'; its slots run versions " + versions(serving)
            : "version '" + wanted + "' of service model '" + name + "' does not exist; versions: "
                + entry.map(e -> e.versions().keySet().toString()).orElse("[]"), null));
        return null;
      }
    } else {
      candidates = running(serving, newest(model, serving));
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
      if (s.serves(name) && (mount.isEmpty() || mount.get().state() == WeightFileMounts.State.NOT_READY)) {
        reason = reason != null ? reason : mount.map(WeightFileMounts.Mount::reason).orElse("not mounted on slot " + s.spec().slot());
        continue;
      }
      // the least loaded; between equals, one that holds the weight file already (no mount)
      if (best == null || s.load() < best.load() || s.load() == best.load() && s.serves(name) && !best.serves(name)) {
        best = s;
      }
    }
    if (best != null && !best.serves(name)) {
      Optional<WeightFileMounts.Mount> mounted = OnDemandMounts.mount(index, name, best);
      if (mounted.isEmpty() || mounted.get().state() == WeightFileMounts.State.NOT_READY) {
        reason = mounted.map(WeightFileMounts.Mount::reason).orElse("slot " + best.spec().slot() + " stopped");
        best = null;
      }
    }
    if (best == null) {
      job.answer().accept(Replies.error(request, version.version(), ErrorCode.NOT_READY,
          "service model '" + name + "' is not ready: " + reason, null));
      return null;
    }
    Optional<String> problem = RequestCheck.problem(version, request);
    if (problem.isPresent()) {
      job.answer().accept(Replies.error(request, version.version(), ErrorCode.BAD_INPUT, problem.get(), best.spec().name()));
      return null;
    }
    return best;
  }

  private static List<String> versions(List<Slot> slots) {
    return slots.stream().map(s -> s.spec().version().version()).distinct().sorted().toList();
  }

  /**
   * The slots that run {@code version}. A loop, not a stream: it runs for every request, and the
   * worker's CPU per request is what the bare-Kafka echo bench compares.
   */
  private static List<Slot> running(List<Slot> slots, String version) {
    List<Slot> out = new ArrayList<>(slots.size());
    for (Slot s : slots) {
      if (s.spec().version().version().equals(version)) {
        out.add(s);
      }
    }
    return out;
  }

  /** The newest of the versions these slots run, in the repository's version order. */
  private String newest(String model, List<Slot> serving) {
    Optional<ModelEntry> entry = index.model(model);
    String newest = null;
    if (entry.isPresent()) {
      for (String v : entry.get().versions().keySet()) {
        for (Slot s : serving) {
          if (s.spec().version().version().equals(v)) {
            newest = v;
            break;
          }
        }
      }
    }
    if (newest != null) {
      return newest;
    }
    for (Slot s : serving) {
      String v = s.spec().version().version();
      newest = newest == null || v.compareTo(newest) > 0 ? v : newest;
    }
    return newest;
  }

  /** Stops every slot (each runs what it has queued first), then closes the sessions. */
  public synchronized void stop(Duration timeout) {
    closed = true;
    List<Slot> slots = this.slots;
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
