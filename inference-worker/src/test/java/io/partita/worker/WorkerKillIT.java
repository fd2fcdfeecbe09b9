package io.partita.worker;

import static io.partita.worker.WorkerFixtures.record;
import static io.partita.worker.WorkerFixtures.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.InferenceReply;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.schemas.AvroCodec;
import io.partita.testkit.ChildJvm;
import io.partita.testkit.KafkaFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * At-least-once under SIGKILL: a worker in its own JVM is killed three times while 2,000 requests
 * flow, and restarted each time (static group membership, so the new process takes over the dead
 * one's partitions at once). Every request must be answered without error; duplicates are allowed.
 */
@Tag("slow")
@ExtendWith(KafkaFixture.class)
class WorkerKillIT {
  private static final Logger log = LoggerFactory.getLogger(WorkerKillIT.class);
  private static final int REQUESTS = 2_000;
  private static final int KILLS = 3;

  @TempDir Path repo;
  private final List<Process> processes = new ArrayList<>();
  private final AtomicBoolean reading = new AtomicBoolean(true);
  private ScheduledExecutorService producing;

  @AfterEach
  void tearDown() {
    reading.set(false);
    if (producing != null) {
      producing.shutdownNow();
    }
    processes.forEach(Process::destroyForcibly);
  }

  private Process startWorker(Topics topics, int incarnation) throws Exception {
    Process p = ChildJvm.start(WorkerProcessMain.class, "384m",
        Path.of("target", "worker-kill", topics.prefix() + "-" + incarnation + ".log"),
        List.of(KafkaFixture.bootstrapServers(), topics.prefix(), repo.toString(),
            "host.id=kill-host", "worker.threads=1",
            // Static membership: a restarted process takes over the dead one's partitions without
            // waiting for its session to time out.
            "kafka.group.instance.id=" + topics.prefix() + "-worker"));
    processes.add(p);
    return p;
  }

  @Test
  void shouldAnswerEveryRequestWhenTheWorkerIsKilledThreeTimes() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("kill"));
    String replyTopic = topics.replies("kill-client");
    Process worker = startWorker(topics, 0);
    // The worker publishes its slot status once its topics exist and its slots are open.
    assertThat(KafkaFixture.read(1, Duration.ofSeconds(90), topics.workerStatus())).isNotEmpty();

    Set<String> answered = ConcurrentHashMap.newKeySet();
    AtomicInteger replies = new AtomicInteger();
    AtomicInteger errors = new AtomicInteger();
    Thread reader = new Thread(() -> {
      AvroCodec<InferenceReply> codec = AvroCodec.of(InferenceReply.class);
      try (KafkaConsumer<String, byte[]> consumer = KafkaFixture.consumer(replyTopic)) {
        while (reading.get()) {
          for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(100))) {
            replies.incrementAndGet();
            if (codec.decode(r.value()).getError() != null) {
              errors.incrementAndGet();
            }
            answered.add(KafkaHeaders.get(r.headers(), KafkaHeaders.CORRELATION_ID));
          }
        }
      }
    }, "reply-reader");
    reader.start();

    // 2,000 requests at about 80 a second, whatever happens to the worker.
    KafkaProducer<String, byte[]> producer = KafkaFixture.producer();
    AtomicInteger produced = new AtomicInteger();
    producing = Executors.newSingleThreadScheduledExecutor();
    producing.scheduleAtFixedRate(() -> {
      for (int k = 0; k < 4 && produced.get() < REQUESTS; k++) {
        int i = produced.getAndIncrement();
        String model = DemoMlp.SERVICE_MODELS.get(i % DemoMlp.SERVICE_MODELS.size());
        producer.send(record(topics.requests(DemoMlp.MODEL_NAME), request("kill-" + i, model, DemoMlp.sampleInput(1 + i % 3, i)), replyTopic));
      }
    }, 0, 50, TimeUnit.MILLISECONDS);

    // The first kill lands in steady flow; each later one in the middle of the backlog that piled up
    // while the worker was down (about 400 requests), so batches are running and offsets are open.
    int threshold = 300;
    for (int kill = 1; kill <= KILLS; kill++) {
      int due = threshold;
      await().atMost(Duration.ofSeconds(90)).until(() -> answered.size() >= due);
      log.info("Kill {}: SIGKILL with {} produced, {} answered, {} replies so far", kill, produced.get(), answered.size(), replies.get());
      worker.destroyForcibly(); // SIGKILL: no shutdown hook, no commit, no goodbye to the group
      assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
      worker = startWorker(topics, kill);
      threshold = answered.size() + 200;
    }
    await().atMost(Duration.ofSeconds(90)).until(() -> answered.size() >= REQUESTS);
    producing.shutdown();
    producer.close();

    log.info("{} requests answered by {} replies ({} duplicates after {} kills)", answered.size(), replies.get(),
        replies.get() - answered.size(), KILLS);
    assertThat(produced.get()).isEqualTo(REQUESTS);
    assertThat(answered).hasSize(REQUESTS);
    assertThat(errors.get()).as("error replies").isZero();
  }
}
