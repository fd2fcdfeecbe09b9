package io.partita.models.repo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * Turns a path taken from a manifest or a Kafka record into a file inside the repository root, or
 * refuses it. Refused: empty paths, absolute paths, any {@code ..} segment (even one that would
 * normalize back inside: there is no honest reason for it), and paths whose real location (after
 * following symlinks, {@link Path#toRealPath}) is outside the root's real location. For a path that
 * does not exist yet, its deepest existing ancestor is checked instead.
 *
 * <p>This narrows, but cannot close, the window between the check and the use: a symlink swapped in
 * afterwards is not seen. Callers should open the returned real path promptly.
 */
public final class WeightFiles {

  private WeightFiles() {}

  /**
   * @param root the repository root (must exist)
   * @param relativePath a path relative to the root, with {@code /} separators
   * @return the real path of the file (symlinks resolved) when it exists, otherwise the normalized
   *     path under the root's real path
   * @throws UnsafePathException if the path is refused
   */
  public static Path resolveInside(Path root, String relativePath) {
    if (relativePath == null || relativePath.isBlank()) {
      throw new UnsafePathException(root, String.valueOf(relativePath), "the path is empty");
    }
    Path rel;
    try {
      rel = Path.of(relativePath);
    } catch (InvalidPathException e) {
      throw new UnsafePathException(root, relativePath, "not a valid path: " + e.getReason());
    }
    if (rel.isAbsolute() || relativePath.startsWith("/") || relativePath.startsWith("\\")) {
      throw new UnsafePathException(
          root, relativePath, "absolute paths are not allowed; give a path relative to the root");
    }
    for (Path part : rel) {
      if (part.toString().equals("..")) {
        throw new UnsafePathException(root, relativePath, "'..' segments are not allowed");
      }
    }
    Path realRoot;
    try {
      realRoot = root.toRealPath();
    } catch (IOException e) {
      throw new UnsafePathException(root, relativePath, "the root cannot be resolved: " + e);
    }
    Path candidate = realRoot.resolve(rel).normalize();
    Path existing = candidate;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      throw new UnsafePathException(root, relativePath, "no part of the path exists");
    }
    Path real;
    try {
      real = existing.toRealPath();
    } catch (IOException e) {
      throw new UnsafePathException(root, relativePath, "cannot be resolved: " + e);
    }
    if (!real.startsWith(realRoot)) {
      throw new UnsafePathException(
          root,
          relativePath,
          "it resolves to " + real + " through a symbolic link, outside the root " + realRoot);
    }
    return existing.equals(candidate) ? real : real.resolve(existing.relativize(candidate));
  }
}
