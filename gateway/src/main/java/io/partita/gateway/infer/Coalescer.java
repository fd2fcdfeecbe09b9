package io.partita.gateway.infer;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.coalescing.CallCoalescer;
import io.partita.common.packing.PackRule;
import io.partita.gateway.kafka.RequestProducer;
import io.partita.gateway.limits.Capacity;
import io.partita.gateway.metrics.GatewayMetrics;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.refusal.SafeText;
import io.partita.gateway.routing.Routing;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The gateway's online calls batched on the wire: concurrent infer calls of one service model that
 * can share a request travel as one request record, and each caller is answered with its own rows.
 * What shares a request, when a pack leaves and how a failed pack is sent again call by call is
 * {@link CallCoalescer}'s (the mechanism {@code PartitaClient} uses too); this class adds what is
 * the gateway's.
 *
 * <ul>
 *   <li>The rule: a model packs when its signature gives every input and output a dynamic first
 *       dimension ({@link PackRule}), up to {@code gateway.coalesce.max.rows} and the record byte
 *       limits, for at most {@code gateway.coalesce.window.us}.</li>
 *   <li>Each call keeps its own in-flight slot ({@link Capacity}, taken by {@link InferService} and
 *       given back here when the call ends), its own {@link ServerTiming} stamps (producing when it
 *       reached the coalescer, so time held waiting for company counts in {@code produce}; produced
 *       when its request was handed to the producer; replied when its answer came), and its own
 *       refusal: an error reply, a deadline or a produce failure becomes a {@link Refusal}.</li>
 *   <li>A pack's request goes to the partition drawn for its first call and carries that call's
 *       trace context. The partition a routing draws is one choice among equals, made to spread
 *       calls, so calls drawn to different partitions still share a pack.</li>
 * </ul>
 *
 * <p>Not done: the batch size of the slot a pack reaches is not known to the gateway (routes do not
 * carry it), so packs are bounded by {@code gateway.coalesce.max.rows}.
 */
public final class Coalescer implements AutoCloseable {

  /**
   * How online calls are packed.
   *
   * @param maxRows most rows one request carries ({@code gateway.coalesce.max.rows})
   * @param maxBytes most tensor bytes one request carries, inputs or expected outputs (the record
   *     limits the gateway derives for batch jobs too)
   * @param windowMicros longest a call waits in an open pack ({@code gateway.coalesce.window.us})
   */
  public record Settings(int maxRows, long maxBytes, long windowMicros) {}

  /** One call, as the gateway knows it. */
  private record Call(InferService.Submit submit, long timeoutMs, Routing.Target target, ServerTiming timing,
                      CompletableFuture<InferenceReply> answer) {}

  private final Settings settings;
  private final RequestProducer requests;
  private final Capacity capacity;
  private final GatewayMetrics metrics;
  private final CallCoalescer<Call> calls;

  public Coalescer(Settings settings, RequestProducer requests, Capacity capacity, GatewayMetrics metrics) {
    this.settings = settings;
    this.requests = requests;
    this.capacity = capacity;
    this.metrics = metrics;
    this.calls = new CallCoalescer<>(settings.windowMicros(), new CallCoalescer.Wire<>() {
      @Override
      public CompletableFuture<InferenceReply> send(InferenceRequest request, long timeoutMs, List<Call> callers, int rows) {
        return sendFor(request, timeoutMs, callers, rows);
      }

      @Override
      public void finish(Call call, InferenceReply reply, Throwable failure) {
        end(call, reply, failure);
      }

      @Override
      public void splitting(String serviceModel, int count, String why) {
        metrics.onlinePackSplit(serviceModel);
      }
    }, "partita-coalescer");
  }

  /**
   * Takes a checked call whose in-flight slot is held and its request as it would go alone;
   * returns its answer (a reply, or a {@link Refusal}; the slot is given back before it completes),
   * or null when the call cannot share a request (its model fixes the first dimension, its inputs
   * cannot be stacked), for the caller to send as before.
   *
   * @throws IllegalStateException when a call with this request id is already waiting here
   */
  public CompletableFuture<InferenceReply> offer(InferService.Submit s, InferenceRequest request, long timeoutMs, Routing.Target target,
      ServerTiming timing) {
    PackRule rule = new PackRule(s.model().version().signature(), settings.maxRows(), settings.maxBytes());
    if (!rule.packs()) {
      return null;
    }
    Call call = new Call(s, timeoutMs, target, timing, new CompletableFuture<>());
    return calls.offer(call, request, rule, timeoutMs) ? call.answer() : null;
  }

  private CompletableFuture<InferenceReply> sendFor(InferenceRequest request, long timeoutMs, List<Call> callers, int rows) {
    Call first = callers.get(0);
    metrics.onlineRequest(request.getServiceModel(), callers.size(), rows);
    try {
      return requests.send(request, timeoutMs, first.submit().traceparent(), first.target());
    } finally {
      for (Call c : callers) {
        if (c.timing() != null) {
          c.timing().produced();
        }
      }
    }
  }

  /** Answers one call (the coalescer ends each once): stamps it, gives its slot back, then completes its future. */
  private void end(Call call, InferenceReply reply, Throwable failure) {
    if (call.timing() != null) {
      call.timing().replied();
    }
    capacity.releaseOnline();
    if (failure instanceof CallCoalescer.Closed) {
      call.answer().completeExceptionally(new Refusal(Kind.NOT_READY, "the gateway is closing"));
    } else if (failure != null) {
      call.answer().completeExceptionally(InferService.failed(failure, call.submit().requestId(), call.timeoutMs()));
    } else if (reply.getError() != null) {
      call.answer().completeExceptionally(new Refusal(Kind.of(reply.getError().getCode()), SafeText.clean(reply.getError().getMessage())));
    } else {
      call.answer().complete(reply);
    }
  }

  /** Stops the timer and answers every call still held or waiting (NOT_READY: the gateway is closing). */
  @Override
  public void close() {
    calls.close();
  }
}
