package io.partita.gateway.kafka;

import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.gateway.routing.NotRoutableException;
import io.partita.gateway.routing.Routing;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;

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
  private final Topics topics;
  private final String replyTopic;
  private final LongSupplier clock;
  private final RecordCodec<InferenceRequest> codec;
  private final Routing routing;
  private final Function<String, String> baseModelOf;

  /**
   * @param baseModelOf the base model of a service model (the service model itself for a model
   *     served without weight files)
   */
  public RequestProducer(Producer<String, byte[]> producer, ReplyRouter router, Topics topics, String replyTopic, Codecs codecs,
      Routing routing, Function<String, String> baseModelOf, LongSupplier clock) {
    this.baseModelOf = baseModelOf;
    this.codec = codecs.codec(InferenceRequest.class);
    this.routing = routing;
    this.producer = producer;
    this.router = router;
    this.topics = topics;
    this.replyTopic = replyTopic;
    this.clock = clock;
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
      target = routing.choose(request.getServiceModel());
    } catch (NotRoutableException e) {
      return CompletableFuture.completedFuture(InferenceReply.newBuilder().setId(request.getId())
          .setServiceModel(request.getServiceModel()).setModelVersion(null)
          .setError(new InferenceError(ErrorCode.NOT_READY, e.getMessage())).build());
    }
    return send(request, timeoutMs, traceparent, target);
  }

  /** Sends to a target already chosen by {@link #routing()} (online calls choose before taking a slot). */
  public CompletableFuture<InferenceReply> send(InferenceRequest request, long timeoutMs, String traceparent, Routing.Target target) {
    String id = request.getId();
    CompletableFuture<InferenceReply> reply = router.expect(id);
    // Async: whoever waits on the answer (an HTTP write, a job result) runs on the router's answer
    // threads, not on the reply loop's thread or the JVM's one timeout thread.
    CompletableFuture<InferenceReply> result = reply.orTimeout(timeoutMs, TimeUnit.MILLISECONDS)
        .whenCompleteAsync((r, e) -> router.forget(id), router.answers());
    try {
      String topic = topics.requests(baseModelOf.apply(request.getServiceModel()));
      ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, target.partition(), id, codec.encode(topic, request));
      KafkaHeaders.put(record.headers(), KafkaHeaders.SERVICE_MODEL, request.getServiceModel());
      KafkaHeaders.put(record.headers(), KafkaHeaders.CORRELATION_ID, id);
      KafkaHeaders.put(record.headers(), KafkaHeaders.REPLY_TO, replyTopic);
      KafkaHeaders.put(record.headers(), KafkaHeaders.DEADLINE, Long.toString(clock.getAsLong() + timeoutMs));
      KafkaHeaders.put(record.headers(), KafkaHeaders.TRACEPARENT, traceparent);
      producer.send(record, (metadata, failure) -> {
        if (failure != null) {
          reply.completeExceptionally(failure);
        }
      });
    } catch (RuntimeException e) {
      reply.completeExceptionally(e);
    }
    return result;
  }

  public int inFlight() {
    return router.inFlight();
  }
}
