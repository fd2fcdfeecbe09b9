package io.partita.worker.serving;

import java.nio.file.Path;

/**
 * Where the bytes of a weight file the catalog names lie on this host: inside the model repository
 * for a repository path, or in the worker's model cache once fetched and checked (see
 * {@code io.partita.worker.fetch.ModelFetcher}). {@link WeightFileMounts} still hashes what it
 * reads from the returned path before it loads it.
 */
@FunctionalInterface
public interface WeightFileLocator {
  /**
   * @return a local file with the weight file's bytes
   * @throws Exception whose message says why there is none (it becomes the mount's NOT_READY reason)
   */
  Path locate(WeightFileRef file) throws Exception;
}
