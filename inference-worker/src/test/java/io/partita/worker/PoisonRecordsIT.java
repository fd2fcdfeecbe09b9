package io.partita.worker;

import static io.partita.worker.WorkerFixtures.record;
import static io.partita.worker.WorkerFixtures.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Counter;
import io.partita.avro.DeadLetter;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.schemas.AvroCodec;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.metrics.WorkerMetrics;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.avro.SchemaNormalization;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Records that used to stop the worker: each is dead-lettered with its provenance,
 * answered where a reply-to is known, and the request after it is served by the same loop.
 */
@ExtendWith(KafkaFixture.class)
class PoisonRecordsIT {
  private static final AvroCodec<InferenceReply> REPLIES = AvroCodec.of(InferenceReply.class);
  private static final AvroCodec<DeadLetter> DEAD = AvroCodec.of(DeadLetter.class);

  @TempDir Path repo;
  private Topics topics;
  private String replyTopic;
  private InferenceWorker worker;

  @BeforeEach
  void setUp() throws Exception {
    DemoRepository.writeTo(repo);
    topics = new Topics(KafkaFixture.uniquePrefix("poison"));
    replyTopic = topics.replies("poison-client");
    worker = new InferenceWorker(WorkerConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "host.id", "poison-host",
        "model.repo", repo.toString(),
        "worker.threads", "1"))));
    worker.start();
  }

  @AfterEach
  void tearDown() {
    if (worker != null) {
      worker.close();
    }
  }

  /** 32 bytes: a valid header and a body whose inputs array declares 2,000,000,000 tensors. */
  static byte[] twoBillionInputs() {
    ByteBuffer header = ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN);
    header.put((byte) 0xC3).put((byte) 0x01)
        .putLong(SchemaNormalization.parsingFingerprint64(InferenceRequest.getClassSchema()));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(header.array());
    out.writeBytes(new byte[] {2, 'a', 2, 'm', 0}); // id "a", serviceModel "m", version null
    long n = 2_000_000_000L << 1; // zig-zag
    while ((n & ~0x7FL) != 0) {
      out.write((int) ((n & 0x7F) | 0x80));
      n >>>= 7;
    }
    out.write((int) n);
    while (out.size() < 32) {
      out.write(0);
    }
    return out.toByteArray();
  }

  @Test
  void shouldDeadLetterA32ByteRecordWithATwoBillionCountAndServeTheNextRequest() {
    String topic = topics.requests(DemoMlp.MODEL_NAME);
    byte[] poison = twoBillionInputs();
    assertThat(poison).hasSize(32);
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      ProducerRecord<String, byte[]> bad = new ProducerRecord<>(topic, 0, "huge-count", poison);
      KafkaHeaders.put(bad.headers(), KafkaHeaders.REPLY_TO, replyTopic);
      KafkaHeaders.put(bad.headers(), KafkaHeaders.CORRELATION_ID, "huge-count");
      producer.send(bad);
      producer.send(withPartition(record(topic, request("after-huge", "demo", DemoMlp.sampleInput(1, 1)), replyTopic), 0));
    }
    Map<String, InferenceReply> replies = replies(2);
    assertThat(replies.get("huge-count").getError().getCode()).isEqualTo(ErrorCode.BAD_INPUT);
    assertThat(replies.get("after-huge").getError()).isNull();

    DeadLetter letter = deadLetters(1).get(0);
    assertThat(letter.getTopic()).isEqualTo(topic);
    assertThat(letter.getPartition()).isEqualTo(0);
    assertThat(letter.getErrorClass()).isEqualTo("DecodeException");
    assertThat(letter.getError()).contains("2000000000");
    assertThat(worker.health().ready().ok()).isTrue();
  }

  @Test
  void shouldDeadLetterARefusedReplyCountItAndKeepServing() throws Exception {
    String tiny = topics.replies("tiny");
    try (var admin = KafkaFixture.admin()) {
      admin.createTopics(List.of(new NewTopic(tiny, 1, (short) 1).configs(Map.of("max.message.bytes", "64")))).all().get();
    }
    String topic = topics.requests(DemoMlp.MODEL_NAME);
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      producer.send(withPartition(record(topic, request("to-tiny", "demo", DemoMlp.sampleInput(1, 2)), tiny), 0));
      producer.send(withPartition(record(topic, request("after-tiny", "demo", DemoMlp.sampleInput(1, 3)), replyTopic), 0));
    }
    Map<String, InferenceReply> replies = replies(1);
    assertThat(replies.get("after-tiny").getError()).isNull();

    DeadLetter letter = deadLetters(1).get(0);
    assertThat(letter.getTopic()).isEqualTo(topic);
    assertThat(letter.getErrorClass()).isEqualTo("ReplyRefusedException");
    assertThat(letter.getError()).contains(tiny).contains("RecordTooLargeException");
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(refused()).isEqualTo(1.0));
    assertThat(worker.health().ready().ok()).isTrue();
    assertThat(worker.failure()).isNull();
  }

  @Test
  void shouldAnswerBadInputToANonNumericDeadline() {
    String topic = topics.requests(DemoMlp.MODEL_NAME);
    ProducerRecord<String, byte[]> bad = record(topic, request("bad-deadline", "demo", DemoMlp.sampleInput(1, 4)), replyTopic);
    KafkaHeaders.put(bad.headers(), KafkaHeaders.DEADLINE, "tomorrow");
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      producer.send(bad);
    }
    InferenceReply reply = replies(1).get("bad-deadline");
    assertThat(reply.getError().getCode()).isEqualTo(ErrorCode.BAD_INPUT);
    assertThat(reply.getError().getMessage()).contains("deadline header 'tomorrow'").contains("epoch milliseconds");
    assertThat(deadLetters(1).get(0).getError()).contains("tomorrow");
  }

  private double refused() {
    return Optional.ofNullable(worker.metrics().find(WorkerMetrics.REFUSED_REPLIES).counter()).map(Counter::count).orElse(0.0);
  }

  private static ProducerRecord<String, byte[]> withPartition(ProducerRecord<String, byte[]> r, int partition) {
    return new ProducerRecord<>(r.topic(), partition, r.key(), r.value(), r.headers());
  }

  private Map<String, InferenceReply> replies(int count) {
    List<ConsumerRecord<String, byte[]>> records = KafkaFixture.read(count, Duration.ofSeconds(60), replyTopic);
    assertThat(records).hasSize(count);
    return records.stream().collect(Collectors.toMap(
        r -> KafkaHeaders.get(r.headers(), KafkaHeaders.CORRELATION_ID), r -> REPLIES.decode(r.value()), (a, b) -> a));
  }

  private List<DeadLetter> deadLetters(int count) {
    List<ConsumerRecord<String, byte[]>> records = KafkaFixture.read(count, Duration.ofSeconds(30), topics.deadLetter());
    assertThat(records).hasSize(count);
    return records.stream().map(r -> DEAD.decode(r.value())).toList();
  }
}
