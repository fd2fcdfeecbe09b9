package io.partita.worker.serving;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoraAdapter;
import ai.onnxruntime.OrtSession;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.models.repo.VersionEntry;
import io.partita.runtime.LoraAdapters;
import io.partita.runtime.SessionOpener;
import io.partita.runtime.SlotConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One ONNX Runtime session of one model version, with the weight files mounted on it. Slots run
 * batches through it; several slots on one-core partitions may share one (ONNX Runtime sessions
 * may be run from several threads at once). It owns the session and the mounts and closes both.
 */
public final class ModelSession implements AutoCloseable {
  private final String id;
  private final VersionEntry version;
  private final OrtEnvironment env;
  private final SessionOpener.Opened opened;
  private final WeightFileMounts mounts;

  public ModelSession(String id, VersionEntry version, OrtEnvironment env, SessionOpener.Opened opened, WeightFileMounts mounts) {
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
    InferenceRequest first = requests.get(0);
    Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
    Set<String> wanted = new TreeSet<>(first.getOutputs());
    try (OrtSession.RunOptions options = LoraAdapters.runOptions(adapter)) {
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
      OrtSession session = opened.session();
      try (OrtSession.Result result = wanted.isEmpty() ? session.run(feeds, options) : session.run(feeds, wanted, options)) {
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
      org.slf4j.LoggerFactory.getLogger(ModelSession.class).warn("Closing session {} failed: {}", id, e.getMessage());
    }
  }
}
