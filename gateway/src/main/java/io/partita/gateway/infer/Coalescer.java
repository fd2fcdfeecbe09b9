package io.partita.gateway.infer;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.gateway.kafka.RequestProducer;
import io.partita.gateway.limits.Capacity;
import io.partita.gateway.metrics.GatewayMetrics;
import io.partita.gateway.packing.CallPacker;
import io.partita.gateway.packing.PackRule;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.refusal.SafeText;
import io.partita.gateway.routing.Routing;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Online calls batched on the wire: concurrent infer calls of one service model that can share a
 * request ({@link CallPacker} decides which, and when) travel as one request record, their rows
 * stacked; the reply's outputs are cut back per call and each caller is answered with its own
 * reply (its own id, its own rows). Per-record costs (the producer's send, the broker's append and
 * fetch, the worker's decode, the reply's produce and fetch) are then paid once per pack instead of
 * once per call, which is what an online call mostly costs at high concurrency.
 *
 * <p>Why this design: a call goes at once, alone, when nothing of its kind is in flight, so at low
 * load nothing waits and the record is the call's own request, unchanged. Calls are collected only
 * while an earlier request of the same kind is on its way (Nagle's rule): then there is a request
 * to overlap with anyway, and the open pack leaves when the earlier one is answered, when it is
 * full ({@code gateway.coalesce.max.rows}, the record byte limit), or at the latest
 * {@code gateway.coalesce.window.us} after it opened, so no call is held longer than the window. A
 * fixed linger on every call would add its window at low load too; holding until a reply with no
 * bound would tie a call's latency to another call's model time.
 *
 * <p>Each call keeps what it had alone: its own in-flight slot ({@link Capacity}, taken by
 * {@link InferService} and given back here when the call ends), its own deadline (it fails with
 * DEADLINE_EXCEEDED at its own time, whatever its pack does; a reply that comes later is ignored
 * for it; a pack's request carries the latest deadline of its calls), its own {@link ServerTiming}
 * stamps (producing when it reached the coalescer, so time held waiting for company counts in
 * {@code produce}; produced when its request was handed to the producer; replied when its answer
 * came), and its own refusals: inputs are checked per call before they get here, and a pack answered
 * with an error other than DEADLINE_EXCEEDED, or whose outputs cannot be cut back per row, is sent
 * again one call per request, once, so a bad call fails only itself. A pack's request carries the
 * trace context of its first call.
 *
 * <p>Not done: the batch size of the slot a pack reaches is not known to the gateway (routes do not
 * carry it), so packs are bounded by {@code gateway.coalesce.max.rows}.
 */
public final class Coalescer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Coalescer.class);

  /**
   * How online calls are packed.
   *
   * @param maxRows most rows one request carries ({@code gateway.coalesce.max.rows})
   * @param maxBytes most tensor bytes one request carries, inputs or expected outputs (the record
   *     limits the gateway derives for batch jobs too)
   * @param windowMicros longest a call waits in an open pack ({@code gateway.coalesce.window.us})
   */
  public record Settings(int maxRows, long maxBytes, long windowMicros) {}

  /** One call waiting in the coalescer. */
  private static final class Waiter {
    final InferService.Submit submit;
    final long timeoutMs;
    final Routing.Target target;
    final ServerTiming timing;
    final CompletableFuture<InferenceReply> answer = new CompletableFuture<>();
    final AtomicBoolean finished = new AtomicBoolean();
    volatile ScheduledFuture<?> deadline;
    long deadlineNanos;

    Waiter(InferService.Submit submit, long timeoutMs, Routing.Target target, ServerTiming timing) {
      this.submit = submit;
      this.timeoutMs = timeoutMs;
      this.target = target;
      this.timing = timing;
    }
  }

  private final Settings settings;
  private final RequestProducer requests;
  private final Capacity capacity;
  private final GatewayMetrics metrics;
  /** The packing state; every use holds its lock. */
  private final CallPacker<Waiter> packer = new CallPacker<>();
  private final Map<String, Waiter> waiting = new ConcurrentHashMap<>();
  /** Windows and deadlines: short tasks only (a window's pack is handed to the producer here). */
  private final ScheduledThreadPoolExecutor timer;
  private final String packIdPrefix = "pack-" + UUID.randomUUID().toString().substring(0, 8) + "-";
  private final AtomicLong packIds = new AtomicLong();

  public Coalescer(Settings settings, RequestProducer requests, Capacity capacity, GatewayMetrics metrics) {
    this.settings = settings;
    this.requests = requests;
    this.capacity = capacity;
    this.metrics = metrics;
    this.timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "partita-coalescer");
      t.setDaemon(true);
      return t;
    });
    timer.setRemoveOnCancelPolicy(true); // most deadlines are cancelled: do not keep them queued
  }

  /**
   * Takes a checked call whose in-flight slot is held; returns its answer (a reply, or a
   * {@link Refusal}; the slot is given back before it completes), or null when the call cannot
   * share a request (its model fixes the first dimension, its inputs cannot be stacked), for the
   * caller to send as before.
   *
   * @throws IllegalStateException when a call with this request id is already waiting here
   */
  public CompletableFuture<InferenceReply> offer(InferService.Submit s, long timeoutMs, Routing.Target target, ServerTiming timing) {
    PackRule rule = new PackRule(s.model().version().signature(), settings.maxRows(), settings.maxBytes());
    String version = InferService.pinnedVersion(s);
    // The partition a routing draws (a pinned version's) is one choice among equals, made to spread
    // calls: calls drawn to different partitions still share a pack, which goes where its first was drawn.
    CallPacker.Key key = CallPacker.key(s.model().service().name(), version, s.inputs(), s.outputs(), rule);
    if (key == null) {
      return null;
    }
    Waiter w = new Waiter(s, timeoutMs, target, timing);
    if (waiting.putIfAbsent(s.requestId(), w) != null) {
      throw new IllegalStateException("a request with id " + s.requestId() + " is already in flight");
    }
    if (timing != null) {
      timing.producing();
    }
    w.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    CallPacker.Offer<Waiter> offer;
    try {
      w.deadline = timer.schedule(() -> finish(w, null, deadlineExceeded(timeoutMs)), timeoutMs, TimeUnit.MILLISECONDS);
      synchronized (packer) {
        offer = packer.offer(key, CallPacker.call(w, s.inputs(), s.outputs(), rule, w.deadlineNanos), rule);
      }
    } catch (RejectedExecutionException e) { // closing: answered, never lost
      finish(w, null, new Refusal(Kind.NOT_READY, "the gateway is closing"));
      return w.answer;
    }
    if (offer.opened() >= 0) {
      long number = offer.opened();
      try {
        timer.schedule(() -> {
          CallPacker.Pack<Waiter> pack;
          synchronized (packer) {
            pack = packer.windowEnded(key, number);
          }
          send(pack);
        }, settings.windowMicros(), TimeUnit.MICROSECONDS);
      } catch (RejectedExecutionException e) {
        // closing: close() answers every call still held
      }
    }
    for (CallPacker.Pack<Waiter> pack : offer.send()) {
      send(pack);
    }
    return w.answer;
  }

  /** Sends one pack handed out by the packer (null: nothing), then whatever its answer frees. */
  private void send(CallPacker.Pack<Waiter> handedOut) {
    CallPacker.Pack<Waiter> pack = handedOut;
    while (pack != null) {
      CallPacker.Pack<Waiter> live = pack.keep(c -> !c.caller().finished.get());
      if (live != null && sendLive(live)) {
        return;
      }
      synchronized (packer) { // nothing went out: it is answered already
        pack = packer.answered(pack.key());
      }
    }
  }

  /** Produces one pack's request; false when nothing was produced (its calls were failed here). */
  private boolean sendLive(CallPacker.Pack<Waiter> pack) {
    Waiter first = pack.calls().get(0).caller();
    InferService.Submit s = first.submit;
    long timeoutMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(pack.deadlineNanos() - System.nanoTime()));
    InferenceRequest request;
    try {
      request = InferenceRequest.newBuilder()
          .setId(pack.single() ? s.requestId() : packIdPrefix + packIds.incrementAndGet())
          .setServiceModel(s.model().service().name())
          .setVersion(pack.key().version())
          .setInputs(pack.single() ? s.inputs() : pack.inputs())
          .setOutputs(s.outputs())
          .build();
    } catch (RuntimeException e) { // a gateway fault, not the callers': answer them rather than lose them
      log.error("Could not build the request of a pack of {} calls of {}", pack.calls().size(), s.model().service().name(), e);
      pack.calls().forEach(c -> finish(c.caller(), null, new Refusal(Kind.INTERNAL, "the request could not be built; see the gateway log")));
      return false;
    }
    metrics.onlineRequest(s.model().service().name(), pack.calls().size(), pack.rows());
    CompletableFuture<InferenceReply> sent;
    try {
      sent = requests.send(request, timeoutMs, s.traceparent(), first.target);
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    for (CallPacker.Call<Waiter> c : pack.calls()) {
      if (c.caller().timing != null) {
        c.caller().timing.produced();
      }
    }
    sent.whenComplete((reply, failure) -> {
      CallPacker.Pack<Waiter> next;
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
  private void land(CallPacker.Pack<Waiter> pack, InferenceReply reply, Throwable failure) {
    if (failure != null) {
      for (CallPacker.Call<Waiter> c : pack.calls()) {
        finish(c.caller(), null, InferService.failed(failure, c.caller().submit.requestId(), c.caller().timeoutMs));
      }
      return;
    }
    if (reply.getError() != null) {
      if (pack.single() || reply.getError().getCode() == ErrorCode.DEADLINE_EXCEEDED) {
        Refusal refused = new Refusal(Kind.of(reply.getError().getCode()), SafeText.clean(reply.getError().getMessage()));
        pack.calls().forEach(c -> finish(c.caller(), null, refused));
      } else {
        sendAlone(pack, reply.getError().getCode() + " " + SafeText.clean(reply.getError().getMessage()));
      }
      return;
    }
    if (pack.single()) {
      finish(pack.calls().get(0).caller(), reply, null);
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
      Waiter w = pack.calls().get(i).caller();
      finish(w, InferenceReply.newBuilder(reply).setId(w.submit.requestId()).setOutputs(outputs.get(i)).build(), null);
    }
  }

  /** Sends each call of a failed pack again as its own request, once; each is answered by its own reply. */
  private void sendAlone(CallPacker.Pack<Waiter> pack, String why) {
    metrics.onlinePackSplit(pack.key().serviceModel());
    log.debug("A pack of {} calls of {} failed ({}); sending them one by one", pack.calls().size(), pack.key().serviceModel(), why);
    for (CallPacker.Call<Waiter> c : pack.calls()) {
      Waiter w = c.caller();
      if (w.finished.get()) {
        continue;
      }
      long leftMs = TimeUnit.NANOSECONDS.toMillis(w.deadlineNanos - System.nanoTime());
      if (leftMs <= 0) {
        finish(w, null, deadlineExceeded(w.timeoutMs));
        continue;
      }
      CallPacker.Pack<Waiter> alone = new CallPacker.Pack<>(pack.key(), List.of(c));
      InferService.Submit s = w.submit;
      InferenceRequest request = InferenceRequest.newBuilder().setId(s.requestId()).setServiceModel(s.model().service().name())
          .setVersion(pack.key().version()).setInputs(s.inputs()).setOutputs(s.outputs()).build();
      metrics.onlineRequest(s.model().service().name(), 1, c.rows());
      CompletableFuture<InferenceReply> sent;
      try {
        sent = requests.send(request, leftMs, s.traceparent(), w.target);
      } catch (RuntimeException e) {
        sent = CompletableFuture.failedFuture(e);
      }
      sent.whenComplete((reply, failure) -> land(alone, reply, failure));
    }
  }

  /** Answers one call, once: stamps it, gives its slot back, then completes its future. */
  private void finish(Waiter w, InferenceReply reply, Refusal refused) {
    if (!w.finished.compareAndSet(false, true)) {
      return; // answered already (its deadline, or a late reply)
    }
    waiting.remove(w.submit.requestId(), w);
    ScheduledFuture<?> deadline = w.deadline;
    if (deadline != null) {
      deadline.cancel(false);
    }
    if (w.timing != null) {
      w.timing.replied();
    }
    capacity.releaseOnline();
    if (refused != null) {
      w.answer.completeExceptionally(refused);
    } else {
      w.answer.complete(reply);
    }
  }

  private static Refusal deadlineExceeded(long timeoutMs) {
    return new Refusal(Kind.DEADLINE_EXCEEDED, "no reply before the deadline (" + timeoutMs + " ms); the request may still run");
  }

  /** Stops the timer and answers every call still held or waiting (NOT_READY: the gateway is closing). */
  @Override
  public void close() {
    timer.shutdownNow();
    synchronized (packer) {
      packer.drain();
    }
    Refusal closing = new Refusal(Kind.NOT_READY, "the gateway is closing");
    for (Waiter w : waiting.values()) {
      finish(w, null, closing);
    }
  }
}
