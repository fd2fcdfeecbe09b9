package io.partita.bench;

import io.partita.avro.InferenceReply;
import io.partita.avro.Tensor;
import io.partita.common.KafkaHeaders;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.kafka.KafkaClients;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.serde.Codecs;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;

/**
 * The yardstick of the request path: what Kafka itself allows with the same clients on the same
 * cores. Two loops, each a plain consumer in its own group with the worker's request-consumer
 * settings ({@code max.poll.records} 256, manual commits after each poll) and a producer made as every
 * Partita producer is ({@link KafkaClients#producer}):
 *
 * <ul>
 *   <li>{@link #echo}: reads a request topic and, for each record, produces a reply to the topic its
 *       {@code reply-to} header names, the {@code correlation-id} header copied and the value a reply
 *       encoded once before the run. No decoding, no model, no batching: a Partita client sending to
 *       it completes its calls exactly as it does against a worker (its pending calls match replies
 *       by that header), so the client, the broker and the loads are the same and only the worker is
 *       missing.
 *   <li>{@link #hop}: the raw one-way hop. A call produces a record and completes when the loop's
 *       consumer reads it back (produce, broker append, fetch), no reply.
 * </ul>
 */
final class KafkaEcho implements AutoCloseable {
  /** The base-model name the echo's request topic is made for; no worker serves it. */
  static final String ECHO_MODEL = "bare-echo";

  private final KafkaConsumer<String, byte[]> consumer;
  private final KafkaProducer<String, byte[]> producer;
  private final Thread loop;
  private final String topic;
  private final AtomicLong echoed = new AtomicLong();
  private final Map<String, CompletableFuture<Void>> hops = new ConcurrentHashMap<>();
  private final AtomicLong hopSeq = new AtomicLong();
  private final byte[] reply;
  private final boolean echo;
  private volatile boolean running = true;

  private KafkaEcho(String bootstrap, Properties settings, String topic, boolean echo, byte[] reply) {
    this.topic = topic;
    this.echo = echo;
    this.reply = reply;
    Properties c = KafkaClients.consumer(bootstrap, settings);
    c.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-" + (echo ? "echo" : "hop"));
    c.put(ConsumerConfig.CLIENT_ID_CONFIG, "bench-" + (echo ? "echo" : "hop"));
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
    c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "256");
    // The worker's request consumer is made from the plain settings, with Kafka's fetch wait of 500 ms.
    c.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, Long.toString(KafkaClients.IDLE_FETCH_WAIT_MS));
    consumer = new KafkaConsumer<>(c);
    producer = new KafkaProducer<>(KafkaClients.producer(bootstrap, settings));
    loop = new Thread(this::run, "bench-" + (echo ? "echo" : "hop"));
    loop.setDaemon(true);
  }

  /**
   * Starts an echo of {@code <prefix>.requests.bare-echo}, made with as many partitions as
   * {@code likeTopic} (the request topic of the model it stands beside); returns once its consumer
   * owns them, so no request sent after is missed.
   *
   * @param outputs the reply's outputs, encoded once: the model's own reply to one call, so the echo's
   *     reply is as big as the worker's
   */
  static KafkaEcho echo(String bootstrap, Properties settings, String prefix, String likeTopic, List<Tensor> outputs)
      throws Exception {
    Topics topics = new Topics(prefix);
    String topic = topics.requests(ECHO_MODEL);
    InferenceReply answer = InferenceReply.newBuilder().setId("echo").setServiceModel(ECHO_MODEL).setModelVersion("1")
        .setOutputs(outputs).setError(null).build();
    byte[] value = topics.replies("echo", Codecs.singleObject()).encode(answer);
    return start(bootstrap, settings, topic, likeTopic, true, value);
  }

  /** Starts a one-way hop over {@code <prefix>.bench.hop}, partitioned as {@code likeTopic}. */
  static KafkaEcho hop(String bootstrap, Properties settings, String prefix, String likeTopic) throws Exception {
    return start(bootstrap, settings, prefix + ".bench.hop", likeTopic, false, null);
  }

  private static KafkaEcho start(String bootstrap, Properties settings, String topic, String likeTopic, boolean echo, byte[] reply)
      throws Exception {
    try (Admin admin = Admin.create(KafkaClients.base(bootstrap, settings))) {
      int partitions = admin.describeTopics(List.of(likeTopic)).allTopicNames().get(30, TimeUnit.SECONDS)
          .get(likeTopic).partitions().size();
      TopicAdmin.ensure(admin, List.of(TopicSpec.stream(topic, partitions)), (short) 1);
    }
    KafkaEcho e = new KafkaEcho(bootstrap, settings, topic, echo, reply);
    e.open();
    return e;
  }

  private final CountDownLatch assigned = new CountDownLatch(1);

  private void open() throws InterruptedException {
    consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
      @Override
      public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

      @Override
      public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        if (!partitions.isEmpty()) {
          consumer.seekToEnd(partitions);
          partitions.forEach(consumer::position);
          assigned.countDown();
        }
      }
    });
    loop.start();
    if (!assigned.await(60, TimeUnit.SECONDS)) {
      close();
      throw new IllegalStateException("the bench's " + (echo ? "echo" : "hop") + " consumer got no partition of " + topic + " in 60 s");
    }
  }

  /** The topic calls go to: the echo's request topic or the hop's topic. */
  String topic() {
    return topic;
  }

  /** Records echoed so far. */
  long echoed() {
    return echoed.get();
  }

  /** One call of the one-way hop: produce a record, complete when this loop's consumer reads it. */
  CompletableFuture<Void> hopCall(int partition) {
    String key = Long.toString(hopSeq.incrementAndGet());
    CompletableFuture<Void> done = new CompletableFuture<>();
    hops.put(key, done);
    producer.send(new ProducerRecord<>(topic, partition, key, new byte[16]), (md, e) -> {
      if (e != null) {
        hops.remove(key);
        done.completeExceptionally(e);
      }
    });
    return done;
  }

  private void run() {
    try {
      while (running) {
        ConsumerRecords<String, byte[]> records = consumer.poll(Duration.ofMillis(100));
        if (records.isEmpty()) {
          continue;
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (ConsumerRecord<String, byte[]> r : records) {
          if (echo) {
            answer(r);
          } else {
            CompletableFuture<Void> done = hops.remove(r.key());
            if (done != null) {
              done.complete(null);
            }
          }
          offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        }
        consumer.commitAsync(offsets, null); // as the worker commits what it answered, without waiting
      }
    } catch (WakeupException e) {
      // closing
    } finally {
      consumer.close(Duration.ofSeconds(2));
    }
  }

  private void answer(ConsumerRecord<String, byte[]> r) {
    Header replyTo = r.headers().lastHeader(KafkaHeaders.REPLY_TO);
    Header correlation = r.headers().lastHeader(KafkaHeaders.CORRELATION_ID);
    if (replyTo == null || correlation == null) {
      return; // not a call: nothing to answer
    }
    ProducerRecord<String, byte[]> out = new ProducerRecord<>(new String(replyTo.value(), StandardCharsets.UTF_8),
        null, r.key(), reply);
    out.headers().add(KafkaHeaders.CORRELATION_ID, correlation.value());
    producer.send(out);
    echoed.incrementAndGet();
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
    try {
      loop.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    producer.close(Duration.ofSeconds(2));
    hops.values().forEach(f -> f.completeExceptionally(new IllegalStateException("the hop was closed")));
  }
}
