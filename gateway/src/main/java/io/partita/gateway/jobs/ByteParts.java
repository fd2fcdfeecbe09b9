package io.partita.gateway.jobs;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/** Cuts a list into consecutive parts within a byte budget: a job's input chunks, its result records. */
final class ByteParts {
  private ByteParts() {}

  /**
   * The items in order, cut into parts whose summed {@code size} stays within {@code limit}; an
   * item alone over the limit still gets a part of its own.
   */
  static <T> List<List<T>> cut(List<T> items, ToLongFunction<T> size, long limit) {
    List<List<T>> parts = new ArrayList<>();
    List<T> part = new ArrayList<>();
    long partBytes = 0;
    for (T item : items) {
      long bytes = size.applyAsLong(item);
      if (!part.isEmpty() && partBytes + bytes > limit) {
        parts.add(part);
        part = new ArrayList<>();
        partBytes = 0;
      }
      part.add(item);
      partBytes += bytes;
    }
    if (!part.isEmpty()) {
      parts.add(part);
    }
    return parts;
  }
}
