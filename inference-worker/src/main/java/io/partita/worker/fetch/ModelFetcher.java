package io.partita.worker.fetch;

import io.partita.models.repo.UnsafePathException;
import io.partita.models.repo.WeightFiles;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;

/**
 * Brings a model file (or a weight file) named by a URI into a local cache directory and checks
 * its sha256 before anyone may load it. A URI is {@code http:} or {@code https:} (fetched with the
 * JDK client), {@code file:} (an absolute path), or a path without a scheme, relative to the model
 * repository root (it must stay inside the root, symbolic links included).
 *
 * <p>What it guarantees: {@link #fetch} returns only a path under the cache directory whose bytes
 * have the wanted sha256; the file is written to a temporary name while it is hashed and renamed
 * into place only when it matches, so a mismatching or half-fetched file is never at the returned
 * name. A file already in the cache under its sha256 is hashed again and reused (nothing is
 * fetched); one that no longer matches is replaced. A failure is a {@link FetchException} naming
 * the URI and what went wrong (the sha256 found, the HTTP status), for the slot status.
 *
 * <p>Who calls it: with {@code worker.model.cache.dir} set, a slot opens its model file and mounts
 * its weight files only through it (docs/models.md, "Model files by URI"). It does not evict: the
 * cache keeps every file it fetched until it is deleted by hand.
 */
public final class ModelFetcher {
  private final Optional<Path> repository;
  private final Path cache;
  private final HttpClient http;
  private final Duration timeout;

  /** A fetch or check that failed; the message names the URI and the cause. */
  public static final class FetchException extends Exception {
    public FetchException(String message) {
      super(message);
    }

    public FetchException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * @param repository the model repository root that scheme-less URIs are relative to, if any
   * @param cache the local cache directory (created when missing)
   * @param timeout the longest one HTTP fetch may take
   */
  public ModelFetcher(Optional<Path> repository, Path cache, HttpClient http, Duration timeout) {
    this.repository = repository;
    this.cache = cache;
    this.http = http;
    this.timeout = timeout;
  }

  /** The cached path of the file {@code uri} names, whose sha256 is {@code sha256} (lowercase hex). */
  public Path fetch(String uri, String sha256) throws FetchException {
    String want = sha256.toLowerCase(Locale.ROOT);
    if (!want.matches("[0-9a-f]{64}")) {
      throw new FetchException(uri + ": sha256 '" + sha256 + "' is not 64 hex digits");
    }
    refuseUnsafe(uri); // before the cache: a URI that could not be fetched is refused even when its bytes are cached
    Path target = cache.resolve(want);
    try {
      Files.createDirectories(cache);
      if (Files.isRegularFile(target)) {
        try (InputStream in = Files.newInputStream(target)) {
          if (hashWhileCopying(in, OutputStream.nullOutputStream()).equals(want)) {
            return target;
          }
        }
        Files.delete(target); // changed on disk since it was cached: fetch it again
      }
      Path part = Files.createTempFile(cache, want + ".", ".part");
      try {
        String got;
        try (InputStream in = open(uri); OutputStream out = Files.newOutputStream(part)) {
          got = hashWhileCopying(in, out);
        }
        if (!got.equals(want)) {
          throw new FetchException(uri + ": sha256 is " + got + " but the catalog says " + want + "; the file is not loaded");
        }
        Files.move(part, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return target;
      } finally {
        Files.deleteIfExists(part);
      }
    } catch (IOException e) {
      throw new FetchException(uri + ": cannot be fetched into " + cache + ": " + e.getMessage(), e);
    }
  }

  private void refuseUnsafe(String uri) throws FetchException {
    String scheme = schemeOf(uri);
    if (scheme.isEmpty()) {
      Path root = repository.orElseThrow(() -> new FetchException(uri + ": a repository path, but this worker has no"
          + " model repository (model.repo); name the file by an http(s): or file: URI"));
      try {
        WeightFiles.resolveInside(root, uri);
      } catch (UnsafePathException e) {
        throw new FetchException(uri + ": " + e.getMessage(), e);
      }
    } else if (!scheme.equals("http") && !scheme.equals("https") && !scheme.equals("file")) {
      throw new FetchException(uri + ": scheme '" + scheme + "' is not supported; use http:, https:, file:"
          + " or a path in the model repository");
    }
  }

  private InputStream open(String uri) throws IOException, FetchException {
    String scheme = schemeOf(uri);
    switch (scheme) {
      case "http", "https" -> {
        HttpResponse<InputStream> response;
        try {
          response = http.send(HttpRequest.newBuilder(URI.create(uri)).timeout(timeout).GET().build(),
              HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new FetchException(uri + ": interrupted while fetching", e);
        }
        if (response.statusCode() != 200) {
          response.body().close();
          throw new FetchException(uri + ": the server answered HTTP " + response.statusCode());
        }
        return response.body();
      }
      case "file" -> {
        return Files.newInputStream(Path.of(URI.create(uri)));
      }
      case "" -> {
        Path root = repository.orElseThrow(() -> new FetchException(uri + ": a repository path, but this worker has no"
            + " model repository (model.repo); name the file by an http(s): or file: URI"));
        try {
          return Files.newInputStream(WeightFiles.resolveInside(root, uri));
        } catch (UnsafePathException e) {
          throw new FetchException(uri + ": " + e.getMessage(), e);
        }
      }
      default -> throw new FetchException(uri + ": scheme '" + scheme + "' is not supported; use http:, https:, file:"
          + " or a path in the model repository");
    }
  }

  /** Whether {@code uri} names its file by a scheme ({@code http:}, {@code file:}, ...) rather than by a repository path. */
  public static boolean hasScheme(String uri) {
    return !schemeOf(uri).isEmpty();
  }

  /** The URI's scheme in lowercase, or "" for a repository path (a Windows drive letter is not a scheme). */
  static String schemeOf(String uri) {
    int colon = uri.indexOf(':');
    if (colon <= 1 || !uri.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*")) {
      return "";
    }
    return uri.substring(0, colon).toLowerCase(Locale.ROOT);
  }

  private static String hashWhileCopying(InputStream in, OutputStream out) throws IOException {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
    try (DigestInputStream hashing = new DigestInputStream(in, digest)) {
      hashing.transferTo(out);
    }
    return HexFormat.of().formatHex(digest.digest());
  }
}
