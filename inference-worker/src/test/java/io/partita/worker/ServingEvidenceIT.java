package io.partita.worker;

import static io.partita.worker.WorkerFixtures.record;
import static io.partita.worker.WorkerFixtures.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.micrometer.core.instrument.Timer;
import io.partita.avro.BatchRuns;
import io.partita.avro.InferenceReply;
import io.partita.avro.ServingEvidence;
import io.partita.avro.SlotStatus;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.schemas.AvroCodec;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.metrics.WorkerMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The serving evidence a slot reports in its status is what it ran: a real worker with one slot of
 * the demo model answers requests of known sizes one at a time (so each runs as a batch of its own),
 * and the evidence on the status topic counts exactly those items and runs by size, with a busy time
 * within what the replies say each run took (the evidence times ONNX Runtime's run call alone);
 * requests sent together merge into fewer runs, and the evidence then counts the runs the worker's
 * own batch metric counted.
 */
@Tag("slow")
@ExtendWith(KafkaFixture.class)
class ServingEvidenceIT {
  private static final AvroCodec<InferenceReply> REPLIES = AvroCodec.of(InferenceReply.class);
  private static final AvroCodec<SlotStatus> STATUSES = AvroCodec.of(SlotStatus.class);

  @TempDir Path repo;
  @TempDir Path dir;
  private InferenceWorker worker;
  private final Map<String, InferenceReply> read = new HashMap<>();

  @AfterEach
  void tearDown() {
    if (worker != null) {
      worker.close();
    }
  }

  @Test
  void shouldReportTheItemsRunsAndBusyTimeTheSlotRan() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("evidence"));
    String replyTopic = topics.replies("evidence-client");
    Path slotsFile = dir.resolve("slots.json");
    Files.writeString(slotsFile, """
        [{"slot": "s0", "model": "demo-mlp", "version": "1", "serviceModels": ["demo", "demo-a"]}]
        """);
    worker = new InferenceWorker(WorkerConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "host.id", "evidence-host",
        "model.repo", repo.toString(),
        "worker.threads", "1",
        "worker.assignments", slotsFile.toString(),
        "worker.status.interval.ms", "300"))));
    worker.start();
    // The worker's synthetic warm-up ran before start() returned: the slot's metrics count its runs,
    // its serving evidence must not. What the test sends is compared with the metrics' growth since.
    long warmUpBatches = batchCount();
    long warmUpNanos = inferenceNanos();
    assertThat(warmUpBatches).as("the warm-up ran through the slot").isPositive();
    try (var admin = KafkaFixture.admin()) {
      admin.createTopics(List.of(new NewTopic(replyTopic, 1, (short) 1))).all().get();
    }

    // One at a time: each request is a run of its own rows
    int[] rows = {1, 2, 3, 1, 2, 1, 3, 3, 1, 2, 1, 1};
    Map<Integer, Long> runsBySize = new TreeMap<>();
    long items = 0;
    long replyMicros = 0;
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer();
         KafkaConsumer<String, byte[]> replies = KafkaFixture.consumer(replyTopic)) {
      for (int i = 0; i < rows.length; i++) {
        String model = i % 2 == 0 ? "demo" : "demo-a";
        producer.send(record(topics.requests(DemoMlp.MODEL_NAME), request("one-" + i, model, DemoMlp.sampleInput(rows[i], i)),
            replyTopic)).get();
        InferenceReply reply = next(replies, "one-" + i);
        assertThat(reply.getError()).as("request %d", i).isNull();
        replyMicros += reply.getInferenceMicros();
        runsBySize.merge(rows[i], 1L, Long::sum);
        items += rows[i];
      }
    }

    long expectedItems = items;
    ServingEvidence one = evidence(topics, e -> e.getItems() == expectedItems);
    assertThat(one.getBatches()).isEqualTo(rows.length);
    assertThat(one.getSizes()).extracting(BatchRuns::getRows, BatchRuns::getRuns)
        .containsExactlyElementsOf(runsBySize.entrySet().stream()
            .map(e -> tuple(e.getKey(), e.getValue())).toList());
    // The busy time is ONNX Runtime's run call alone: within the time each reply says its run took
    // (whole microseconds, which also cover building the inputs and reading the outputs)
    assertThat(one.getBusyNanos()).isPositive().isLessThanOrEqualTo((replyMicros + rows.length) * 1000)
        .isLessThanOrEqualTo(inferenceNanos() - warmUpNanos);
    assertThat(one.getSizes().stream().mapToLong(BatchRuns::getBusyNanos).sum()).isEqualTo(one.getBusyNanos());
    assertThat(one.getWindowMs()).isPositive().isLessThanOrEqualTo(30_000);
    assertThat(one.getItemOverheadNanos()).as("what an item costs beyond its run, after %d items (under 100)", items).isNull();

    // Together: requests may share runs; every item is still counted once, the time as the worker timed it
    int together = 40;
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer();
         KafkaConsumer<String, byte[]> replies = KafkaFixture.consumer(replyTopic)) {
      for (int i = 0; i < together; i++) {
        producer.send(record(topics.requests(DemoMlp.MODEL_NAME), request("many-" + i, "demo", DemoMlp.sampleInput(2, i)),
            replyTopic));
      }
      producer.flush();
      for (int i = 0; i < together; i++) {
        assertThat(next(replies, "many-" + i).getError()).isNull();
      }
    }
    long allItems = items + 2L * together;
    ServingEvidence all = evidence(topics, e -> e.getItems() == allItems);
    assertThat(all.getBatches()).isBetween((long) rows.length + 1, (long) rows.length + together);
    assertThat(all.getSizes().stream().mapToLong(b -> b.getRows() * b.getRuns()).sum()).isEqualTo(allItems);
    assertThat(all.getBusyNanos()).isGreaterThan(one.getBusyNanos()).isLessThanOrEqualTo(inferenceNanos() - warmUpNanos);
    assertThat(all.getBatches()).isEqualTo(batchCount() - warmUpBatches);

    // Over 100 items ran: once the worker's window spans 5 s, every status says what an item cost it
    // beyond its run (CPU not in runs per item, over the host's budget), as the gauge does
    ServingEvidence costed = evidence(topics, e -> e.getItemOverheadNanos() != null);
    assertThat(costed.getItemOverheadNanos()).isPositive().isLessThan(Duration.ofSeconds(1).toNanos());
    assertThat(worker.metrics().get(WorkerMetrics.ITEM_OVERHEAD).gauge().value()).isPositive().isFinite();
  }

  /** The reply with this correlation id, reading on until it came (replies read meanwhile are kept). */
  private InferenceReply next(KafkaConsumer<String, byte[]> consumer, String id) {
    Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
      for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(100))) {
        read.put(KafkaHeaders.get(r.headers(), KafkaHeaders.CORRELATION_ID), REPLIES.decode(r.value()));
      }
      return read.containsKey(id);
    });
    return read.get(id);
  }

  /** The evidence of the slot's latest status on the status topic, waiting for one that matches. */
  private static ServingEvidence evidence(Topics topics, Predicate<ServingEvidence> wanted) {
    AtomicReference<ServingEvidence> found = new AtomicReference<>();
    try (KafkaConsumer<String, byte[]> consumer = KafkaFixture.consumer(topics.workerStatus())) {
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          SlotStatus s = r.value() == null ? null : STATUSES.decode(r.value());
          if (s != null && s.getSlot().equals("s0") && s.getServing() != null && wanted.test(s.getServing())) {
            found.set(s.getServing());
          }
        }
        return found.get() != null;
      });
    }
    return found.get();
  }

  /** The slot's run time as the worker's inference timer recorded it, nanoseconds. */
  private long inferenceNanos() {
    double sum = 0;
    for (Timer t : worker.metrics().find(WorkerMetrics.INFERENCE).tag(WorkerMetrics.TAG_SLOT, "s0").timers()) {
      sum += t.totalTime(TimeUnit.NANOSECONDS);
    }
    return Math.round(sum);
  }

  private long batchCount() {
    return worker.metrics().find(WorkerMetrics.BATCH_SIZE).tag(WorkerMetrics.TAG_SLOT, "s0").summaries().stream()
        .mapToLong(s -> s.count()).sum();
  }
}
