package io.partita.common.coalescing;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.common.packing.CallPacker;
import io.partita.common.packing.PackRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Online calls batched on the wire, for any sender of requests: concurrent calls of one service
 * model that can share a request ({@link CallPacker} decides which, and when) travel as one request
 * record, their rows stacked; the reply's outputs are cut back per call and each call is answered
 * with its own reply (its own id, its own rows). The gateway ({@code infer.Coalescer}) and
 * {@code PartitaClient} both use it; each says how a request is sent and how a call ends through
 * its {@link Wire}.
 *
 * <p>Why this design: per-record costs (the producer's send, the broker's append and fetch, the
 * worker's decode, the reply's produce and fetch) are what an online call mostly costs at high
 * concurrency, and packing pays them once per pack. A call goes at once, alone, when nothing of its
 * kind is in flight, so at low load nothing waits and the record is the call's own request,
 * unchanged. Calls are collected only while an earlier request of the same kind is on its way
 * (Nagle's rule; or while {@code depth} of them are, see {@link CallPacker#CallPacker(int)}): the
 * open pack leaves when the earlier one is answered, when it is full (the
 * rule's rows or bytes), or at the latest the window after it opened. A fixed linger on every call
 * would add its window at low load too; holding until a reply with no bound would tie a call's
 * latency to another call's model time.
 *
 * <p>Each call keeps what it had alone: its own deadline (it fails with a {@link TimeoutException}
 * at its own time, whatever its pack does; a pack's request carries the latest deadline of its
 * calls), and its own errors: a pack answered with an error other than DEADLINE_EXCEEDED, or whose
 * outputs cannot be cut back per row, is sent again one call per request, once, so a bad call
 * fails only itself. A call whose request carries parameters is never packed.
 *
 * <p>Threads: one timer thread for windows and deadlines (short tasks; a window's pack is handed to
 * {@link Wire#send} on it). {@link Wire#finish} runs on the thread that completes the call.
 *
 * @param <C> the owner's state for one call (its future, its stamps)
 */
public final class CallCoalescer<C> implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CallCoalescer.class);

  /** How the owner sends a request and ends a call. */
  public interface Wire<C> {
    /**
     * Sends one request for {@code callers} (in pack order; one when the call goes alone, and then
     * the request is its own, unchanged). The future completes with the reply, or fails (no reply
     * by {@code timeoutMs}, a produce failure); it may also throw, which counts as a failure.
     */
    CompletableFuture<InferenceReply> send(InferenceRequest request, long timeoutMs, List<C> callers, int rows);

    /**
     * Ends one call, once: with its own reply (its id, its rows; an error reply too), or with a
     * failure: a {@link TimeoutException} at its deadline, {@link Closed} when the coalescer closes,
     * else what the send failed with.
     */
    void finish(C caller, InferenceReply reply, Throwable failure);

    /** A pack of {@code calls} calls failed as a whole ({@code why}); they are sent again one per request. */
    default void splitting(String serviceModel, int calls, String why) {}
  }

  /** The failure of a call still held when the coalescer closes. */
  public static final class Closed extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    Closed() {
      super("closing: the call was not sent");
    }
  }

  /** One call waiting here. */
  private static final class Waiter<C> {
    final C caller;
    final InferenceRequest request;
    final long timeoutMs;
    final long deadlineNanos;
    final AtomicBoolean finished = new AtomicBoolean();
    volatile ScheduledFuture<?> deadline;

    Waiter(C caller, InferenceRequest request, long timeoutMs, long deadlineNanos) {
      this.caller = caller;
      this.request = request;
      this.timeoutMs = timeoutMs;
      this.deadlineNanos = deadlineNanos;
    }
  }

  private final long windowMicros;
  private final Wire<C> wire;
  /** The packing state; every use holds its lock. */
  private final CallPacker<Waiter<C>> packer;
  private final Map<String, Waiter<C>> waiting = new ConcurrentHashMap<>();
  private final ScheduledThreadPoolExecutor timer;
  private final String packIdPrefix = "pack-" + UUID.randomUUID().toString().substring(0, 8) + "-";
  private final AtomicLong packIds = new AtomicLong();

  /**
   * @param windowMicros longest a call waits in an open pack
   * @param wire how requests are sent and calls end
   * @param threadName the timer thread's name
   */
  public CallCoalescer(long windowMicros, Wire<C> wire, String threadName) {
    this(windowMicros, 1, wire, threadName);
  }

  /**
   * @param windowMicros longest a call waits in an open pack
   * @param depth requests of one kind in flight before calls wait for company ({@link CallPacker#CallPacker(int)})
   * @param wire how requests are sent and calls end
   * @param threadName the timer thread's name
   */
  public CallCoalescer(long windowMicros, int depth, Wire<C> wire, String threadName) {
    if (windowMicros < 0) {
      throw new IllegalArgumentException("windowMicros must be at least 0, got " + windowMicros);
    }
    this.packer = new CallPacker<>(depth);
    this.windowMicros = windowMicros;
    this.wire = wire;
    this.timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, threadName);
      t.setDaemon(true);
      return t;
    });
    timer.setRemoveOnCancelPolicy(true); // most deadlines are cancelled: do not keep them queued
  }

  /**
   * Takes one call: {@code request} is what it would send alone. Returns false when the call
   * cannot share a request under {@code rule} (its model fixes the first dimension, its inputs
   * cannot be stacked, it carries parameters), for the owner to send as before; otherwise the call
   * ends through {@link Wire#finish}, exactly once.
   *
   * @throws IllegalStateException when a call with this request id is already waiting here
   *     (its message says "already in flight")
   */
  public boolean offer(C caller, InferenceRequest request, PackRule rule, long timeoutMs) {
    if (request.getParameters() != null && !request.getParameters().isEmpty()) {
      return false;
    }
    CallPacker.Key key = CallPacker.key(request.getServiceModel(), request.getVersion(), request.getInputs(), request.getOutputs(), rule);
    if (key == null) {
      return false;
    }
    Waiter<C> w = new Waiter<>(caller, request, timeoutMs, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
    if (waiting.putIfAbsent(request.getId(), w) != null) {
      throw new IllegalStateException("a request with id " + request.getId() + " is already in flight");
    }
    CallPacker.Offer<Waiter<C>> offer;
    try {
      w.deadline = timer.schedule(() -> finish(w, null, new TimeoutException("no reply within " + timeoutMs + " ms")),
          timeoutMs, TimeUnit.MILLISECONDS);
      synchronized (packer) {
        offer = packer.offer(key, CallPacker.call(w, request.getInputs(), request.getOutputs(), rule, w.deadlineNanos), rule);
      }
    } catch (RejectedExecutionException e) { // closing: answered, never lost
      finish(w, null, new Closed());
      return true;
    }
    if (offer.opened() >= 0) {
      long number = offer.opened();
      try {
        timer.schedule(() -> {
          CallPacker.Pack<Waiter<C>> pack;
          synchronized (packer) {
            pack = packer.windowEnded(key, number);
          }
          send(pack);
        }, windowMicros, TimeUnit.MICROSECONDS);
      } catch (RejectedExecutionException e) {
        // closing: close() ends every call still held
      }
    }
    for (CallPacker.Pack<Waiter<C>> pack : offer.send()) {
      send(pack);
    }
    return true;
  }

  /** Calls held in open packs, not sent yet. */
  public int held() {
    synchronized (packer) {
      return packer.held();
    }
  }

  /** Calls waiting here: held in open packs or sent and not yet answered. */
  public int waiting() {
    return waiting.size();
  }

  /** Sends one pack handed out by the packer (null: nothing), then whatever its answer frees. */
  private void send(CallPacker.Pack<Waiter<C>> handedOut) {
    CallPacker.Pack<Waiter<C>> pack = handedOut;
    while (pack != null) {
      CallPacker.Pack<Waiter<C>> live = pack.keep(c -> !c.caller().finished.get());
      if (live != null && sendLive(live)) {
        return;
      }
      synchronized (packer) { // nothing went out: it is answered already
        pack = packer.answered(pack.key());
      }
    }
  }

  /** Sends one pack's request; false when nothing was sent (its calls were ended here). */
  private boolean sendLive(CallPacker.Pack<Waiter<C>> pack) {
    InferenceRequest first = pack.calls().get(0).caller().request;
    long timeoutMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(pack.deadlineNanos() - System.nanoTime()));
    List<C> callers = new ArrayList<>(pack.calls().size());
    for (CallPacker.Call<Waiter<C>> c : pack.calls()) {
      callers.add(c.caller().caller);
    }
    InferenceRequest request;
    try {
      request = pack.single() ? first : InferenceRequest.newBuilder()
          .setId(packIdPrefix + packIds.incrementAndGet())
          .setServiceModel(first.getServiceModel())
          .setVersion(first.getVersion())
          .setInputs(pack.inputs())
          .setOutputs(first.getOutputs())
          .build();
    } catch (RuntimeException e) { // one call's inputs do not stack: each goes as it would alone
      sendAlone(pack, "the pack could not be built: " + e.getMessage());
      return false;
    }
    CompletableFuture<InferenceReply> sent;
    try {
      sent = wire.send(request, timeoutMs, callers, pack.rows());
    } catch (RuntimeException e) { // answered, never lost
      log.warn("Could not send a request of {} calls of {}: {}", pack.calls().size(), first.getServiceModel(), e.toString());
      pack.calls().forEach(c -> finish(c.caller(), null, e));
      return false;
    }
    sent.whenComplete((reply, failure) -> {
      CallPacker.Pack<Waiter<C>> next;
      synchronized (packer) {
        next = packer.answered(pack.key());
      }
      try {
        land(pack, reply, failure);
      } finally {
        send(next);
      }
    });
    return true;
  }

  /** Answers every call of a pack from its request's outcome. */
  private void land(CallPacker.Pack<Waiter<C>> pack, InferenceReply reply, Throwable failure) {
    if (failure != null) {
      pack.calls().forEach(c -> finish(c.caller(), null, failure));
      return;
    }
    if (pack.single()) {
      finish(pack.calls().get(0).caller(), reply, null);
      return;
    }
    if (reply.getError() != null) {
      if (reply.getError().getCode() == ErrorCode.DEADLINE_EXCEEDED) {
        reply.setOutputs(List.of());
        pack.calls().forEach(c -> finish(c.caller(), own(reply, c.caller(), List.of()), null));
      } else {
        sendAlone(pack, reply.getError().getCode() + " " + reply.getError().getMessage());
      }
      return;
    }
    List<List<Tensor>> outputs;
    try {
      outputs = pack.split(reply.getOutputs());
    } catch (IllegalArgumentException e) {
      sendAlone(pack, e.getMessage());
      return;
    }
    reply.setOutputs(List.of()); // each call's reply is a copy of this one with its own rows: copy no one else's
    for (int i = 0; i < pack.calls().size(); i++) {
      Waiter<C> w = pack.calls().get(i).caller();
      finish(w, own(reply, w, outputs.get(i)), null);
    }
  }

  private static InferenceReply own(InferenceReply packReply, Waiter<?> w, List<Tensor> outputs) {
    return InferenceReply.newBuilder(packReply).setId(w.request.getId()).setOutputs(outputs).build();
  }

  /** Sends each call of a failed pack again as its own request, once; each is answered by its own reply. */
  private void sendAlone(CallPacker.Pack<Waiter<C>> pack, String why) {
    wire.splitting(pack.key().serviceModel(), pack.calls().size(), why);
    log.debug("A pack of {} calls of {} failed ({}); sending them one by one", pack.calls().size(), pack.key().serviceModel(), why);
    for (CallPacker.Call<Waiter<C>> c : pack.calls()) {
      Waiter<C> w = c.caller();
      if (w.finished.get()) {
        continue;
      }
      long leftMs = TimeUnit.NANOSECONDS.toMillis(w.deadlineNanos - System.nanoTime());
      if (leftMs <= 0) {
        finish(w, null, new TimeoutException("no reply within " + w.timeoutMs + " ms"));
        continue;
      }
      CallPacker.Pack<Waiter<C>> alone = new CallPacker.Pack<>(pack.key(), List.of(c));
      CompletableFuture<InferenceReply> sent;
      try {
        sent = wire.send(w.request, leftMs, List.of(w.caller), c.rows());
      } catch (RuntimeException e) {
        sent = CompletableFuture.failedFuture(e);
      }
      sent.whenComplete((reply, failure) -> land(alone, reply, failure));
    }
  }

  /** Ends one call, once: forgets it, cancels its deadline, then hands it to the owner. */
  private void finish(Waiter<C> w, InferenceReply reply, Throwable failure) {
    if (!w.finished.compareAndSet(false, true)) {
      return; // ended already (its deadline, or a late reply)
    }
    waiting.remove(w.request.getId(), w);
    ScheduledFuture<?> deadline = w.deadline;
    if (deadline != null) {
      deadline.cancel(false);
    }
    try {
      wire.finish(w.caller, reply, failure);
    } catch (RuntimeException e) {
      log.error("Ending call {} failed", w.request.getId(), e);
    }
  }

  /** Stops the timer and ends every call still held or waiting with {@link Closed}. */
  @Override
  public void close() {
    timer.shutdownNow();
    synchronized (packer) {
      packer.drain();
    }
    Closed closing = new Closed();
    for (Waiter<C> w : waiting.values()) {
      finish(w, null, closing);
    }
  }
}
