package io.partita.worker;

import static io.partita.worker.WorkerFixtures.record;
import static io.partita.worker.WorkerFixtures.request;
import static io.partita.worker.WorkerFixtures.toRows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

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
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The worker against a real broker and real ONNX Runtime, with the demo repository. */
@ExtendWith(KafkaFixture.class)
class InferenceWorkerIT {
  private static final AvroCodec<InferenceReply> REPLIES = AvroCodec.of(InferenceReply.class);

  @TempDir Path repo;
  private Topics topics;
  private String replyTopic;
  private InferenceWorker worker;

  @BeforeEach
  void setUp() throws Exception {
    DemoRepository.writeTo(repo);
    topics = new Topics(KafkaFixture.uniquePrefix("worker"));
    replyTopic = topics.replies("test-client");
  }

  @AfterEach
  void tearDown() {
    if (worker != null) {
      worker.close();
    }
  }

  private InferenceWorker startWorker() throws Exception {
    worker = new InferenceWorker(WorkerConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "host.id", "test-host",
        "model.repo", repo.toString(),
        "worker.threads", "1"))));
    worker.start();
    return worker;
  }

  private Map<String, InferenceReply> replies(int count) {
    List<ConsumerRecord<String, byte[]>> records = KafkaFixture.read(count, Duration.ofSeconds(60), replyTopic);
    return records.stream().collect(Collectors.toMap(
        r -> KafkaHeaders.get(r.headers(), KafkaHeaders.CORRELATION_ID), r -> REPLIES.decode(r.value()), (a, b) -> a));
  }

  @Test
  void shouldAnswerEachDemoServiceModelWithItsOwnAdapterResult() throws Exception {
    startWorker();
    float[][] x = DemoMlp.sampleInput(3, 7);
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      for (String model : DemoMlp.SERVICE_MODELS) {
        producer.send(record(topics.requests(model), request("req-" + model, model, x), replyTopic));
      }
    }
    Map<String, InferenceReply> replies = replies(DemoMlp.SERVICE_MODELS.size());
    assertThat(replies).hasSize(DemoMlp.SERVICE_MODELS.size());
    for (String model : DemoMlp.SERVICE_MODELS) {
      InferenceReply reply = replies.get("req-" + model);
      assertThat(reply.getError()).as(model).isNull();
      float[][] expected = DemoMlp.reference(x, DemoMlp.adapterForServiceModel(model).orElse(null), reply.getModelVersion());
      float[][] actual = toRows(reply.getOutputs().get(0));
      for (int r = 0; r < x.length; r++) {
        for (int c = 0; c < expected[r].length; c++) {
          assertThat(actual[r][c]).as("%s[%d][%d]", model, r, c).isCloseTo(expected[r][c], within(1e-4f));
        }
      }
    }
    // The adapters really change the result.
    assertThat(toRows(replies.get("req-demo-a").getOutputs().get(0))[0][0])
        .isNotCloseTo(toRows(replies.get("req-demo").getOutputs().get(0))[0][0], within(1e-4f));
  }

  @Test
  void shouldDeadLetterGarbageAndKeepServing() throws Exception {
    startWorker();
    String topic = topics.requests(DemoMlp.BASE_SERVICE_MODEL);
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      ProducerRecord<String, byte[]> garbage = new ProducerRecord<>(topic, "garbage-1", "not avro".getBytes(StandardCharsets.UTF_8));
      KafkaHeaders.put(garbage.headers(), KafkaHeaders.REPLY_TO, replyTopic);
      KafkaHeaders.put(garbage.headers(), KafkaHeaders.CORRELATION_ID, "garbage-1");
      producer.send(garbage);
      producer.send(record(topic, request("after-garbage", "demo", DemoMlp.sampleInput(1, 1)), replyTopic));
    }
    Map<String, InferenceReply> replies = replies(2);
    assertThat(replies.get("garbage-1").getError().getCode()).isEqualTo(ErrorCode.BAD_INPUT);
    assertThat(replies.get("after-garbage").getError()).isNull();
    List<ConsumerRecord<String, byte[]>> dead = KafkaFixture.read(1, Duration.ofSeconds(30), topics.deadLetter());
    assertThat(dead).hasSize(1);
    DeadLetter letter = AvroCodec.of(DeadLetter.class).decode(dead.get(0).value());
    assertThat(letter.getTopic()).isEqualTo(topic);
    assertThat(letter.getErrorClass()).isEqualTo("DecodeException");
    assertThat(StandardCharsets.UTF_8.decode(letter.getValue()).toString()).isEqualTo("not avro");
  }

  @Test
  void shouldAnswerBadInputAndDeadlineErrors() throws Exception {
    startWorker();
    String topic = topics.requests("demo");
    InferenceRequest wrongShape = request("wrong-shape", "demo", new float[][] {{1f, 2f, 3f}});
    ProducerRecord<String, byte[]> late = record(topic, request("late", "demo", DemoMlp.sampleInput(1, 2)), replyTopic);
    KafkaHeaders.put(late.headers(), KafkaHeaders.DEADLINE, Long.toString(System.currentTimeMillis() - 1000));
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      producer.send(record(topic, wrongShape, replyTopic));
      producer.send(late);
    }
    Map<String, InferenceReply> replies = replies(2);
    assertThat(replies.get("wrong-shape").getError().getCode()).isEqualTo(ErrorCode.BAD_INPUT);
    assertThat(replies.get("wrong-shape").getError().getMessage()).contains("input 'input'.shape[1]");
    assertThat(replies.get("late").getError().getCode()).isEqualTo(ErrorCode.DEADLINE_EXCEEDED);
  }

  @Test
  void shouldAnswerEveryRequestProducedWhileTheWorkerWasDown() throws Exception {
    // Topics exist (a first start creates them), then the worker is down while requests arrive.
    startWorker();
    worker.close();
    worker = null;
    int count = 50;
    Map<String, float[][]> inputs = new HashMap<>();
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      for (int i = 0; i < count; i++) {
        String model = DemoMlp.SERVICE_MODELS.get(i % DemoMlp.SERVICE_MODELS.size());
        float[][] x = DemoMlp.sampleInput(1, i);
        inputs.put("down-" + i, x);
        producer.send(record(topics.requests(model), request("down-" + i, model, x), replyTopic));
      }
    }
    startWorker();
    Map<String, InferenceReply> replies = replies(count);
    assertThat(replies.keySet()).hasSize(count).allMatch(id -> id.startsWith("down-"));
    assertThat(replies.values()).allMatch(r -> r.getError() == null);
  }
}
