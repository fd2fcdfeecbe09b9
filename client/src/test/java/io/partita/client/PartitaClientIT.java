package io.partita.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.common.KafkaHeaders;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The Java client against a real broker: a real worker's answer, its deadline, and duplicate replies. */
@ExtendWith(KafkaFixture.class)
class PartitaClientIT {
  @TempDir Path repo;

  static Tensor input(float[][] rows) {
    ByteBuffer b = ByteBuffer.allocate(rows.length * DemoMlp.INPUT_SIZE * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float[] row : rows) {
      for (float v : row) {
        b.putFloat(v);
      }
    }
    b.flip();
    return Tensor.newBuilder().setName(DemoMlp.INPUT).setDatatype("FP32").setShape(List.of((long) rows.length, (long) DemoMlp.INPUT_SIZE)).setData(b).build();
  }

  private static PartitaClient client(Topics topics, Duration timeout) {
    return PartitaClient.start(PartitaClient.Config.of(KafkaFixture.bootstrapServers()).withTopicPrefix(topics.prefix()).withTimeout(timeout));
  }

  @Test
  void shouldGetTheWorkersAnswerOnItsOwnReplyTopic() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("client"));
    float[][] x = DemoMlp.sampleInput(3, 17);
    try (InferenceWorker worker = new InferenceWorker(WorkerConfig.from(Settings.of(Map.of(
            "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(), "topic.prefix", topics.prefix(),
            "model.repo", repo.toString(), "worker.threads", "1"))));
         PartitaClient client = client(topics, Duration.ofSeconds(30))) {
      worker.start();
      InferenceReply reply = client.infer(DemoMlp.MODEL_NAME, "demo-c", List.of(input(x))).get(60, TimeUnit.SECONDS);
      assertThat(reply.getError()).isNull();
      assertThat(client.replyTopic()).startsWith(topics.prefix() + ".replies.client-");
      Tensor out = reply.getOutputs().get(0);
      assertThat(out.getShape()).containsExactly(3L, 4L);
      float[][] expected = DemoMlp.reference(x, DemoMlp.adapter("c"), reply.getModelVersion());
      ByteBuffer data = out.getData().duplicate().order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < 12; i++) {
        assertThat(data.getFloat()).isCloseTo(expected[i / 4][i % 4], within(1e-4f));
      }
      assertThat(client.inFlight()).isZero();
    }
  }

  @Test
  void shouldFailAtTheDeadlineAndSendTheDeadlineHeader() throws Exception {
    Topics topics = new Topics(KafkaFixture.uniquePrefix("client-deadline"));
    try (var admin = KafkaFixture.admin()) {
      TopicAdmin.ensure(admin, List.of(TopicSpec.stream(topics.requests("nobody"), 1)), (short) 1);
    }
    try (PartitaClient client = client(topics, Duration.ofMillis(500))) {
      long before = System.currentTimeMillis();
      var future = client.infer("nobody", List.of(input(DemoMlp.sampleInput(1, 1))));
      assertThatThrownBy(() -> future.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TimeoutException.class);
      assertThat(client.inFlight()).isZero();
      List<ConsumerRecord<String, byte[]>> sent = KafkaFixture.read(1, Duration.ofSeconds(10), topics.requests("nobody"));
      assertThat(sent).hasSize(1);
      long deadline = Long.parseLong(KafkaHeaders.get(sent.get(0).headers(), KafkaHeaders.DEADLINE));
      assertThat(deadline).isBetween(before + 500, System.currentTimeMillis() + 500);
      assertThat(KafkaHeaders.get(sent.get(0).headers(), KafkaHeaders.REPLY_TO)).isEqualTo(client.replyTopic());
      assertThat(KafkaHeaders.get(sent.get(0).headers(), KafkaHeaders.SERVICE_MODEL)).isEqualTo("nobody");
    }
  }

  @Test
  void shouldCompleteOnceAndDropADuplicateReply() throws Exception {
    Topics topics = new Topics(KafkaFixture.uniquePrefix("client-dup"));
    try (var admin = KafkaFixture.admin()) {
      TopicAdmin.ensure(admin, List.of(TopicSpec.stream(topics.requests("twice"), 1)), (short) 1);
    }
    RecordCodec<InferenceRequest> requests = Codecs.singleObject().codec(InferenceRequest.class);
    RecordCodec<InferenceReply> replies = Codecs.singleObject().codec(InferenceReply.class);
    try (PartitaClient client = client(topics, Duration.ofSeconds(30));
         KafkaConsumer<String, byte[]> in = KafkaFixture.consumer(topics.requests("twice"));
         KafkaProducer<String, byte[]> out = KafkaFixture.producer()) {
      var future = client.infer("twice", List.of(input(DemoMlp.sampleInput(1, 2))));
      ConsumerRecord<String, byte[]> request = null;
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (request == null && System.nanoTime() < end) {
        for (ConsumerRecord<String, byte[]> r : in.poll(Duration.ofMillis(200))) {
          request = r;
        }
      }
      assertThat(request).isNotNull();
      InferenceRequest decoded = requests.decode(request.topic(), request.value());
      String to = KafkaHeaders.get(request.headers(), KafkaHeaders.REPLY_TO);
      for (String version : List.of("first", "second")) { // a worker restarted mid-batch answers twice
        ProducerRecord<String, byte[]> reply = new ProducerRecord<>(to, decoded.getId(), replies.encode(to,
            InferenceReply.newBuilder().setId(decoded.getId()).setServiceModel("twice").setModelVersion(version).build()));
        KafkaHeaders.put(reply.headers(), KafkaHeaders.CORRELATION_ID, KafkaHeaders.get(request.headers(), KafkaHeaders.CORRELATION_ID));
        out.send(reply).get();
      }
      assertThat(future.get(30, TimeUnit.SECONDS).getModelVersion()).isEqualTo("first");
      await().atMost(Duration.ofSeconds(30)).until(() -> client.duplicatesDropped() == 1);
      assertThat(client.repliesDropped()).isEqualTo(1);
      assertThat(client.inFlight()).isZero();
    }
  }

  /** A reply whose first field declares a 2,000,000,000-byte string: 16 bytes that once killed a reply reader. */
  static byte[] twoBillionLongReply() {
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(16).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    b.put((byte) 0xC3).put((byte) 0x01).putLong(org.apache.avro.SchemaNormalization.parsingFingerprint64(InferenceReply.getClassSchema()));
    long n = 2_000_000_000L << 1;
    while ((n & ~0x7FL) != 0) {
      b.put((byte) ((n & 0x7F) | 0x80));
      n >>>= 7;
    }
    b.put((byte) n);
    return java.util.Arrays.copyOf(b.array(), b.position());
  }

  @Test
  void shouldSkipAReplyDeclaringTwoBillionBytesAndCompleteWithTheRealOne() throws Exception {
    Topics topics = new Topics(KafkaFixture.uniquePrefix("client-poison"));
    try (var admin = KafkaFixture.admin()) {
      TopicAdmin.ensure(admin, List.of(TopicSpec.stream(topics.requests("poisoned"), 1)), (short) 1);
    }
    RecordCodec<InferenceRequest> requests = Codecs.singleObject().codec(InferenceRequest.class);
    RecordCodec<InferenceReply> replies = Codecs.singleObject().codec(InferenceReply.class);
    try (PartitaClient client = client(topics, Duration.ofSeconds(30));
         KafkaConsumer<String, byte[]> in = KafkaFixture.consumer(topics.requests("poisoned"));
         KafkaProducer<String, byte[]> out = KafkaFixture.producer()) {
      var first = client.infer("poisoned", List.of(input(DemoMlp.sampleInput(1, 2))));
      ConsumerRecord<String, byte[]> request = null;
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (request == null && System.nanoTime() < end) {
        for (ConsumerRecord<String, byte[]> r : in.poll(Duration.ofMillis(200))) {
          request = r;
        }
      }
      assertThat(request).isNotNull();
      InferenceRequest decoded = requests.decode(request.topic(), request.value());
      String to = KafkaHeaders.get(request.headers(), KafkaHeaders.REPLY_TO);
      String correlation = KafkaHeaders.get(request.headers(), KafkaHeaders.CORRELATION_ID);
      ProducerRecord<String, byte[]> poison = new ProducerRecord<>(to, decoded.getId(), twoBillionLongReply());
      KafkaHeaders.put(poison.headers(), KafkaHeaders.CORRELATION_ID, correlation);
      out.send(poison).get();
      await().atMost(Duration.ofSeconds(30)).until(() -> client.repliesUndecodable() == 1);
      assertThat(first).isNotDone();

      ProducerRecord<String, byte[]> real = new ProducerRecord<>(to, decoded.getId(), replies.encode(to,
          InferenceReply.newBuilder().setId(decoded.getId()).setServiceModel("poisoned").setModelVersion("real").build()));
      KafkaHeaders.put(real.headers(), KafkaHeaders.CORRELATION_ID, correlation);
      out.send(real).get();
      assertThat(first.get(30, TimeUnit.SECONDS).getModelVersion()).isEqualTo("real");
      assertThat(client.inFlight()).isZero();
    }
  }
}
