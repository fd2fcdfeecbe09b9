package io.partita.profiler.measure;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import io.partita.runtime.Pinning;
import io.partita.runtime.SessionOpener;
import io.partita.runtime.SlotConfig;
import io.partita.profiler.env.CommandRunner;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.ProviderProbe.Provider;
import io.partita.profiler.stats.LatencySummary;
import io.partita.profiler.stats.Sampler;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * Measures a model version with real ONNX Runtime sessions on this host: each partition size, batch
 * size and execution provider asked for, one point after another, or a whole grouping at once.
 *
 * <p>A CPU partition of {@code k} cores is a pinned {@link SlotConfig} of those cores, opened through
 * the runtime module exactly as the worker opens the slot that will serve it ({@link SessionOpener},
 * {@link Pinning#openPinned}): {@code k} intra-op threads, one inter-op thread, sequential
 * execution, every thread on a core of its own, idle threads spinning unless the settings turn
 * spinning off. Partitions take the host's usable CPUs in order. A GPU partition of {@code k}
 * GPUs is {@code k} single-device CUDA sessions run concurrently (ONNX Runtime runs a session on one
 * device), and its throughput is their sum.
 *
 * <p>Every session runs on a fresh thread that ends with the point, so pinning never leaks into the
 * caller. Points run one at a time; they must not share the machine with other load.
 *
 * <p>Memory: one instance's resident memory is measured in a child JVM ({@link InstanceMemory}),
 * once per partition measured, after the timing; a grouping's memory is the sum over its partitions.
 *
 * <p>Failures (a provider that does not load, a batch the model refuses, an input it cannot feed, a
 * partition larger than the usable cores) become failed results with the error; nothing throws
 * for a configuration that does not work.
 */
public final class Measurer {

  /** The batch sizes measured when none are given, cut to the model's fixed batch when it has one. */
  public static final List<Integer> DEFAULT_BATCHES = List.of(1, 2, 4, 8, 16, 32);

  /**
   * @param sampler warm-up, time budget and stability rule per point
   * @param dims sizes of named dynamic dimensions other than the batch
   * @param commands runs taskset for pinning
   * @param measureMemory whether to measure each instance's memory ({@link InstanceMemory}, a child
   *     JVM per partition); when false memoryBytes is -1
   * @param spinning whether idle intra-op threads of pinned partitions spin (ONNX Runtime's default);
   *     off suits hosts whose cores are shared with other work
   */
  public record Settings(Sampler.Settings sampler, Map<String, Long> dims, CommandRunner commands, boolean measureMemory,
                         boolean spinning) {
    public Settings {
      dims = Map.copyOf(dims);
    }

    public static Settings ofBudgetMillis(long budgetMillis) {
      return new Settings(Sampler.Settings.ofBudgetMillis(budgetMillis), Map.of(), CommandRunner.processes(), true, true);
    }
  }

  /**
   * What to measure; empty lists mean the defaults ({@link #defaultSizes}, {@link #defaultBatches},
   * and every provider the host loaded).
   */
  public record Request(ModelRef model, List<Integer> sizes, List<Integer> batches, List<Provider> providers) {
    public Request {
      sizes = List.copyOf(sizes);
      batches = List.copyOf(batches);
      providers = List.copyOf(providers);
    }
  }

  private final OrtEnvironment env;
  private final SessionOpener opener;
  private final ProbedHost host;
  private final Settings settings;
  private final LongSupplier clock = System::nanoTime;

  public Measurer(OrtEnvironment env, ProbedHost host, Settings settings) {
    this.env = env;
    this.opener = new SessionOpener(env, SessionOpener.CudaFallback.NONE);
    this.host = host;
    this.settings = settings;
  }

  public ProbedHost host() {
    return host;
  }

  Sampler.Settings samplerSettings() {
    return settings.sampler();
  }

  /**
   * Partition sizes measured by default: for CPU 1, 2, 4, ... below the usable core count, and the
   * usable count itself; for CUDA each GPU count 1..n.
   */
  public List<Integer> defaultSizes(Provider provider) {
    List<Integer> sizes = new ArrayList<>();
    if (provider == Provider.CUDA) {
      for (int k = 1; k <= gpuCount(); k++) {
        sizes.add(k);
      }
      return sizes;
    }
    for (int k = 1; k < host.usableCores(); k *= 2) {
      sizes.add(k);
    }
    sizes.add(host.usableCores());
    return sizes;
  }

  /**
   * Batch sizes measured by default: {@link #DEFAULT_BATCHES}, or just the model's fixed batch when
   * an input's leading dimension is fixed. If the model cannot be opened the defaults are returned
   * and every point will fail with the reason.
   */
  public List<Integer> defaultBatches(ModelRef model) {
    try (OrtSession session = open(model, SlotConfig.unpinned(1))) {
      long fixed = Inputs.fixedBatch(session.getInputInfo());
      return fixed > 0 ? List.of((int) fixed) : DEFAULT_BATCHES;
    } catch (OrtException | RuntimeException e) {
      return DEFAULT_BATCHES;
    }
  }

  /** Measures every (provider, size, batch) of the request in that order. */
  public List<TimingResult> measure(Request request, ProgressListener progress) {
    List<Provider> providers = request.providers().isEmpty()
        ? host.executionProviders().stream().map(Provider::valueOf).toList()
        : request.providers();
    List<Integer> batches = request.batches().isEmpty() ? defaultBatches(request.model()) : request.batches();
    List<Point> points = new ArrayList<>();
    for (Provider p : providers) {
      for (int size : request.sizes().isEmpty() ? defaultSizes(p) : request.sizes()) {
        for (int batch : batches) {
          points.add(new Point(p, size, batch));
        }
      }
    }
    List<TimingResult> results = new ArrayList<>();
    for (int i = 0; i < points.size(); i++) {
      Point point = points.get(i);
      String label = point.provider() + " size=" + point.size() + " batch=" + point.batch();
      progress.starting(i, points.size(), label);
      TimingResult r = measurePoint(request.model(), point.provider(), point.size(), point.batch());
      results.add(r);
      progress.finished(i, points.size(), label, r.ok());
    }
    return results;
  }

  private record Point(Provider provider, int size, int batch) {}

  /** One point: a partition of {@code size} resources running {@code batch}-sized runs. */
  public TimingResult measurePoint(ModelRef model, Provider provider, int size, int batch) {
    TimingResult.Point key = key(model, provider, size, batch);
    List<List<SlotConfig>> layout;
    try {
      layout = layout(provider, List.of(size));
    } catch (IllegalArgumentException e) {
      return TimingResult.failed(key, e.getMessage());
    }
    SlotsOutcome run = runSlots(model, layout.get(0), batch, settings.sampler());
    if (run.error() != null) {
      return TimingResult.failed(key, run.error());
    }
    return partitionResult(key, run.slots(), batch, memoryOf(model, layout.get(0), batch));
  }

  /** Memory of one partition: the sum over its sessions, -1 if any could not be measured or memory is off. */
  private long memoryOf(ModelRef model, List<SlotConfig> partition, int batch) {
    if (!settings.measureMemory()) {
      return -1;
    }
    long total = 0;
    for (SlotConfig slot : partition) {
      long m = InstanceMemory.measure(model, slot, batch, settings.dims());
      if (m < 0) {
        return -1;
      }
      total += m;
    }
    return total;
  }

  /**
   * A whole grouping at once, e.g. [1, 1] on 2 cores: every partition is its own session on its own
   * cores, all run concurrently for the whole time budget (no early stop, so their windows
   * overlap), and the aggregate throughput is the sum of theirs.
   */
  public GroupingResult measureGrouping(ModelRef model, Provider provider, List<Integer> sizes, int batch) {
    String pool = poolOf(provider);
    GroupingResult.Grouping what = new GroupingResult.Grouping(model.model(), model.version(), host.hostId(), pool, sizes,
        batch, provider.name());
    List<List<SlotConfig>> layout;
    try {
      if (sizes.isEmpty()) {
        throw new IllegalArgumentException("a grouping needs at least one partition");
      }
      layout = layout(provider, sizes);
    } catch (IllegalArgumentException e) {
      return GroupingResult.failed(what, e.getMessage());
    }
    List<SlotConfig> all = layout.stream().flatMap(List::stream).toList();
    SlotsOutcome run = runSlots(model, all, batch, settings.sampler().withStopWhenStable(false));
    if (run.error() != null) {
      return GroupingResult.failed(what, run.error());
    }
    List<TimingResult> partitions = new ArrayList<>();
    int next = 0;
    double aggregate = 0;
    long memory = 0;
    for (int i = 0; i < layout.size(); i++) {
      int n = layout.get(i).size();
      long partitionMemory = memoryOf(model, layout.get(i), batch);
      TimingResult r = partitionResult(key(model, provider, sizes.get(i), batch), run.slots().subList(next, next + n),
          batch, partitionMemory);
      partitions.add(r);
      aggregate += r.throughput();
      memory = memory < 0 || partitionMemory < 0 ? -1 : memory + partitionMemory;
      next += n;
    }
    return new GroupingResult(what, partitions, aggregate, memory, true, null);
  }

  private TimingResult partitionResult(TimingResult.Point key, List<SlotOutcome> slots, int batch, long memory) {
    long[] merged = slots.stream().flatMapToLong(s -> Arrays.stream(s.outcome().samplesNanos())).toArray();
    double throughput = slots.stream().mapToDouble(s -> s.outcome().throughput(batch)).sum();
    boolean stable = slots.stream().allMatch(s -> s.outcome().stable());
    boolean pinned = slots.stream().allMatch(SlotOutcome::pinned);
    return TimingResult.measured(key, LatencySummary.of(merged), throughput, memory, stable, pinned);
  }

  /** The slots of each partition, taking usable CPUs (or GPU devices) in order. */
  public List<List<SlotConfig>> layout(Provider provider, List<Integer> sizes) {
    int total = sizes.stream().mapToInt(Integer::intValue).sum();
    for (int s : sizes) {
      if (s < 1) {
        throw new IllegalArgumentException("partition sizes must be at least 1, got " + sizes);
      }
    }
    List<List<SlotConfig>> layout = new ArrayList<>();
    int cursor = 0;
    if (provider == Provider.CUDA) {
      if (total > gpuCount()) {
        throw new IllegalArgumentException("partitions " + sizes + " need " + total + " GPUs; " + gpuCount() + " present");
      }
      for (int s : sizes) {
        List<SlotConfig> slots = new ArrayList<>();
        for (int d = cursor; d < cursor + s; d++) {
          slots.add(SlotConfig.cuda(d));
        }
        layout.add(slots);
        cursor += s;
      }
      return layout;
    }
    if (total > host.usableCores()) {
      throw new IllegalArgumentException("partitions " + sizes + " need " + total + " cores; "
          + host.usableCores() + " usable (CPUs " + host.usableCpuIds() + ")");
    }
    for (int s : sizes) {
      layout.add(List.of(cpuSlot(host.usableCpuIds().subList(cursor, cursor + s))));
      cursor += s;
    }
    return layout;
  }

  /** A pinned CPU partition on these CPUs, spinning as the settings say. */
  public SlotConfig cpuSlot(List<Integer> cpus) {
    return SlotConfig.pinned(cpus, settings.spinning());
  }

  private int gpuCount() {
    return host.gpus().isEmpty() && host.executionProviders().contains("CUDA") ? 1 : host.gpus().size();
  }

  /** What a set of concurrently run slots gave: per-slot outcomes, or the first error. */
  record SlotsOutcome(List<SlotOutcome> slots, String error) {}

  record SlotOutcome(Sampler.Outcome outcome, boolean pinned, String error) {}

  /**
   * Runs the slots concurrently, each on its own new thread: open and warm up, wait for all, then
   * sample together. If any slot fails the others stop before sampling.
   */
  SlotsOutcome runSlots(ModelRef model, List<SlotConfig> slots, int batch, Sampler.Settings sampler) {
    int n = slots.size();
    CountDownLatch ready = new CountDownLatch(n);
    CountDownLatch go = new CountDownLatch(1);
    AtomicBoolean abort = new AtomicBoolean();
    SlotOutcome[] outcomes = new SlotOutcome[n];
    Thread[] threads = new Thread[n];
    for (int i = 0; i < n; i++) {
      int index = i;
      threads[i] = new Thread(() -> outcomes[index] = runSlot(model, slots.get(index), batch, sampler, ready, go, abort),
          "partita-profile-slot-" + i);
      threads[i].setDaemon(true);
      threads[i].start();
    }
    try {
      ready.await();
      go.countDown();
      for (Thread t : threads) {
        t.join();
      }
    } catch (InterruptedException e) {
      abort.set(true);
      go.countDown();
      Thread.currentThread().interrupt();
      return new SlotsOutcome(List.of(), "interrupted");
    }
    for (SlotOutcome o : outcomes) {
      if (o.error() != null) {
        return new SlotsOutcome(List.of(), o.error());
      }
    }
    return new SlotsOutcome(List.of(outcomes), null);
  }

  private SlotOutcome runSlot(ModelRef model, SlotConfig spec, int batch, Sampler.Settings sampler,
                              CountDownLatch ready, CountDownLatch go, AtomicBoolean abort) {
    boolean signalled = false;
    try {
      Pinning.Command taskset = (argv, timeout) -> settings.commands().run(argv, timeout).isPresent();
      Pinning.Pinned<OrtSession> opened = Pinning.openPinned(spec, taskset, () -> open(model, spec));
      boolean pinned = opened.pinned();
      try (OrtSession session = opened.value()) {
        try (Inputs inputs = Inputs.create(env, session.getInputInfo(), batch, settings.dims())) {
          Sampler.Trial trial = () -> {
            try (OrtSession.Result ignored = session.run(inputs.tensors())) {
              // only the time matters
            }
          };
          for (int i = 0; i < sampler.warmupRuns(); i++) {
            trial.run();
          }
          ready.countDown();
          signalled = true;
          go.await();
          if (abort.get()) {
            return new SlotOutcome(null, false, "another partition failed");
          }
          Sampler.Outcome outcome = Sampler.sample(sampler.withWarmupRuns(0), clock, trial);
          return new SlotOutcome(outcome, pinned, null);
        }
      }
    } catch (Throwable e) {
      abort.set(true);
      return new SlotOutcome(null, false, describe(e));
    } finally {
      if (!signalled) {
        ready.countDown();
      }
    }
  }

  private OrtSession open(ModelRef model, SlotConfig slot) throws OrtException {
    return model.file() != null
        ? opener.open(model.file(), slot).session()
        : opener.open(model.bytes(), slot).session();
  }

  private TimingResult.Point key(ModelRef model, Provider provider, int size, int batch) {
    return new TimingResult.Point(model.model(), model.version(), host.hostId(), poolOf(provider), size, batch,
        provider.name());
  }

  static String poolOf(Provider provider) {
    return provider == Provider.CUDA ? "gpu" : "cpu";
  }

  static String describe(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message.strip());
  }
}
