package io.partita.gateway.kafka;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Produces a request to its service model's topic and returns the future of its reply. The waiter
 * is registered before the record is produced (so a fast reply is never missed) and removed when
 * the future completes in any way: reply, deadline, or a produce failure.
 */
public final class RequestProducer {
  private final Producer<String, byte[]> producer;
  private final ReplyRouter router;
  private final Topics topics;
  private final String replyTopic;
  private final LongSupplier clock;
  private final RecordCodec<InferenceRequest> codec;

  public RequestProducer(Producer<String, byte[]> producer, ReplyRouter router, Topics topics, String replyTopic, Codecs codecs, LongSupplier clock) {
    this.codec = codecs.codec(InferenceRequest.class);
    this.producer = producer;
    this.router = router;
    this.topics = topics;
    this.replyTopic = replyTopic;
    this.clock = clock;
  }

  public CompletableFuture<InferenceReply> send(InferenceRequest request, long timeoutMs, String traceparent) {
    String id = request.getId();
    CompletableFuture<InferenceReply> reply = router.expect(id);
    CompletableFuture<InferenceReply> result = reply.orTimeout(timeoutMs, TimeUnit.MILLISECONDS)
        .whenComplete((r, e) -> router.forget(id));
    try {
      String topic = topics.requests(request.getServiceModel());
      ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, id, codec.encode(topic, request));
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
