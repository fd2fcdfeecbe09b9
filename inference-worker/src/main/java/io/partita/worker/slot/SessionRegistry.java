package io.partita.worker.slot;

import ai.onnxruntime.OrtException;
import io.partita.models.lora.PerRowLora;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.WeightFiles;
import io.partita.runtime.SessionOpener;
import io.partita.worker.fetch.ModelFetcher;
import io.partita.worker.serving.ModelSession;
import io.partita.worker.serving.WeightFileLocator;
import io.partita.worker.serving.WeightFileMounts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens the slots' sessions and owns them. With sharing on, slots on one-core CPU partitions of the
 * same model version get one session (one thread, called from each slot's own pinned thread) and
 * one set of mounted weight files, instead of one copy of the weights each.
 *
 * <p>With batching across weight files on, a model whose graph qualifies ({@link PerRowLora}) is
 * opened in its per-row LoRA form, so one run serves rows of different weight files; any other
 * model is opened as it is and keeps one batch per weight file.
 */
final class SessionRegistry implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SessionRegistry.class);
  private final SessionOpener opener;
  private final Path root;
  private final boolean share;
  private final boolean acrossWeightFiles;
  private final LongSupplier clock;
  private final Runnable onChange;
  private final Map<String, ModelSession> shared = new HashMap<>();
  private final List<ModelSession> all = new ArrayList<>();
  private final Map<ModelSession, Integer> users = new HashMap<>();
  private int opened;
  private final Optional<ModelFetcher> fetcher;

  SessionRegistry(SessionOpener opener, Path root, boolean share, boolean acrossWeightFiles, LongSupplier clock, Runnable onChange) {
    this(opener, root, share, acrossWeightFiles, clock, onChange, Optional.empty());
  }

  /** @param fetcher when present, a model file is fetched into its cache and its sha256 checked before it is opened */
  SessionRegistry(SessionOpener opener, Path root, boolean share, boolean acrossWeightFiles, LongSupplier clock, Runnable onChange,
      Optional<ModelFetcher> fetcher) {
    this.fetcher = fetcher;
    this.opener = opener;
    this.root = root;
    this.share = share;
    this.acrossWeightFiles = acrossWeightFiles;
    this.clock = clock;
    this.onChange = onChange;
  }

  /** The session for a slot: a shared one when the slot may share, else a new one. */
  ModelSession obtain(SlotSpec spec) throws OrtException {
    String key = spec.model() + "/" + spec.version().version();
    if (share && spec.oneCore()) {
      synchronized (shared) {
        ModelSession existing = shared.get(key);
        if (existing != null) {
          existing.mounts().raiseBudget(spec.budgetBytes());
          synchronized (all) {
            users.merge(existing, 1, Integer::sum);
          }
          return existing;
        }
        ModelSession created = open(key, spec);
        shared.put(key, created);
        return created;
      }
    }
    return open(key, spec);
  }

  private ModelSession open(String key, SlotSpec spec) throws OrtException {
    Path file = spec.version().modelFile();
    ModelSignature signature = spec.version().signature();
    if (fetcher.isPresent()) {
      try { // never open a file whose bytes are not the ones the scan (and the catalog) named
        file = fetcher.get().fetch(spec.version().relativePath(), spec.version().sha256());
        // a version known from the catalog carries inputs and outputs only; the file also says
        // which parameters an adapter may set (the mount check and the per-row form need them)
        signature = ModelSignature.read(file);
      } catch (ModelFetcher.FetchException e) {
        throw new IllegalStateException(e.getMessage(), e);
      } catch (IOException | RuntimeException e) {
        throw new IllegalStateException(spec.version().relativePath() + ": the fetched file is not an ONNX model: " + e.getMessage(), e);
      }
    } else if (ModelFetcher.hasScheme(spec.version().relativePath())) {
      throw new IllegalStateException(spec.version().relativePath() + ": a model file named by a URI is fetched into the"
          + " model cache; set worker.model.cache.dir");
    }
    Optional<PerRowLora.Rewritten> perRow = acrossWeightFiles ? perRow(key, signature, file) : Optional.empty();
    SessionOpener.Opened session = perRow.isPresent()
        ? opener.open(perRow.get().toBytes(), spec.session())
        : opener.open(file, spec.session());
    WeightFileMounts mounts = new WeightFileMounts(weightFiles(), signature, spec.budgetBytes(), perRow.isPresent(), clock, onChange);
    synchronized (all) {
      ModelSession s = new ModelSession(key + "#" + opened++, spec.version(), opener.env(), session, mounts, perRow.orElse(null));
      all.add(s);
      users.put(s, 1);
      return s;
    }
  }

  /**
   * Where weight files are read: fetched into the cache (sha256 checked) when there is one, else
   * inside the repository; a URI without a cache is refused, naming the setting.
   */
  private WeightFileLocator weightFiles() {
    if (fetcher.isPresent()) {
      ModelFetcher f = fetcher.get();
      return file -> f.fetch(file.path(), file.sha256());
    }
    return file -> {
      if (ModelFetcher.hasScheme(file.path())) {
        throw new IllegalStateException(file.path() + " is a URI; a worker fetches such files into its model cache: set"
            + " worker.model.cache.dir");
      }
      return WeightFiles.resolveInside(root, file.path());
    };
  }

  /**
   * The per-row form of the slot's model, or empty (with the reason logged) when it does not qualify.
   *
   * @param signature the model's signature with its parameters
   * @param file the model file as it will be opened (the checked cache copy when there is a cache)
   */
  private static Optional<PerRowLora.Rewritten> perRow(String key, ModelSignature signature, Path file) {
    if (signature.parameters().isEmpty()) {
      return Optional.empty(); // no weight file can apply to it: nothing to batch across
    }
    PerRowLora.Result result;
    try {
      if (Files.size(file) > Integer.MAX_VALUE - 64) {
        log.info("Model {} keeps one batch per weight file: its file is too large to rewrite in memory", key);
        return Optional.empty();
      }
      result = PerRowLora.rewrite(Files.readAllBytes(file));
    } catch (IOException e) {
      log.warn("Model {} keeps one batch per weight file: reading {} failed: {}", key, file, e.getMessage());
      return Optional.empty();
    }
    if (result.qualifies()) {
      log.info("Model {} batches across weight files: {} LoRA pairs run per row", key, result.rewritten().orElseThrow().pairs().size());
    } else {
      log.info("Model {} keeps one batch per weight file: {}", key, result.reason());
    }
    return result.rewritten();
  }

  /**
   * A slot that used the session has stopped (its runner ended): the session is closed once no slot
   * uses it any more, so slots retired after a plan change do not keep their weights in memory.
   */
  void release(ModelSession session) {
    if (session == null) {
      return;
    }
    synchronized (shared) {
      synchronized (all) {
        Integer left = users.computeIfPresent(session, (k, n) -> n - 1);
        if (left == null || left > 0) {
          return;
        }
        users.remove(session);
        all.remove(session);
      }
      shared.values().remove(session);
    }
    session.close();
  }

  @Override
  public void close() {
    synchronized (all) {
      all.forEach(ModelSession::close);
      all.clear();
      users.clear();
    }
    synchronized (shared) {
      shared.clear();
    }
  }
}
