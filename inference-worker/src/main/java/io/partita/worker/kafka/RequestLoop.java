package io.partita.worker.kafka;

import io.partita.avro.DeadLetter;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.kafka.DeadLetters;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.schemas.DecodeException;
import io.partita.worker.serving.ModelServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The worker's consumer-to-producer loop over the request topics. For every record it produces
 * exactly one answer before the record's offset is committed: the reply (result or error) to the
 * record's {@code reply-to} topic, or, when the record cannot be decoded, a dead letter plus an
 * error reply if a {@code reply-to} header says where. Offsets are committed only after the broker
 * acknowledged every answer of the poll (at-least-once; a worker that dies mid-poll leaves the
 * records to the next owner, whose replies carry the same correlation ids).
 *
 * <p>Infrastructure faults (a reply the broker refuses, a fenced producer) are not dead-lettered:
 * the loop stops and the failure is reported through {@link #failure()}.
 */
public final class RequestLoop implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(RequestLoop.class);

  private final Consumer<String, byte[]> consumer;
  private final Producer<String, byte[]> producer;
  private final ModelServer server;
  private final Topics topics;
  private final LongSupplier clock;
  private final RecordCodec<InferenceRequest> requests;
  private final RecordCodec<InferenceReply> replies;
  private final RecordCodec<DeadLetter> deadLetters;
  private volatile boolean running = true;
  private volatile Throwable failure;

  public RequestLoop(Consumer<String, byte[]> consumer, Producer<String, byte[]> producer, ModelServer server, Topics topics, Codecs codecs, LongSupplier clock) {
    this.requests = codecs.codec(InferenceRequest.class);
    this.replies = codecs.codec(InferenceReply.class);
    this.deadLetters = codecs.codec(DeadLetter.class);
    this.consumer = consumer;
    this.producer = producer;
    this.server = server;
    this.topics = topics;
    this.clock = clock;
  }

  @Override
  public void run() {
    try {
      consumer.subscribe(topics.requestTopicPattern());
      while (running) {
        ConsumerRecords<String, byte[]> records = consumer.poll(Duration.ofMillis(200));
        if (records.isEmpty()) {
          continue;
        }
        List<Future<RecordMetadata>> sent = new ArrayList<>(records.count());
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (ConsumerRecord<String, byte[]> record : records) {
          handle(record, sent);
          offsets.put(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1));
        }
        producer.flush();
        for (Future<RecordMetadata> future : sent) {
          future.get(); // a reply the broker refused stops the loop before anything is committed
        }
        consumer.commitSync(offsets);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      failure = e.getCause();
      log.error("A reply could not be written; stopping the request loop without committing", e.getCause());
    } catch (RuntimeException e) {
      failure = e;
      log.error("Request loop failed", e);
    } finally {
      consumer.close(Duration.ofSeconds(5));
    }
  }

  private void handle(ConsumerRecord<String, byte[]> record, List<Future<RecordMetadata>> sent) {
    String replyTo = KafkaHeaders.get(record.headers(), KafkaHeaders.REPLY_TO);
    String correlation = KafkaHeaders.get(record.headers(), KafkaHeaders.CORRELATION_ID);
    String serviceModel = topics.serviceModelOf(record.topic());
    InferenceRequest request;
    try {
      request = requests.decode(record.topic(), record.value());
    } catch (DecodeException e) {
      deadLetter(record, e, sent);
      if (replyTo != null) {
        String id = correlation != null ? correlation : record.key() != null ? record.key() : "unknown";
        reply(record, replyTo, id, ModelServer.errorReply(id, serviceModel, null, ErrorCode.BAD_INPUT,
            "the record is not an InferenceRequest in Avro single-object encoding; it was dead-lettered", null), sent);
      }
      return;
    }
    String id = correlation != null ? correlation : request.getId();
    if (replyTo == null) {
      deadLetter(record, new IllegalArgumentException("request " + request.getId() + " has no reply-to header"), sent);
      return;
    }
    MDC.put("request", id);
    MDC.put("model", request.getServiceModel());
    try {
      InferenceReply reply;
      Long deadline = parseDeadline(KafkaHeaders.get(record.headers(), KafkaHeaders.DEADLINE));
      if (!request.getServiceModel().equals(serviceModel)) {
        reply = server.error(request, null, ErrorCode.BAD_INPUT,
            "serviceModel '" + request.getServiceModel() + "' does not match the topic " + record.topic());
      } else if (deadline != null && clock.getAsLong() > deadline) {
        reply = server.error(request, null, ErrorCode.DEADLINE_EXCEEDED, "the deadline passed before the request could run");
      } else {
        long queued = Math.max(0, clock.getAsLong() - record.timestamp());
        reply = server.infer(request);
        reply.setQueueMicros(queued * 1000);
      }
      reply.setId(request.getId());
      reply(record, replyTo, id, reply, sent);
    } finally {
      MDC.remove("request");
      MDC.remove("model");
    }
  }

  private static Long parseDeadline(String header) {
    if (header == null) {
      return null;
    }
    try {
      return Long.parseLong(header.strip());
    } catch (NumberFormatException e) {
      return null; // an unreadable deadline is ignored, not fatal: the request still gets its reply
    }
  }

  private void reply(ConsumerRecord<String, byte[]> source, String replyTo, String correlation, InferenceReply reply, List<Future<RecordMetadata>> sent) {
    ProducerRecord<String, byte[]> out;
    try {
      out = new ProducerRecord<>(replyTo, reply.getId(), replies.encode(replyTo, reply));
      KafkaHeaders.put(out.headers(), KafkaHeaders.CORRELATION_ID, correlation);
      KafkaHeaders.put(out.headers(), KafkaHeaders.TRACEPARENT, KafkaHeaders.get(source.headers(), KafkaHeaders.TRACEPARENT));
      sent.add(producer.send(out));
    } catch (InvalidTopicException e) {
      deadLetter(source, new IllegalArgumentException("reply-to '" + replyTo + "' is not a valid topic"), sent);
    }
  }

  private void deadLetter(ConsumerRecord<String, byte[]> record, Exception error, List<Future<RecordMetadata>> sent) {
    log.warn("Dead-lettering {}-{}@{}: {}", record.topic(), record.partition(), record.offset(), error.getMessage());
    byte[] value = deadLetters.encode(topics.deadLetter(), DeadLetters.of(record, error, "worker", clock.getAsLong()));
    String key = record.key() == null ? null : record.key();
    ProducerRecord<String, byte[]> out = new ProducerRecord<>(topics.deadLetter(), key, value);
    out.headers().add("source-topic", record.topic().getBytes(StandardCharsets.UTF_8));
    sent.add(producer.send(out));
  }

  public Throwable failure() {
    return failure;
  }

  /**
   * Asks the loop to stop after the poll in progress; its answers are still sent and committed.
   * (No consumer wakeup: it could interrupt the commit of answers already sent.)
   */
  public void stop() {
    running = false;
  }
}
