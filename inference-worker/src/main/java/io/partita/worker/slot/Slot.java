package io.partita.worker.slot;

import ai.onnxruntime.OrtException;
import io.micrometer.core.instrument.Meter;
import io.partita.avro.BatchRuns;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.MountStatus;
import io.partita.avro.ServingEvidence;
import io.partita.avro.SlotStatus;
import io.partita.avro.Tensor;
import io.partita.common.EpochMicros;
import io.partita.common.health.Fatal;
import io.partita.models.lora.LoraAdapter;
import io.partita.runtime.Pinning;
import io.partita.worker.batch.BatchKey;
import io.partita.worker.batch.BatchPolicy;
import io.partita.worker.batch.Batcher;
import io.partita.worker.batch.Pending;
import io.partita.worker.metrics.WorkerMetrics;
import io.partita.worker.serving.ModelSession;
import io.partita.worker.serving.NotRunnableException;
import io.partita.worker.serving.Replies;
import io.partita.worker.serving.RequestCheck;
import io.partita.worker.serving.ServingWindow;
import io.partita.worker.serving.WeightFileMounts;
import io.partita.worker.serving.WeightFileRef;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A slot: one partition (pinned CPUs, or a GPU) running one model version through one ONNX Runtime
 * session, with its own queue and its own runner thread. Requests wait in the queue until the
 * {@link Batcher} makes them due, then run as one batch with their weight file active, and each
 * gets its own reply. When the session runs the per-row LoRA form, requests of every service model
 * of the base model share a batch and each row runs with its own weight file. A request with more
 * rows than the slot's largest batch is cut into slot-sized parts ({@link SplitJob}) and answered
 * once, with the parts' outputs merged. Each job's {@link Stages} get the start and end of its run.
 *
 * <p>Guarantees: every job handed to {@link #enqueue} is answered exactly once (result,
 * DEADLINE_EXCEEDED without running, NOT_READY/OVERLOADED when its weight file cannot be held,
 * MODEL_ERROR), including the jobs still queued when the slot closes, which run first. A batch that
 * fails is retried request by request, so one bad request does not fail the others. The runner
 * thread opens the session after pinning itself to the partition, so ONNX Runtime's pool threads
 * start on the partition's CPUs, then keeps the first CPU for itself (it runs one share of every
 * batch).
 */
public final class Slot implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Slot.class);

  public enum Health { STARTING, READY, DEGRADED, FAILED, STOPPED }

  private volatile SlotSpec spec;
  /** {@link SlotSpec#name()}, which a retune keeps: built once, not for every reply. */
  private final String instance;
  private final SessionRegistry sessions;
  private final WorkerMetrics metrics;
  private final LongSupplier clock;
  private final Runnable onChange;
  private final Batcher<Job> batcher;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition wake = lock.newCondition();
  private final CountDownLatch started = new CountDownLatch(1);
  private final AtomicLong answered = new AtomicLong();
  private final AtomicLong solo = new AtomicLong();
  private final Thread runner;
  private final Map<String, SlotSpec.Instance> instances = new ConcurrentSkipListMap<>();
  private volatile List<Meter> gauges = List.of();
  private boolean stopping; // guarded by lock
  /**
   * Until when the runner sleeps for want of a due batch, or {@link #NOT_WAITING} while it runs one;
   * guarded by lock. A request that needs no earlier look does not wake it: the runner is woken
   * about once per batch, not once per request.
   */
  private long waitingUntil = NOT_WAITING;
  private static final long NOT_WAITING = Long.MIN_VALUE;
  private volatile int queued;
  private volatile int queuedRows;
  private volatile int inFlight;
  private volatile int inFlightRows;
  private volatile ModelSession session;
  /** The runs of the last {@link ServingWindow#DEFAULT_WINDOW_MS}, from when the session opened; null before. */
  private volatile ServingWindow served;
  private volatile boolean failed;
  private volatile boolean stopped;
  private volatile boolean pinned;
  private volatile String message;

  Slot(SlotSpec spec, BatchPolicy policy, SessionRegistry sessions, WorkerMetrics metrics, LongSupplier clock, Runnable onChange) {
    this.spec = spec;
    this.instance = spec.name();
    this.sessions = sessions;
    this.metrics = metrics;
    this.clock = clock;
    this.onChange = onChange;
    this.batcher = new Batcher<>(policy);
    spec.instances().forEach(i -> instances.put(i.serviceModel(), i));
    this.runner = new Thread(this::runnerMain, "partita-slot-" + spec.slot());
    this.runner.setDaemon(true);
  }

  /** Registers this slot's gauges (once it serves; a slot it replaces must have removed its own first). */
  void registerGauges() {
    gauges = metrics.slot(spec.slot(), () -> queued, () -> inFlight, () -> {
      ModelSession s = session;
      return s == null ? 0 : s.mounts().evictions();
    });
  }

  public SlotSpec spec() {
    return spec;
  }

  void start() {
    runner.start();
  }

  /** Waits until the session is open (or failed to open). */
  boolean awaitStarted(Duration timeout) throws InterruptedException {
    return started.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Whether the slot's runner thread is alive (it ends only when the slot stops). */
  public boolean runnerAlive() {
    return runner.isAlive();
  }

  public Health health() {
    if (stopped) {
      return Health.STOPPED;
    }
    if (failed) {
      return Health.FAILED;
    }
    ModelSession s = session;
    if (s == null) {
      return Health.STARTING;
    }
    for (SlotSpec.Instance i : instances.values()) {
      if (mountState(s, i.serviceModel()) == WeightFileMounts.State.NOT_READY) {
        return Health.DEGRADED;
      }
    }
    return Health.READY;
  }

  /** Whether this slot serves the service model (it was assigned or mounted here, and not unmounted). */
  public boolean serves(String serviceModel) {
    return instances.containsKey(serviceModel);
  }

  /** The service models this slot serves, by name. */
  public List<SlotSpec.Instance> instances() {
    return List.copyOf(instances.values());
  }

  /**
   * The loading interface: adds a model instance to this running slot and mounts its weight file
   * (checked as {@link WeightFileMounts#mount} says), without touching the base session.
   *
   * @return the mount: READY, or NOT_READY with the reason (the slot keeps serving the others)
   * @throws IllegalStateException when the slot's session is not open
   */
  public WeightFileMounts.Mount mount(String serviceModel, String instanceId, WeightFileRef file) {
    ModelSession s = session;
    if (s == null || failed || stopped) {
      throw new IllegalStateException("slot " + spec.name() + " is " + health().name().toLowerCase() + "; nothing can be mounted on it");
    }
    instances.put(serviceModel, new SlotSpec.Instance(serviceModel, instanceId, file));
    return s.mounts().mount(serviceModel, instanceId, file);
  }

  /**
   * Takes a model instance off this slot: its requests are no longer routed here. Whether its weight
   * file is unmounted is for the caller to say, since slots sharing a session share its mounts.
   */
  boolean drop(String serviceModel) {
    boolean had = instances.remove(serviceModel) != null;
    onChange.run();
    return had;
  }

  /** Whether requests can be queued here: the session is open and the slot not closing. */
  public boolean running() {
    return session != null && !failed && !stopped;
  }

  /** The mount of a service model on this slot, if the slot serves it and its session is open. */
  public Optional<WeightFileMounts.Mount> mount(String serviceModel) {
    ModelSession s = session;
    return s == null || !serves(serviceModel) ? Optional.empty() : s.mounts().mount(serviceModel);
  }

  public String message() {
    return message;
  }

  /** Rows queued or running: what the router balances on. */
  public int load() {
    return queuedRows + inFlightRows;
  }

  public int queued() {
    return queued;
  }

  public ModelSession session() {
    return session;
  }

  /**
   * Queues a request that was checked against this slot's version; it will be answered exactly once.
   * A slot that is failed or stopping does not take it (false): the caller routes it again, since the
   * slot may be draining after a plan change while its replacement runs.
   */
  public boolean offer(Job job, RequestCheck.Batching batching) {
    int limit = spec.maxRows();
    if (batching.layout() != null && batching.rows() > limit) {
      return offerParts(job, batching, limit);
    }
    String layout = batching.layout() != null ? batching.layout() : "alone#" + solo.incrementAndGet();
    ModelSession s = session;
    // A per-row session runs rows of different weight files in one call: one batch for the base model.
    BatchKey key = s != null && s.perRow()
        ? BatchKey.acrossWeightFiles(spec.model(), spec.version().version(), layout)
        : BatchKey.oneWeightFile(job.request().getServiceModel(), spec.version().version(), layout);
    lock.lock();
    try {
      if (!stopping && !stopped && !failed) {
        long lookAt = batcher.add(new Pending<>(job, key, batching.rows(), job.arrivedAtMs(), job.deadlineMs()));
        queued = batcher.size();
        queuedRows = batcher.rows();
        wakeBefore(lookAt);
        return true;
      }
    } finally {
      lock.unlock();
    }
    return false;
  }

  /**
   * Queues a request larger than the slot's largest batch as slot-sized parts ({@link SplitJob}),
   * all or none, in row order, so they run in order and may each share a batch with other requests.
   */
  private boolean offerParts(Job job, RequestCheck.Batching batching, int limit) {
    ModelSession s = session;
    BatchKey key = s != null && s.perRow()
        ? BatchKey.acrossWeightFiles(spec.model(), spec.version().version(), batching.layout())
        : BatchKey.oneWeightFile(job.request().getServiceModel(), spec.version().version(), batching.layout());
    int[] sizes = SplitJob.sizes(batching.rows(), limit);
    List<Job> parts = SplitJob.parts(job, batching.rows(), limit);
    lock.lock();
    try {
      if (stopping || stopped || failed) {
        return false;
      }
      long lookAt = Long.MAX_VALUE;
      for (int i = 0; i < parts.size(); i++) {
        lookAt = Math.min(lookAt, batcher.add(new Pending<>(parts.get(i), key, sizes[i], job.arrivedAtMs(), job.deadlineMs())));
      }
      queued = batcher.size();
      queuedRows = batcher.rows();
      wakeBefore(lookAt);
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Wakes the runner if it sleeps past {@code lookAtMs}, when the batcher must be asked again; caller holds lock. */
  private void wakeBefore(long lookAtMs) {
    if (lookAtMs < waitingUntil) {
      wake.signal();
    }
  }

  /** Queues a request, or answers NOT_READY when the slot is failed or stopping; exactly one answer either way. */
  public void enqueue(Job job, RequestCheck.Batching batching) {
    if (!offer(job, batching)) {
      answer(job, error(job.request(), ErrorCode.NOT_READY, "slot " + spec.slot() + " is stopping"));
    }
  }

  /**
   * Takes a spec that differs from this slot's only in the largest batch: batches formed from now on
   * follow it, without reopening the session (the planner's profile batch changes as timings arrive).
   *
   * @return false when the specs differ in anything else (the slot must be replaced)
   */
  boolean retune(SlotSpec next) {
    SlotSpec current = spec;
    if (!next.equals(new SlotSpec(current.host(), current.slot(), current.version(), current.pool(), current.session(),
        next.maxRows(), current.budgetBytes(), current.instances()))) {
      return false;
    }
    lock.lock();
    try {
      batcher.policy(new BatchPolicy(next.maxRows(), batcher.policy().maxDelayMs()));
      spec = next;
      wake.signalAll();
    } finally {
      lock.unlock();
    }
    onChange.run();
    return true;
  }

  /** Whether the slot is stopping (draining what it holds) or stopped. */
  boolean closing() {
    lock.lock();
    try {
      return stopping || stopped;
    } finally {
      lock.unlock();
    }
  }

  /** Removes this slot's gauges (it is retired, or it never served). */
  void removeGauges() {
    metrics.removeSlot(gauges);
    gauges = List.of();
  }

  private void runnerMain() {
    MDC.put("slot", spec.slot());
    try {
      open();
    } catch (Throwable e) {
      Fatal.haltIfFatal("opening slot " + spec.name(), e);
      failed = true;
      message = "the session did not open: " + e.getMessage();
      log.error("Slot {} failed to start", spec.name(), e);
    } finally {
      started.countDown();
      onChange.run();
    }
    if (!failed) {
      loop();
    }
    // Anything queued after a failure is still answered.
    List<Pending<Job>> left;
    lock.lock();
    try {
      left = batcher.drainAll();
      queued = 0;
      queuedRows = 0;
    } finally {
      lock.unlock();
    }
    for (Pending<Job> p : left) {
      answer(p.item(), error(p.item().request(), ErrorCode.NOT_READY, "slot " + spec.slot() + " is not running: " + message));
    }
  }

  private void open() throws OrtException {
    List<Integer> cpus = spec.session().cpus();
    // Pinned as the profiler pins the partition it measures (the runtime module's one protocol).
    Pinning.Pinned<ModelSession> opened = Pinning.openPinned(spec.session(), () -> {
      ModelSession obtained = sessions.obtain(spec);
      for (SlotSpec.Instance i : instances.values()) {
        WeightFileMounts.Mount m = obtained.mounts().mount(i.serviceModel(), i.instanceId(), i.file());
        if (m.state() == WeightFileMounts.State.NOT_READY) {
          log.warn("Service model {} is not ready on slot {}: {}", i.serviceModel(), spec.name(), m.reason());
        }
      }
      return obtained;
    });
    ModelSession s = opened.value();
    boolean pinnedAll = opened.pinned();
    pinned = pinnedAll;
    if (!cpus.isEmpty() && !pinnedAll) {
      log.warn("Slot {} could not pin its threads to CPUs {} (taskset missing or refused); running unpinned", spec.name(), cpus);
    }
    message = s.providerFallback();
    served = new ServingWindow(ServingWindow.DEFAULT_WINDOW_MS, clock.getAsLong());
    session = s;
    log.info("Slot {} runs {}/{} on {} ({}), serving {}", spec.name(), spec.model(), spec.version().version(), s.provider(),
        cpus.isEmpty() ? (s.spec().cuda() ? "GPU " + s.spec().gpu() : "unpinned, threads " + s.spec().threads()) : "CPUs " + cpus,
        List.copyOf(instances.keySet()));
  }

  private void loop() {
    while (true) {
      Batcher.Decision<Job> d;
      lock.lock();
      try {
        while (true) {
          long now = clock.getAsLong();
          d = batcher.next(now, stopping);
          if (!d.idle()) {
            break;
          }
          if (stopping) {
            return;
          }
          waitingUntil = d.wakeAtMs();
          try {
            if (d.wakeAtMs() == Long.MAX_VALUE) {
              wake.await();
            } else {
              wake.await(Math.max(1, d.wakeAtMs() - now), TimeUnit.MILLISECONDS);
            }
          } catch (InterruptedException e) {
            stopping = true; // finish what is queued, then leave
          } finally {
            waitingUntil = NOT_WAITING;
          }
        }
        queued = batcher.size();
        queuedRows = batcher.rows();
        inFlight = d.batch().size();
        inFlightRows = d.batch().stream().mapToInt(Pending::rows).sum();
      } finally {
        lock.unlock();
      }
      for (Pending<Job> p : d.expired()) {
        answer(p.item(), error(p.item().request(), ErrorCode.DEADLINE_EXCEEDED, "the deadline passed before the request could run"));
      }
      if (!d.batch().isEmpty()) {
        try {
          run(d.batch());
        } catch (Throwable e) {
          // run() answers every job itself; this only keeps the runner alive after a bug
          Fatal.haltIfFatal("slot " + spec.name(), e);
          log.error("Slot {}: a batch failed unexpectedly", spec.name(), e);
        }
      }
      inFlight = 0;
      inFlightRows = 0;
    }
  }

  private void run(List<Pending<Job>> batch) {
    long startNanos = System.nanoTime();
    long startMs = clock.getAsLong();
    for (Pending<Job> p : batch) {
      metrics.queueWait(p.item().request().getServiceModel(), spec.slot(), startNanos - p.item().arrivedAtNanos());
    }
    runHeld(batch, startMs);
  }

  /**
   * Holds the weight file of every service model in the batch and runs it. A request whose weight
   * file is not ready is answered with the reason; one whose file does not fit the budget while the
   * batch holds others runs after them, when they are released (alone it gets OVERLOADED).
   */
  private void runHeld(List<Pending<Job>> batch, long startMs) {
    Map<String, WeightFileMounts.Lease> leases = new LinkedHashMap<>();
    Map<String, NotRunnableException> refused = new HashMap<>();
    Set<String> deferred = new HashSet<>();
    List<Pending<Job>> runnable = new ArrayList<>(batch.size());
    List<Pending<Job>> later = new ArrayList<>();
    try {
      for (Pending<Job> p : batch) {
        String serviceModel = p.item().request().getServiceModel();
        if (deferred.contains(serviceModel)) {
          later.add(p);
          continue;
        }
        if (!leases.containsKey(serviceModel) && !refused.containsKey(serviceModel)) {
          try {
            leases.put(serviceModel, session.mounts().acquire(serviceModel));
          } catch (NotRunnableException e) {
            if (e.code() == ErrorCode.OVERLOADED && !leases.isEmpty()) {
              deferred.add(serviceModel);
              later.add(p);
              continue;
            }
            refused.put(serviceModel, e);
          }
        }
        NotRunnableException no = refused.get(serviceModel);
        if (no != null) {
          answer(p.item(), error(p.item().request(), no.code(), no.getMessage()));
        } else {
          runnable.add(p);
        }
      }
      if (!runnable.isEmpty()) {
        execute(runnable, leases, startMs);
      }
    } finally {
      leases.values().forEach(WeightFileMounts.Lease::close);
    }
    if (!later.isEmpty()) {
      runHeld(later, startMs);
    }
  }

  private void execute(List<Pending<Job>> batch, Map<String, WeightFileMounts.Lease> leases, long startMs) {
    String tag = leases.size() == 1 ? leases.keySet().iterator().next() : spec.model();
    metrics.batch(tag, spec.slot(), batch.size());
    List<List<Tensor>> outputs;
    long t0 = System.nanoTime();
    try {
      outputs = invoke(batch, leases);
    } catch (OrtException | RuntimeException e) {
      if (batch.size() > 1) {
        log.debug("Slot {}: a batch of {} failed ({}); running its requests one by one", spec.name(), batch.size(), e.getMessage());
        for (Pending<Job> p : batch) {
          runAlone(p, leases, startMs);
        }
      } else {
        answer(batch.get(0).item(), error(batch.get(0).item().request(), ErrorCode.MODEL_ERROR, "the model failed: " + e.getMessage()));
      }
      return;
    }
    long took = System.nanoTime() - t0;
    long endMicros = EpochMicros.now();
    metrics.inference(tag, spec.slot(), took);
    // ONNX Runtime's time alone, as the profiler times a run: the planner compares it with the profile
    int rows = batch.stream().mapToInt(Pending::rows).sum();
    served.record(clock.getAsLong(), rows, session.lastRunNanos());
    metrics.ran(rows, session.lastRunCpuNanos());
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).item().stages().ran(endMicros - took / 1000, endMicros);
      answer(batch.get(i).item(), result(batch.get(i).item(), outputs.get(i), startMs, took));
    }
  }

  /**
   * One run: on a per-row session every request brings its own adapter; otherwise the batch holds one
   * service model and its adapter is activated for the run.
   */
  private List<List<Tensor>> invoke(List<Pending<Job>> batch, Map<String, WeightFileMounts.Lease> leases) throws OrtException {
    List<InferenceRequest> requests = new ArrayList<>(batch.size());
    int[] rows = new int[batch.size()];
    for (int i = 0; i < batch.size(); i++) {
      requests.add(batch.get(i).item().request());
      rows[i] = batch.get(i).rows();
    }
    if (session.perRow()) {
      List<LoraAdapter> adapters = new ArrayList<>(requests.size());
      for (InferenceRequest r : requests) {
        adapters.add(leases.get(r.getServiceModel()).parameters());
      }
      return session.runPerRow(requests, rows, adapters);
    }
    String serviceModel = requests.get(0).getServiceModel();
    for (InferenceRequest r : requests) {
      if (!r.getServiceModel().equals(serviceModel)) {
        throw new IllegalStateException("a batch of " + spec.name() + " mixes service models but its session runs one adapter per run");
      }
    }
    return session.run(requests, rows, leases.get(serviceModel).adapter());
  }

  private void runAlone(Pending<Job> pending, Map<String, WeightFileMounts.Lease> leases, long startMs) {
    Job job = pending.item();
    long t0 = System.nanoTime();
    try {
      List<List<Tensor>> out = invoke(List.of(pending), leases);
      long took = System.nanoTime() - t0;
      long endMicros = EpochMicros.now();
      job.stages().ran(endMicros - took / 1000, endMicros);
      metrics.inference(job.request().getServiceModel(), spec.slot(), took);
      served.record(clock.getAsLong(), pending.rows(), session.lastRunNanos());
      metrics.ran(pending.rows(), session.lastRunCpuNanos());
      answer(job, result(job, out.get(0), startMs, took));
    } catch (OrtException | RuntimeException e) {
      answer(job, error(job.request(), ErrorCode.MODEL_ERROR, "the model failed: " + e.getMessage()));
    }
  }

  private InferenceReply result(Job job, List<Tensor> outputs, long startMs, long tookNanos) {
    return InferenceReply.newBuilder()
        .setId(job.request().getId())
        .setServiceModel(job.request().getServiceModel())
        .setModelVersion(spec.version().version())
        .setOutputs(outputs)
        .setInstance(instance)
        .setQueueMicros(Math.max(0, startMs - job.recordTimestampMs()) * 1000)
        .setInferenceMicros(tookNanos / 1000)
        .build();
  }

  private InferenceReply error(InferenceRequest request, ErrorCode code, String text) {
    return Replies.error(request, spec.version().version(), code, text, instance);
  }

  private void answer(Job job, InferenceReply reply) {
    answered.incrementAndGet();
    try {
      job.answer().accept(reply);
    } catch (RuntimeException e) {
      log.error("Slot {}: answering request {} failed", spec.name(), job.request().getId(), e);
    }
  }

  /** The slot's status record at {@code nowMs}. */
  public SlotStatus status(long nowMs) {
    ModelSession s = session;
    List<MountStatus> mounts = new ArrayList<>();
    for (SlotSpec.Instance i : instances.values()) {
      MountStatus.Builder m = MountStatus.newBuilder()
          .setServiceModel(i.serviceModel())
          .setInstanceId(i.instanceId())
          .setWeightFile(i.file() == null ? null : i.file().path())
          .setSha256(i.file() == null ? null : i.file().sha256());
      Optional<WeightFileMounts.Mount> mount = s == null ? Optional.empty() : s.mounts().mount(i.serviceModel());
      if (mount.isPresent()) {
        m.setState(mount.get().state().name()).setReason(mount.get().reason())
            .setBytes(mount.get().bytes()).setLastUsed(mount.get().lastUsedMs());
      } else {
        m.setState(WeightFileMounts.State.NOT_READY.name()).setReason(failed ? message : "the slot is " + health().name().toLowerCase());
      }
      mounts.add(m.build());
    }
    Health health = health();
    String text = message;
    if (health == Health.DEGRADED) {
      long notReady = mounts.stream().filter(m -> m.getState().equals("NOT_READY")).count();
      text = notReady + " of " + mounts.size() + " service models not ready" + (text == null ? "" : "; " + text);
    }
    return SlotStatus.newBuilder()
        .setHost(spec.host())
        .setSlot(spec.slot())
        .setModel(spec.model())
        .setVersion(spec.version().version())
        .setPool(spec.pool())
        .setProvider(s == null ? (spec.session().cuda() ? "CUDA" : "CPU") : s.provider())
        .setProviderFallback(s == null ? null : s.providerFallback())
        .setCpus(spec.session().cpus())
        .setGpu(spec.session().gpu())
        .setThreads(spec.session().threads())
        .setPinned(pinned)
        .setSession(s == null ? "" : s.id())
        .setHealth(health.name())
        .setMessage(text)
        .setInFlight(inFlight)
        .setQueueDepth(queued)
        .setMaxBatch(spec.maxRows())
        .setMemoryBudgetBytes(s == null ? spec.budgetBytes() : s.mounts().budgetBytes())
        .setMountedBytes(s == null ? 0 : s.mounts().mountedBytes())
        .setServiceModels(mounts)
        .setAnswered(answered.get())
        .setTimestamp(nowMs)
        .setServing(evidence(nowMs))
        .build();
  }

  /**
   * Forgets the runs counted so far in the slot's serving evidence, its window beginning again now
   * ({@link ServingWindow#reset}). Call it after runs that are not serving, such as a synthetic
   * warm-up through {@code execute} before the slot takes traffic: their times are not what the
   * slot serves at, and the planner would record them as a measurement of the running grouping.
   * Does nothing before the session opened (there is no window yet).
   */
  public void resetServingWindow() {
    ServingWindow window = served;
    if (window != null) {
      window.reset(clock.getAsLong());
    }
  }

  /** The serving evidence of the status at {@code nowMs}: the runs of the last window; null before the session opened. */
  private ServingEvidence evidence(long nowMs) {
    ServingWindow window = served;
    if (window == null) {
      return null;
    }
    ServingWindow.Snapshot s = window.snapshot(nowMs);
    List<BatchRuns> sizes = new ArrayList<>();
    s.bySize().forEach((rows, runs) -> sizes.add(new BatchRuns(rows, runs.runs(), runs.busyNanos())));
    return new ServingEvidence(s.windowMs(), s.items(), s.batches(), s.busyNanos(), sizes, null); // the worker adds the overhead
  }

  private static WeightFileMounts.State mountState(ModelSession s, String serviceModel) {
    return s.mounts().mount(serviceModel).map(WeightFileMounts.Mount::state).orElse(WeightFileMounts.State.NOT_READY);
  }

  /** Stops taking requests; the runner runs everything still queued, then ends. */
  void requestStop() {
    lock.lock();
    try {
      stopping = true;
      wake.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits (until {@code deadlineNanos} on the monotonic clock) for the runner to finish what was
   * queued. The session is closed by the registry, once every slot using it stopped.
   */
  void awaitStopped(long deadlineNanos) {
    try {
      runner.join(Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (runner.isAlive()) {
      log.warn("Slot {} did not finish its queue in time", spec.name());
    }
    stopped = true;
    onChange.run();
  }

  @Override
  public void close() {
    requestStop();
    awaitStopped(System.nanoTime() + Duration.ofSeconds(10).toNanos());
  }
}
