package io.partita.common.packing;

import io.partita.avro.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Decides which concurrent online calls travel to a worker as one request: the pure part of the
 * gateway's coalescer ({@code infer.Coalescer} sends, times and answers). No Kafka, no clock, no
 * threads: the owner calls it under one lock, passes times in, and sends what it returns.
 *
 * <p>Calls share a pack only when they share a {@link Key}: the service model, the pinned version
 * (or none: the latest), and the layout ({@link Rows#layout}:
 * input names, datatypes, every dimension but the first, and the outputs asked for). A model whose
 * first dimension is fixed ({@link PackRule#packs()} false) gives no key: its calls are never packed.
 *
 * <p>The rule, per key, with a depth of {@code d} requests in flight ({@link #CallPacker(int)}, 1 by
 * default: Nagle's rule):
 * <ul>
 *   <li>a call goes at once, alone, when fewer than {@code d} requests of its key are in flight and
 *       no pack of it is open: at low load nothing waits;</li>
 *   <li>otherwise it joins the key's open pack (one is opened if none is), which is handed out when
 *       the next call would take it past {@link PackRule#maxRows()} or {@link PackRule#maxBytes()},
 *       when it reaches the rows, when an answer leaves fewer than {@code d} of the key's requests
 *       in flight ({@link #answered}), or when the owner's window since the pack opened ends
 *       ({@link #windowEnded}), whichever comes first;</li>
 *   <li>a call bigger than a pack on its own goes alone.</li>
 * </ul>
 * Every pack handed out counts as in flight for its key until the owner reports it
 * {@link #answered} (also when it sent nothing because every call of it had expired).
 *
 * @param <T> the caller's own state carried with each call (its future, its stamps)
 */
public final class CallPacker<T> {

  /** What calls must share to travel in one request. */
  public record Key(String serviceModel, String version, String layout) {}

  /**
   * One call.
   *
   * @param caller the owner's state for this call
   * @param inputs its checked inputs
   * @param rows its leading dimension
   * @param bytes what it adds to a pack: its input bytes or its expected output bytes, the larger
   * @param deadlineNanos when it fails on its own, on the owner's clock
   */
  public record Call<T>(T caller, List<Tensor> inputs, int rows, long bytes, long deadlineNanos) {}

  /** The calls a request carries: one alone (its own request, unchanged), or several stacked in order. */
  public record Pack<T>(Key key, List<Call<T>> calls) {
    public Pack {
      calls = List.copyOf(calls);
      if (calls.isEmpty()) {
        throw new IllegalArgumentException("a pack needs at least one call");
      }
    }

    public boolean single() {
      return calls.size() == 1;
    }

    /** The leading dimension of the stacked inputs. */
    public int rows() {
      return calls.stream().mapToInt(Call::rows).sum();
    }

    public long bytes() {
      return calls.stream().mapToLong(Call::bytes).sum();
    }

    /** The request's deadline: the latest of its calls' (each call still fails at its own). */
    public long deadlineNanos() {
      long latest = calls.get(0).deadlineNanos();
      for (Call<T> c : calls) {
        if (c.deadlineNanos() - latest > 0) {
          latest = c.deadlineNanos();
        }
      }
      return latest;
    }

    /** The request's inputs: every call's rows of each input, stacked in call order ({@link Rows#stack}). */
    public List<Tensor> inputs() {
      List<List<Tensor>> parts = new ArrayList<>(calls.size());
      for (Call<T> c : calls) {
        parts.add(c.inputs());
      }
      return Rows.stack(parts, rows());
    }

    /**
     * The reply's outputs cut back per call, in call order ({@link Rows#split}).
     *
     * @throws IllegalArgumentException when an output does not keep one leading row per input row
     */
    public List<List<Tensor>> split(List<Tensor> outputs) {
      return Rows.split(outputs, calls.stream().mapToInt(Call::rows).toArray());
    }

    /** This pack without the calls whose deadline has passed at {@code nowNanos}; null when none is left. */
    public Pack<T> live(long nowNanos) {
      return keep(c -> c.deadlineNanos() - nowNanos > 0);
    }

    /** This pack with only the calls {@code which} accepts, in order; null when none is left. */
    public Pack<T> keep(Predicate<Call<T>> which) {
      List<Call<T>> kept = calls.stream().filter(which).toList();
      if (kept.size() == calls.size()) {
        return this;
      }
      return kept.isEmpty() ? null : new Pack<>(key, kept);
    }
  }

  /**
   * What an {@link #offer} did.
   *
   * @param send the packs to send now, in order (none, one or two)
   * @param opened the number of the pack the call opened, for {@link #windowEnded}; -1 when it opened none
   */
  public record Offer<T>(List<Pack<T>> send, long opened) {}

  private static final class Open<T> {
    final long number;
    final List<Call<T>> calls = new ArrayList<>();
    int rows;
    long bytes;

    Open(long number) {
      this.number = number;
    }
  }

  private final Map<Key, Open<T>> open = new HashMap<>();
  private final Map<Key, Integer> inFlight = new HashMap<>();
  private final int depth;
  private long opened;

  /** Holds calls while one request of their key is in flight (Nagle's rule). */
  public CallPacker() {
    this(1);
  }

  /**
   * Holds calls while {@code depth} requests of their key are in flight. A depth above 1 keeps the
   * path busy while a pack is on its way (the next one goes before the first is answered), at the
   * cost of smaller packs and more requests.
   *
   * @param depth requests of one key in flight before calls wait for company (at least 1)
   */
  public CallPacker(int depth) {
    if (depth < 1) {
      throw new IllegalArgumentException("the depth of requests in flight must be at least 1, got " + depth);
    }
    this.depth = depth;
  }

  /**
   * The key of a call, or null when it may not share a request: the model's first dimension is
   * fixed, its inputs disagree on their first dimension, or its layout cannot be stacked.
   */
  public static Key key(String serviceModel, String version, List<Tensor> inputs, List<String> outputs, PackRule rule) {
    if (!rule.packs() || Rows.rows(inputs) < 1) {
      return null;
    }
    String layout = Rows.layout(inputs, outputs);
    return layout == null ? null : new Key(serviceModel, version, layout);
  }

  /** A call with its rows and the bytes it adds to a pack under {@code rule}. */
  public static <T> Call<T> call(T caller, List<Tensor> inputs, List<String> outputs, PackRule rule, long deadlineNanos) {
    int rows = Math.max(1, Rows.rows(inputs));
    long bytes = Math.max(Rows.bytes(inputs), rows * rule.outputBytesPerRow(outputs));
    return new Call<>(caller, inputs, rows, bytes, deadlineNanos);
  }

  /** Takes one call of {@code key}; returns what to send now and whether it opened a pack. */
  public Offer<T> offer(Key key, Call<T> call, PackRule rule) {
    if (call.rows() > rule.maxRows() || call.bytes() > rule.maxBytes()) {
      return new Offer<>(List.of(handOut(key, List.of(call))), -1);
    }
    Open<T> pack = open.get(key);
    if (pack == null && inFlight(key) < depth) {
      return new Offer<>(List.of(handOut(key, List.of(call))), -1);
    }
    List<Pack<T>> send = new ArrayList<>(2);
    if (pack != null && (pack.rows + call.rows() > rule.maxRows() || pack.bytes + call.bytes() > rule.maxBytes())) {
      open.remove(key);
      send.add(handOut(key, pack.calls));
      pack = null;
    }
    long number = -1;
    if (pack == null) {
      pack = new Open<>(++opened);
      open.put(key, pack);
      number = pack.number;
    }
    pack.calls.add(call);
    pack.rows += call.rows();
    pack.bytes += call.bytes();
    if (pack.rows >= rule.maxRows()) {
      open.remove(key);
      send.add(handOut(key, pack.calls));
      number = -1;
    }
    return new Offer<>(send, number);
  }

  /**
   * One request of {@code key} handed out earlier is done (answered, failed, or not sent at all);
   * returns the key's open pack when fewer than the depth of the key's requests are in flight now,
   * else null.
   */
  public Pack<T> answered(Key key) {
    Integer n = inFlight.get(key);
    if (n == null || n <= 1) {
      inFlight.remove(key);
    } else {
      inFlight.put(key, n - 1);
    }
    Open<T> pack = open.get(key);
    if (pack == null || inFlight(key) >= depth) {
      return null;
    }
    open.remove(key);
    return handOut(key, pack.calls);
  }

  /** The window of the pack numbered {@code number} ended: returns it when it is still open, else null. */
  public Pack<T> windowEnded(Key key, long number) {
    Open<T> pack = open.get(key);
    if (pack == null || pack.number != number) {
      return null;
    }
    open.remove(key);
    return handOut(key, pack.calls);
  }

  /** Requests of {@code key} handed out and not yet {@link #answered}. */
  public int inFlight(Key key) {
    return inFlight.getOrDefault(key, 0);
  }

  /** Calls held in open packs, every key together. */
  public int held() {
    return open.values().stream().mapToInt(o -> o.calls.size()).sum();
  }

  /** Every call held in an open pack, forgetting them (the owner is closing). */
  public List<Call<T>> drain() {
    List<Call<T>> all = new ArrayList<>();
    open.values().forEach(o -> all.addAll(o.calls));
    open.clear();
    return all;
  }

  private Pack<T> handOut(Key key, List<Call<T>> calls) {
    inFlight.merge(key, 1, Integer::sum);
    return new Pack<>(key, calls);
  }
}
