package io.partita.gateway.jobs;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * Puts job results, which arrive in completion order, back into input order, and keeps exactly one
 * per index: the first one offered. A result is handed on as soon as every index before it has been
 * handed on, so only the results that arrived ahead of a slower one are held.
 */
public final class ResultOrder<T> {
  private final int total;
  private final Map<Integer, T> ahead = new HashMap<>();
  private int next;
  private long duplicates;

  public ResultOrder(int total) {
    this.total = total;
  }

  /** Offers the result of {@code index}; returns false (and drops it) when it is a duplicate or out of range. */
  public boolean offer(int index, T result, Consumer<T> emit) {
    if (index < next || index >= total || ahead.containsKey(index)) {
      duplicates++;
      return false;
    }
    ahead.put(index, result);
    while (ahead.containsKey(next)) {
      emit.accept(ahead.remove(next));
      next++;
    }
    return true;
  }

  /** The first index not yet handed on. */
  public int next() {
    return next;
  }

  public boolean complete() {
    return next >= total;
  }

  public long duplicates() {
    return duplicates;
  }

  /** Hands on what is left, in order, filling each missing index with {@code missing.apply(index)}. */
  public void finish(IntFunction<T> missing, Consumer<T> emit) {
    while (next < total) {
      T r = ahead.remove(next);
      emit.accept(r != null ? r : missing.apply(next));
      next++;
    }
  }
}
