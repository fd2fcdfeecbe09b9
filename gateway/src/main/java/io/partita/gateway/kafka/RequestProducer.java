package io.partita.gateway.kafka;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.Topic;
import io.partita.gateway.routing.NotRoutableException;
import io.partita.gateway.routing.Routing;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;

/**
 * Produces a request to the topic of its service model's base model (one topic per base model; the
 * record and the {@code service-model} header name the service model) and returns the future of
 * its reply. The waiter
 * is registered before the record is produced (so a fast reply is never missed) and removed when
 * the future completes in any way: reply, deadline, or a produce failure. Where the record goes
 * (which partition, so which instance) is the {@link Routing}'s choice.
 */
public final class RequestProducer {
  private final Producer<String, byte[]> producer;
  private final ReplyRouter router;
  private final Routing routing;
  private final Function<String, Topic<InferenceRequest>> requestTopicOf;

  /**
   * @param requestTopicOf the request topic of a service model: its base model's (the service
   *     model's own for a model served without weight files), from {@code Topics.requests}
   */
  public RequestProducer(Producer<String, byte[]> producer, ReplyRouter router, Routing routing,
      Function<String, Topic<InferenceRequest>> requestTopicOf) {
    this.requestTopicOf = requestTopicOf;
    this.routing = routing;
    this.producer = producer;
    this.router = router;
  }

  public Routing routing() {
    return routing;
  }

  /**
   * Routes, then sends (batch job items). A request with nowhere to go is not produced: its future
   * completes at once with a {@code NOT_READY} error reply that says why.
   */
  public CompletableFuture<InferenceReply> send(InferenceRequest request, long timeoutMs, String traceparent) {
    Routing.Target target;
    try {
      target = routing.choose(request.getServiceModel(), request.getVersion());
    } catch (NotRoutableException e) {
      return CompletableFuture.completedFuture(InferenceReply.newBuilder().setId(request.getId())
          .setServiceModel(request.getServiceModel()).setModelVersion(null)
          .setError(new InferenceError(ErrorCode.NOT_READY, e.getMessage())).build());
    }
    return send(request, timeoutMs, traceparent, target);
  }

  /**
   * Sends to a target already chosen by {@link #routing()} (online calls choose before taking a
   * slot). Whoever waits on the answer (an HTTP write, a job result) runs on the router's answer
   * threads, not on the reply loop's thread or the JVM's one timeout thread.
   */
  public CompletableFuture<InferenceReply> send(InferenceRequest request, long timeoutMs, String traceparent, Routing.Target target) {
    Topic<InferenceRequest> topic = requestTopicOf.apply(request.getServiceModel());
    return router.calls().send(producer, topic, target.partition(), request, timeoutMs, traceparent);
  }

  public int inFlight() {
    return router.inFlight();
  }
}
