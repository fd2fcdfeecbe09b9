package io.partita.worker.serving;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoraAdapter;
import ai.onnxruntime.OrtSession;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.Sha256;
import io.partita.models.repo.TensorSpec;
import io.partita.models.repo.VersionEntry;
import io.partita.models.repo.WeightFile;
import io.partita.models.repo.WeightFiles;
import io.partita.models.tensor.TensorValidator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs inference for the service models of one model repository: one ONNX Runtime session per
 * model version, and each service model's weight file mounted once as a LoRA adapter that is
 * activated per run, so one base session serves every service model built on it.
 *
 * <p>Every call of {@link #infer} returns a reply: outputs, or an error with its code. A service
 * model whose weight file failed to mount is not ready (NOT_READY with the reason); the others keep
 * serving. Sessions are safe to run from several threads. Closing releases every native resource.
 */
public final class ModelServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ModelServer.class);

  private final OrtEnvironment env = OrtEnvironment.getEnvironment();
  private final RepositoryIndex index;
  private final String instance;
  private final Map<String, OrtSession> sessions = new TreeMap<>();
  private final Map<String, OrtLoraAdapter> adapters = new TreeMap<>();
  private final Map<String, String> notReady = new TreeMap<>();
  private final String provider;

  /** Opens the sessions and mounts the weight files; a session that cannot open is thrown. */
  public ModelServer(RepositoryIndex index, SessionFactory sessionFactory, String instance) throws OrtException {
    this.index = index;
    this.instance = instance;
    try {
      for (ModelEntry model : index.models().values()) {
        for (VersionEntry version : model.versions().values()) {
          sessions.put(key(model.name(), version.version()), sessionFactory.open(env, version.modelFile()));
        }
      }
      for (ServiceModelEntry service : index.serviceModels().values()) {
        service.weightFile().ifPresent(file -> mount(service.name(), file));
      }
    } catch (OrtException | RuntimeException e) {
      close();
      throw e;
    }
    this.provider = sessionFactory.provider();
  }

  private void mount(String serviceModel, WeightFile file) {
    try {
      var path = WeightFiles.resolveInside(index.root(), file.relativePath());
      String actual = Sha256.of(path);
      if (!actual.equalsIgnoreCase(file.sha256())) {
        throw new IllegalStateException("sha256 of " + file.relativePath() + " is " + actual + ", the manifest says " + file.sha256());
      }
      adapters.put(serviceModel, OrtLoraAdapter.create(path.toString()));
    } catch (Exception e) {
      String reason = "weight file " + file.relativePath() + " could not be mounted: " + e.getMessage();
      notReady.put(serviceModel, reason);
      log.warn("Service model {} is not ready: {}", serviceModel, reason);
    }
  }

  public String provider() {
    return provider;
  }

  public RepositoryIndex index() {
    return index;
  }

  /** Service models that can be asked for, ready or not. */
  public Set<String> serviceModels() {
    return new TreeSet<>(index.serviceModels().keySet());
  }

  /** Why a service model is not ready, if it is not. */
  public Optional<String> notReadyReason(String serviceModel) {
    return Optional.ofNullable(notReady.get(serviceModel));
  }

  /** Runs one request and returns its one reply. Never throws for a bad request. */
  public InferenceReply infer(InferenceRequest request) {
    String name = request.getServiceModel();
    ServiceModelEntry service = index.serviceModels().get(name);
    if (service == null) {
      return error(request, null, ErrorCode.NOT_FOUND, "service model '" + name + "' is not served here");
    }
    String reason = notReady.get(name);
    if (reason != null) {
      return error(request, null, ErrorCode.NOT_READY, "service model '" + name + "' is not ready: " + reason);
    }
    ModelEntry model = index.models().get(service.baseModel());
    VersionEntry version;
    if (request.getVersion() == null) {
      version = model.latest();
    } else {
      version = model.version(request.getVersion()).orElse(null);
      if (version == null) {
        return error(request, null, ErrorCode.NOT_FOUND,
            "version '" + request.getVersion() + "' of service model '" + name + "' does not exist; versions: " + model.versions().keySet());
      }
    }
    Map<String, TensorSpec> specs = new LinkedHashMap<>();
    version.signature().inputs().forEach(s -> specs.put(s.name(), s));
    String problem = TensorValidator.check(specs, request.getInputs().stream()
        .map(t -> new TensorValidator.Sent(t.getName(), t.getDatatype(), t.getShape(), t.getData().remaining()))
        .toList());
    if (problem != null) {
      return error(request, version.version(), ErrorCode.BAD_INPUT, problem);
    }
    Set<String> wanted = new TreeSet<>(request.getOutputs());
    for (String out : wanted) {
      if (version.signature().output(out).isEmpty()) {
        return error(request, version.version(), ErrorCode.BAD_INPUT,
            "output '" + out + "': unknown output; the model gives "
                + version.signature().outputs().stream().map(TensorSpec::name).toList());
      }
    }
    return run(request, version, adapters.get(name), wanted);
  }

  private InferenceReply run(InferenceRequest request, VersionEntry version, OrtLoraAdapter adapter, Set<String> wanted) {
    OrtSession session = sessions.get(key(version.model(), version.version()));
    Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
    long started = System.nanoTime();
    try (OrtSession.RunOptions options = new OrtSession.RunOptions()) {
      for (Tensor t : request.getInputs()) {
        feeds.put(t.getName(), OrtTensors.toOrt(env, t));
      }
      if (adapter != null) {
        options.addActiveLoraAdapter(adapter);
      }
      try (OrtSession.Result result = wanted.isEmpty() ? session.run(feeds, options) : session.run(feeds, wanted, options)) {
        List<Tensor> outputs = new ArrayList<>();
        for (Map.Entry<String, OnnxValue> e : result) {
          if (e.getValue() instanceof OnnxTensor tensor) {
            outputs.add(OrtTensors.fromOrt(e.getKey(), tensor));
          }
        }
        return InferenceReply.newBuilder()
            .setId(request.getId())
            .setServiceModel(request.getServiceModel())
            .setModelVersion(version.version())
            .setOutputs(outputs)
            .setInstance(instance)
            .setInferenceMicros((System.nanoTime() - started) / 1000)
            .build();
      }
    } catch (OrtException | RuntimeException e) {
      log.debug("Model error for request {}", request.getId(), e);
      return error(request, version.version(), ErrorCode.MODEL_ERROR, "the model failed: " + e.getMessage());
    } finally {
      feeds.values().forEach(OnnxTensor::close);
    }
  }

  /** An error reply for a request. */
  public InferenceReply error(InferenceRequest request, String version, ErrorCode code, String message) {
    return errorReply(request.getId(), request.getServiceModel(), version, code, message, instance);
  }

  public static InferenceReply errorReply(String id, String serviceModel, String version, ErrorCode code, String message, String instance) {
    return InferenceReply.newBuilder()
        .setId(id)
        .setServiceModel(serviceModel)
        .setModelVersion(version)
        .setError(new InferenceError(code, message))
        .setInstance(instance)
        .build();
  }

  private static String key(String model, String version) {
    return model + "/" + version;
  }

  @Override
  public void close() {
    adapters.values().forEach(OrtLoraAdapter::close);
    adapters.clear();
    for (OrtSession session : sessions.values()) {
      try {
        session.close();
      } catch (OrtException e) {
        log.warn("Closing a session failed: {}", e.getMessage());
      }
    }
    sessions.clear();
  }
}
