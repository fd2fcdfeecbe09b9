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
import io.partita.avro.SlotStatus;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.schemas.AvroCodec;
import io.partita.testkit.KafkaFixture;
import java.nio.charset.StandardCharsets;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
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
  @TempDir Path dir;
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
    return startWorker(Map.of());
  }

  private InferenceWorker startWorker(Map<String, String> extra) throws Exception {
    Map<String, String> settings = new HashMap<>(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "host.id", "test-host",
        "model.repo", repo.toString(),
        "worker.threads", "1"));
    settings.putAll(extra);
    worker = new InferenceWorker(WorkerConfig.from(Settings.of(settings)));
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
        producer.send(record(topics.requests(DemoMlp.MODEL_NAME), request("req-" + model, model, x), replyTopic));
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
    String topic = topics.requests(DemoMlp.MODEL_NAME);
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
    String topic = topics.requests(DemoMlp.MODEL_NAME);
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
        producer.send(record(topics.requests(DemoMlp.MODEL_NAME), request("down-" + i, model, x), replyTopic));
      }
    }
    startWorker();
    Map<String, InferenceReply> replies = replies(count);
    assertThat(replies.keySet()).hasSize(count).allMatch(id -> id.startsWith("down-"));
    assertThat(replies.values()).allMatch(r -> r.getError() == null);
  }

  @Test
  void shouldPublishSlotStatusAndKeepServingWhenOneWeightFileIsRefused() throws Exception {
    Path slotsFile = dir.resolve("slots.json");
    Files.writeString(slotsFile, """
        [{"slot": "s0", "model": "demo-mlp", "version": "1", "serviceModels": ["demo", "demo-a",
          {"serviceModel": "demo-b", "weightFile": {"path": "demo-mlp/adapters/b.onnx_adapter", "sha256": "%s"}}]}]
        """.formatted("0".repeat(64)));
    startWorker(Map.of("worker.assignments", slotsFile.toString()));
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      producer.send(record(topics.requests(DemoMlp.MODEL_NAME), request("ok-a", "demo-a", DemoMlp.sampleInput(2, 3)), replyTopic));
      producer.send(record(topics.requests(DemoMlp.MODEL_NAME), request("refused-b", "demo-b", DemoMlp.sampleInput(2, 3)), replyTopic));
    }
    Map<String, InferenceReply> replies = replies(2);
    assertThat(replies.get("ok-a").getError()).isNull();
    assertThat(replies.get("ok-a").getInstance()).isEqualTo("test-host/s0");
    assertThat(replies.get("refused-b").getError().getCode()).isEqualTo(ErrorCode.NOT_READY);
    assertThat(replies.get("refused-b").getError().getMessage()).contains("sha256");

    SlotStatus status = latestStatus(s -> !s.getRequestPartitions().isEmpty());
    assertThat(status.getHost()).isEqualTo("test-host");
    assertThat(status.getSlot()).isEqualTo("s0");
    assertThat(status.getHealth()).isEqualTo("DEGRADED");
    assertThat(status.getServiceModels()).extracting(m -> m.getServiceModel() + "=" + m.getState())
        .containsExactly("demo=READY", "demo-a=READY", "demo-b=NOT_READY");
    // The one worker of the group owns every partition of the one request topic of the base model.
    assertThat(status.getRequestPartitions()).extracting(tp -> tp.getTopic() + "=" + tp.getPartitions())
        .containsExactly(topics.requests(DemoMlp.MODEL_NAME) + "=[0, 1, 2, 3]");
  }

  /** The first slot status on the status topic that matches, waiting for it. */
  private SlotStatus latestStatus(java.util.function.Predicate<SlotStatus> wanted) {
    AvroCodec<SlotStatus> codec = AvroCodec.of(SlotStatus.class);
    try (var consumer = KafkaFixture.consumer(topics.workerStatus())) {
      java.util.concurrent.atomic.AtomicReference<SlotStatus> found = new java.util.concurrent.atomic.AtomicReference<>();
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          SlotStatus s = codec.decode(r.value());
          if (wanted.test(s)) {
            found.set(s);
          }
        }
        return found.get() != null;
      });
      return found.get();
    }
  }

  @Test
  void shouldServeFromPinnedPartitionsAndExposeMetrics() throws Exception {
    int port;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    String partitions = io.partita.runtime.Pinning.usableCpus().size() >= 2 ? "1,1" : "1";
    startWorker(Map.of("worker.partitions", partitions, "worker.metrics.port", Integer.toString(port)));
    int count = 24;
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      for (int i = 0; i < count; i++) {
        String model = DemoMlp.SERVICE_MODELS.get(i % DemoMlp.SERVICE_MODELS.size());
        producer.send(record(topics.requests(DemoMlp.MODEL_NAME), request("p-" + i, model, DemoMlp.sampleInput(1 + i % 2, i)), replyTopic));
      }
    }
    Map<String, InferenceReply> replies = replies(count);
    assertThat(replies).hasSize(count);
    assertThat(replies.values()).allMatch(r -> r.getError() == null && r.getInstance().startsWith("test-host/demo-mlp-2-"));
    assertThat(worker.slots().statuses()).allMatch(s -> s.getCpus().size() == 1);

    HttpResponse<String> metrics = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/metrics")).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.body())
        .contains("partita_worker_queue_wait_seconds_bucket{")
        .contains("partita_worker_inference_seconds_bucket{")
        .contains("partita_worker_batch_size_requests_bucket{")
        .containsPattern("partita_worker_replies_total\\{[^}]*outcome=\"OK\"[^}]*service_model=\"demo-a\"");
  }
}
