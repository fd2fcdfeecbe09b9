package io.partita.worker.serving;

import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoraAdapter;
import io.partita.avro.ErrorCode;
import io.partita.models.lora.LoraAdapter;
import io.partita.models.lora.LoraAdapterReader;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.Sha256;
import io.partita.models.repo.WeightFiles;
import io.partita.runtime.LoraAdapters;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * The loading interface of one ONNX Runtime session: which service models it serves and the weight
 * files (LoRA adapters) mounted for them. Mounting never touches the base session: an adapter is
 * loaded once and activated per run.
 *
 * <p>{@link #mount} checks, in order, that the file can be found on this host (a repository path
 * must resolve inside the repository root: no {@code ..}, no absolute path, no link out; a URI is
 * fetched into the model cache by the {@link WeightFileLocator}), that the content has the catalog's sha256 (the bytes
 * read once are the bytes checked and loaded, so a file swapped after the check is never loaded),
 * and that the adapter's parameters fit the model. A failed mount leaves that service model
 * NOT_READY with the reason; the others keep serving.
 *
 * <p>Memory budget: when mounting would take the mounted weight files over the budget, the least
 * recently used ones are unmounted first (EVICTED: they are mounted again, checks included, by the
 * next request that needs them). A weight file in use by a running batch is never unmounted; when
 * the budget cannot be met without one, the mount fails (OVERLOADED for a request, NOT_READY for an
 * assignment). Thread-safe; one instance per session.
 *
 * <p>A session in the per-row LoRA form ({@code perRow}) runs adapters as inputs, not through ONNX
 * Runtime's adapter API: its mounts hold each adapter's parameters as arrays ({@link
 * Lease#parameters()}) and no {@link OrtLoraAdapter}; the budget counts the file's bytes either way.
 */
public final class WeightFileMounts implements AutoCloseable {
  public enum State { READY, EVICTED, NOT_READY }

  /**
   * One service model's mount as the slot status shows it.
   *
   * @param file null for the base model without a weight file
   * @param bytes memory the mounted weight file takes (its size); 0 when not mounted
   * @param lastUsedMs when a run (or the mount) last used it
   */
  public record Mount(String serviceModel, String instanceId, WeightFileRef file, State state, String reason,
                      long bytes, long lastUsedMs, int inUse) {}

  /** A weight file held for one run; closing it lets the file be unmounted again. */
  public interface Lease extends AutoCloseable {
    /** The adapter to activate, or null for the base model (and for every mount of a per-row session). */
    OrtLoraAdapter adapter();

    /** The adapter's parameters for a per-row session, or null for the base model (and for other sessions). */
    LoraAdapter parameters();

    @Override
    void close();
  }

  private static final class Entry {
    final String serviceModel;
    final String instanceId;
    final WeightFileRef file;
    State state = State.READY;
    String reason;
    OrtLoraAdapter adapter;
    LoraAdapter parameters;
    long bytes;
    long lastUsedMs;
    long lastUseSeq;
    int inUse;
    boolean removed;

    Entry(String serviceModel, String instanceId, WeightFileRef file) {
      this.serviceModel = serviceModel;
      this.instanceId = instanceId;
      this.file = file;
    }
  }

  private final WeightFileLocator locator;
  private final ModelSignature signature;
  private final LongSupplier clock;
  private final Runnable onChange;
  private final boolean perRow;
  private final Map<String, Entry> entries = new TreeMap<>();
  private long budgetBytes;
  private long mountedBytes;
  private long useSeq;
  private long evictions;

  /**
   * @param root the model repository root; weight files must resolve inside it
   * @param signature the base model's signature, for the adapter fit check
   * @param budgetBytes most bytes of weight files mounted at once; 0 = no limit
   * @param clock epoch ms, for the status
   * @param onChange called (outside any lock is not guaranteed) whenever a mount changes state
   */
  public WeightFileMounts(Path root, ModelSignature signature, long budgetBytes, LongSupplier clock, Runnable onChange) {
    this(root, signature, budgetBytes, false, clock, onChange);
  }

  /**
   * @param perRow the session runs the per-row LoRA form: keep adapters as parameters, not as ONNX Runtime adapters
   */
  public WeightFileMounts(Path root, ModelSignature signature, long budgetBytes, boolean perRow, LongSupplier clock,
                          Runnable onChange) {
    this(file -> WeightFiles.resolveInside(root, file.path()), signature, budgetBytes, perRow, clock, onChange);
  }

  /**
   * @param locator finds a weight file's bytes on this host (in the repository, or fetched into the model cache)
   */
  public WeightFileMounts(WeightFileLocator locator, ModelSignature signature, long budgetBytes, boolean perRow, LongSupplier clock,
                          Runnable onChange) {
    this.perRow = perRow;
    this.locator = locator;
    this.signature = signature;
    this.budgetBytes = budgetBytes;
    this.clock = clock;
    this.onChange = onChange;
  }

  /** Raises the budget (slots sharing one session bring their own budgets; the largest wins). */
  public synchronized void raiseBudget(long bytes) {
    if (budgetBytes > 0 && (bytes <= 0 || bytes > budgetBytes)) {
      budgetBytes = bytes;
    }
  }

  public synchronized long budgetBytes() {
    return budgetBytes;
  }

  public synchronized long mountedBytes() {
    return mountedBytes;
  }

  public synchronized long evictions() {
    return evictions;
  }

  /**
   * Mounts a service model's weight file (or registers a service model without one). Mounting the
   * same file again is a no-op; a different file replaces the old one (which stays loaded until the
   * runs using it finish).
   *
   * @return the mount as it now stands: READY, or NOT_READY with the reason
   */
  public Mount mount(String serviceModel, String instanceId, WeightFileRef file) {
    synchronized (this) {
      Entry old = entries.get(serviceModel);
      if (old != null && Objects.equals(old.file, file) && old.state == State.READY) {
        return view(old);
      }
    }
    Located located = file == null ? null : locate(file);
    Mount result;
    synchronized (this) {
      Entry old = entries.get(serviceModel);
      if (old != null && Objects.equals(old.file, file) && old.state == State.READY) {
        return view(old);
      }
      if (old != null) {
        remove(old);
      }
      Entry entry = new Entry(serviceModel, instanceId, file);
      entries.put(serviceModel, entry);
      touch(entry);
      if (file != null) {
        try {
          load(entry, located);
        } catch (NotRunnableException e) {
          entry.state = State.NOT_READY;
          entry.reason = e.getMessage();
        }
      }
      result = view(entry);
    }
    onChange.run();
    return result;
  }

  /**
   * The service model leaves this session. Its weight file is closed now, or, if a run is using it,
   * when that run finishes.
   *
   * @return whether it was mounted
   */
  public boolean unmount(String serviceModel) {
    synchronized (this) {
      Entry entry = entries.get(serviceModel);
      if (entry == null) {
        return false;
      }
      remove(entry);
    }
    onChange.run();
    return true;
  }

  /**
   * Holds a service model's weight file for one run, mounting it again first if it was evicted.
   *
   * @throws NotRunnableException NOT_READY when the service model is not mounted here or its mount
   *     failed; OVERLOADED when an evicted file cannot come back because the budget is held by
   *     files in use
   */
  public Lease acquire(String serviceModel) throws NotRunnableException {
    boolean changed = false;
    Entry entry;
    synchronized (this) {
      entry = entries.get(serviceModel);
      if (entry == null) {
        throw new NotRunnableException(ErrorCode.NOT_READY, "service model '" + serviceModel + "' is not mounted on this slot");
      }
      if (entry.state == State.NOT_READY) {
        throw new NotRunnableException(ErrorCode.NOT_READY, "service model '" + serviceModel + "' is not ready: " + entry.reason);
      }
      if (entry.state == State.EVICTED) {
        try {
          load(entry);
          changed = true;
        } catch (NotRunnableException e) {
          if (e.code() != ErrorCode.OVERLOADED) {
            entry.state = State.NOT_READY;
            entry.reason = e.getMessage();
            changed = true;
          }
          throw e;
        } finally {
          if (changed) {
            onChange.run();
          }
        }
      }
      entry.inUse++;
      touch(entry);
    }
    Entry held = entry;
    return new Lease() {
      private boolean closed;

      @Override
      public OrtLoraAdapter adapter() {
        return held.adapter;
      }

      @Override
      public LoraAdapter parameters() {
        return held.parameters;
      }

      @Override
      public void close() {
        synchronized (WeightFileMounts.this) {
          if (closed) {
            return;
          }
          closed = true;
          held.inUse--;
          if (held.removed && held.inUse == 0) {
            unload(held);
          }
        }
      }
    };
  }

  /** Every mount, by service model. */
  public synchronized List<Mount> mounts() {
    List<Mount> out = new ArrayList<>(entries.size());
    for (Entry e : entries.values()) {
      out.add(view(e));
    }
    return out;
  }

  public synchronized Optional<Mount> mount(String serviceModel) {
    Entry e = entries.get(serviceModel);
    return e == null ? Optional.empty() : Optional.of(view(e));
  }

  @Override
  public synchronized void close() {
    for (Entry e : entries.values()) {
      unload(e);
    }
    entries.clear();
  }

  /** Where a weight file was found on this host, or why it was not. */
  private record Located(Path path, String failure) {}

  /**
   * Finds (fetches) the file outside the lock, so that fetching a new weight file over the network
   * does not hold up the runs of this session.
   */
  private Located locate(WeightFileRef file) {
    try {
      return new Located(locator.locate(file), null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Located(null, "interrupted while it was fetched");
    } catch (Exception e) {
      return new Located(null, String.valueOf(e.getMessage()));
    }
  }

  /** Checks and loads an entry's weight file, evicting others to stay in the budget. Caller holds the lock. */
  private void load(Entry entry) throws NotRunnableException {
    load(entry, locate(entry.file)); // an evicted file comes back from the repository or the cache: no network
  }

  /** As {@link #load(Entry)}, with the file already located by {@link #locate}. */
  private void load(Entry entry, Located located) throws NotRunnableException {
    WeightFileRef file = entry.file;
    if (located.failure() != null) {
      throw refused(file, located.failure());
    }
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(located.path());
    } catch (IOException | RuntimeException e) {
      throw refused(file, e.getMessage());
    }
    String actual = Sha256.of(bytes);
    if (!actual.equalsIgnoreCase(file.sha256())) {
      throw refused(file, "its sha256 is " + actual + " but the catalog says " + file.sha256());
    }
    LoraAdapter parsed;
    try {
      parsed = LoraAdapterReader.fromBytes(bytes);
      Optional<String> misfit = signature.checkAdapter(parsed);
      if (misfit.isPresent()) {
        throw refused(file, misfit.get());
      }
    } catch (IllegalArgumentException e) {
      throw refused(file, "not a LoRA adapter: " + e.getMessage());
    }
    if (budgetBytes > 0 && bytes.length > budgetBytes) {
      throw refused(file, "it takes " + bytes.length + " bytes, more than the slot's memory budget of " + budgetBytes);
    }
    if (!makeRoom(bytes.length, entry)) {
      throw new NotRunnableException(ErrorCode.OVERLOADED, "weight file " + file.path() + " (" + bytes.length
          + " bytes) does not fit the memory budget of " + budgetBytes + " bytes: " + mountedBytes
          + " bytes are held by weight files in use; retry later");
    }
    if (perRow) {
      entry.parameters = parsed;
    } else {
      try {
        entry.adapter = LoraAdapters.load(bytes);
      } catch (OrtException | RuntimeException e) {
        throw refused(file, "ONNX Runtime refused it: " + e.getMessage());
      }
    }
    entry.bytes = bytes.length;
    mountedBytes += bytes.length;
    entry.state = State.READY;
    entry.reason = null;
  }

  private static NotRunnableException refused(WeightFileRef file, String why) {
    return new NotRunnableException(ErrorCode.NOT_READY, "weight file " + file.path() + " was not mounted: " + why);
  }

  /** Evicts least recently used, unused weight files until {@code need} more bytes fit. */
  private boolean makeRoom(long need, Entry except) {
    if (budgetBytes <= 0) {
      return true;
    }
    while (mountedBytes + need > budgetBytes) {
      Entry victim = null;
      for (Entry e : entries.values()) {
        if (e != except && e.state == State.READY && e.bytes > 0 && e.inUse == 0
            && (victim == null || e.lastUseSeq < victim.lastUseSeq)) {
          victim = e;
        }
      }
      if (victim == null) {
        return false;
      }
      unload(victim);
      victim.state = State.EVICTED;
      evictions++;
    }
    return true;
  }

  private void remove(Entry entry) {
    entries.remove(entry.serviceModel);
    entry.removed = true;
    if (entry.inUse == 0) {
      unload(entry);
    }
  }

  private void unload(Entry entry) {
    if (entry.adapter != null) {
      entry.adapter.close();
      entry.adapter = null;
    }
    entry.parameters = null;
    mountedBytes -= entry.bytes;
    entry.bytes = 0;
  }

  private void touch(Entry entry) {
    entry.lastUseSeq = ++useSeq;
    entry.lastUsedMs = clock.getAsLong();
  }

  private static Mount view(Entry e) {
    return new Mount(e.serviceModel, e.instanceId, e.file, e.state, e.reason, e.bytes, e.lastUsedMs, e.inUse);
  }
}
