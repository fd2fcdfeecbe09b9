package io.partita.worker.serving;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoraAdapter;
import ai.onnxruntime.OrtSession;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.models.lora.LoraAdapter;
import io.partita.models.lora.PerRowLora;
import io.partita.models.lora.PerRowLoraFeeds;
import io.partita.models.repo.VersionEntry;
import io.partita.runtime.LoraAdapters;
import io.partita.runtime.SessionOpener;
import io.partita.runtime.SlotConfig;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.LoggerFactory;

/**
 * One ONNX Runtime session of one model version, with the weight files mounted on it. Slots run
 * batches through it; several slots on one-core partitions may share one (ONNX Runtime sessions
 * may be run from several threads at once). It owns the session and the mounts and closes both.
 *
 * <p>A session opened in the per-row LoRA form ({@link #perRow()}) runs through {@link #runPerRow}:
 * each request brings its own adapter, and requests of different weight files share one run. Any
 * other session runs through {@link #run}, one adapter per run.
 */
public final class ModelSession implements AutoCloseable {
  private final String id;
  private final VersionEntry version;
  private final OrtEnvironment env;
  private final SessionOpener.Opened opened;
  private final WeightFileMounts mounts;
  private final PerRowLora.Rewritten perRow;
  // Each thread (slot runner) reuses its stack buffers: its run ends, and its tensors close, before it builds the next.
  private final ThreadLocal<PerRowLoraFeeds.Buffers> buffers = ThreadLocal.withInitial(PerRowLoraFeeds.Buffers::reused);
  // The time of the calling thread's last ONNX Runtime run call, {wall, the thread's CPU}: each slot's runner reads its own.
  private final ThreadLocal<long[]> lastRunNanos = ThreadLocal.withInitial(() -> new long[2]);
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  public ModelSession(String id, VersionEntry version, OrtEnvironment env, SessionOpener.Opened opened, WeightFileMounts mounts) {
    this(id, version, env, opened, mounts, null);
  }

  /**
   * @param perRow the per-row form the session was opened from, or null when it runs the model as it is
   */
  public ModelSession(String id, VersionEntry version, OrtEnvironment env, SessionOpener.Opened opened, WeightFileMounts mounts,
                      PerRowLora.Rewritten perRow) {
    this.perRow = perRow;
    this.id = id;
    this.version = version;
    this.env = env;
    this.opened = opened;
    this.mounts = mounts;
  }

  public String id() {
    return id;
  }

  public VersionEntry version() {
    return version;
  }

  public String provider() {
    return opened.provider().name();
  }

  /** Why the CUDA provider asked for is not used, or null. */
  public String providerFallback() {
    return opened.fallback();
  }

  /** The slot config the session was opened for (CUDA even when it fell back to CPU: see {@link #provider}). */
  public SlotConfig spec() {
    return opened.requested();
  }

  public WeightFileMounts mounts() {
    return mounts;
  }

  /**
   * How long ONNX Runtime's run call took in the calling thread's last {@link #run} or {@link
   * #runPerRow} that completed: the model's work alone, as the profiler times it (the inputs built
   * before and the outputs read after are not in it), so that a slot's serving evidence can be
   * compared with the profile.
   */
  public long lastRunNanos() {
    return lastRunNanos.get()[0];
  }

  /**
   * The calling thread's CPU time in that run call. Under a CPU quota the wall time above also holds
   * the time the thread was throttled; what the run cost the host's budget is this. ONNX Runtime's
   * own pool threads (a session of more than one intra-op thread) are not in it.
   */
  public long lastRunCpuNanos() {
    return lastRunNanos.get()[1];
  }

  /** Whether the session runs the per-row LoRA form: requests of different weight files may share a run. */
  public boolean perRow() {
    return perRow != null;
  }

  /**
   * Runs the requests as one batch, their inputs stacked along the leading dimension, with {@code
   * adapter} active, and returns each request's outputs in order. The requests must share a batch
   * key (same inputs layout and outputs asked for) and have been checked against the signature.
   *
   * @param rows each request's leading dimension
   * @throws OrtException when the model fails
   * @throws IllegalArgumentException when an output does not follow the batch (the caller then runs
   *     the requests one by one)
   */
  public List<List<Tensor>> run(List<InferenceRequest> requests, int[] rows, OrtLoraAdapter adapter) throws OrtException {
    if (perRow != null) {
      throw new IllegalStateException("session " + id + " runs the per-row LoRA form; run it with runPerRow");
    }
    try (OrtSession.RunOptions options = LoraAdapters.runOptions(adapter)) {
      return run(requests, rows, options, Map.of());
    }
  }

  /**
   * Runs the requests as one batch on a per-row session, each request with its own adapter: its
   * rows get its adapter's LoRA matrices, as if it ran alone with that adapter active.
   *
   * @param adapters for each request, its adapter's parameters, or null for the base model
   * @throws OrtException when the model fails
   * @throws IllegalArgumentException when an output does not follow the batch, or an adapter does not
   *     fit the model's LoRA pairs
   */
  public List<List<Tensor>> runPerRow(List<InferenceRequest> requests, int[] rows, List<LoraAdapter> adapters)
      throws OrtException {
    if (perRow == null) {
      throw new IllegalStateException("session " + id + " runs the model as it is; run it with one adapter per run");
    }
    List<LoraAdapter> distinct = new ArrayList<>();
    int[] adapterOf = new int[requests.size()];
    for (int i = 0; i < requests.size(); i++) {
      LoraAdapter a = adapters.get(i);
      int j = 0;
      while (j < distinct.size() && distinct.get(j) != a) {
        j++;
      }
      if (j == distinct.size()) {
        distinct.add(a);
      }
      adapterOf[i] = j;
    }
    Map<String, OnnxTensor> extra = new LinkedHashMap<>();
    try {
      for (Map.Entry<String, String> e : perRow.rowsInputs().entrySet()) {
        int[] lead = new int[requests.size()];
        for (int i = 0; i < requests.size(); i++) {
          List<Long> shape = input(requests.get(i), e.getKey()).getShape();
          lead[i] = shape.isEmpty() ? 1 : Math.toIntExact(shape.get(0));
        }
        long[] index = PerRowLoraFeeds.rowIndex(lead, adapterOf);
        extra.put(e.getValue(), OnnxTensor.createTensor(env, LongBuffer.wrap(index), new long[] {index.length}));
      }
      for (PerRowLoraFeeds.Stacked s : PerRowLoraFeeds.stacks(perRow, distinct, buffers.get())) {
        extra.put(s.name(), OnnxTensor.createTensor(env, s.data(), s.shape()));
      }
      try (OrtSession.RunOptions options = new OrtSession.RunOptions()) {
        return run(requests, rows, options, extra);
      }
    } finally {
      extra.values().forEach(OnnxTensor::close);
    }
  }

  /** Runs the stacked requests with {@code extra} feeds added; closes the feeds it made, not {@code extra}. */
  private List<List<Tensor>> run(List<InferenceRequest> requests, int[] rows, OrtSession.RunOptions options,
                                 Map<String, OnnxTensor> extra) throws OrtException {
    InferenceRequest first = requests.get(0);
    Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
    Set<String> wanted = new TreeSet<>(first.getOutputs());
    try {
      for (Tensor t : first.getInputs()) {
        if (requests.size() == 1) {
          feeds.put(t.getName(), OrtTensors.toOrt(env, t));
        } else {
          List<Tensor> parts = new ArrayList<>(requests.size());
          for (InferenceRequest r : requests) {
            parts.add(input(r, t.getName()));
          }
          feeds.put(t.getName(), OrtTensors.toOrt(env, t.getDatatype(), BatchTensors.stackedShape(parts), BatchTensors.data(parts)));
        }
      }
      Map<String, OnnxTensor> all = feeds;
      if (!extra.isEmpty()) {
        all = new LinkedHashMap<>(feeds);
        all.putAll(extra);
      }
      OrtSession session = opened.session();
      long cpu = THREADS.getCurrentThreadCpuTime();
      long start = System.nanoTime();
      try (OrtSession.Result result = wanted.isEmpty() ? session.run(all, options) : session.run(all, wanted, options)) {
        long[] last = lastRunNanos.get();
        last[0] = System.nanoTime() - start;
        last[1] = Math.max(0, THREADS.getCurrentThreadCpuTime() - cpu);
        List<List<Tensor>> out = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
          out.add(new ArrayList<>());
        }
        for (Map.Entry<String, OnnxValue> e : result) {
          if (!(e.getValue() instanceof OnnxTensor tensor)) {
            continue;
          }
          Tensor whole = OrtTensors.fromOrt(e.getKey(), tensor);
          if (requests.size() == 1) {
            out.get(0).add(whole);
          } else {
            List<Tensor> parts = BatchTensors.split(whole, rows);
            for (int i = 0; i < parts.size(); i++) {
              out.get(i).add(parts.get(i));
            }
          }
        }
        return out;
      }
    } finally {
      feeds.values().forEach(OnnxTensor::close);
    }
  }

  private static Tensor input(InferenceRequest request, String name) {
    for (Tensor t : request.getInputs()) {
      if (t.getName().equals(name)) {
        return t;
      }
    }
    throw new IllegalArgumentException("request " + request.getId() + " has no input '" + name + "'");
  }

  @Override
  public void close() {
    mounts.close();
    try {
      opened.session().close();
    } catch (OrtException e) {
      LoggerFactory.getLogger(ModelSession.class).warn("Closing session {} failed: {}", id, e.getMessage());
    }
  }
}
