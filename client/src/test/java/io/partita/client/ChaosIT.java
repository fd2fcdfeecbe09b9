package io.partita.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.DeadLetter;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.common.KafkaHeaders;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.kafka.TopicAdmin;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.schemas.AvroCodec;
import io.partita.testkit.ChildJvm;
import io.partita.testkit.KafkaFixture;
import java.io.ByteArrayOutputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.avro.SchemaNormalization;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The chaos run: 10,000 records through Kafka to a worker in its own JVM that is killed with
 * SIGKILL twice, carrying every 1,000 one of each poison: a request declaring 2,000,000,000 inputs,
 * a request whose reply-to topic refuses anything over 64 bytes, a request with a deadline that is
 * not a number, and (on the client's own reply topic, with the correlation id of a call in flight) a
 * reply declaring a 2,000,000,000-byte string.
 *
 * <p>Then: every good request is answered without error (duplicates after a kill are dropped by
 * correlation id, by {@link PartitaClient}); every poison request is dead-lettered (at least once:
 * a worker killed after writing a dead letter but before committing the offset writes it again, so
 * dead letters are deduplicated by their provenance, topic-partition-offset, which names the one
 * poison record); the client skipped every poisoned reply; no loop of the last worker is dead; and
 * readiness, sampled every 100 ms, never said 200 while liveness said a loop was dead.
 */
@Tag("slow")
@ExtendWith(KafkaFixture.class)
class ChaosIT {
  private static final Logger log = LoggerFactory.getLogger(ChaosIT.class);
  private static final int RECORDS = 10_000;
  private static final int EVERY = 1_000;
  private static final int WINDOW = 400;

  @TempDir Path repo;
  private final List<Process> processes = new ArrayList<>();
  private final AtomicBoolean sampling = new AtomicBoolean(true);

  @AfterEach
  void tearDown() {
    sampling.set(false);
    processes.forEach(Process::destroyForcibly);
  }

  private Process startWorker(Topics topics, int port, int incarnation) throws Exception {
    Process p = ChildJvm.start(ChaosWorkerMain.class, "384m",
        Path.of("target", "chaos", topics.prefix() + "-" + incarnation + ".log"),
        List.of(KafkaFixture.bootstrapServers(), topics.prefix(), repo.toString(),
            "host.id=chaos-host", "worker.threads=1", "worker.metrics.port=" + port,
            "worker.group.instance.id=" + topics.prefix() + "-worker"));
    processes.add(p);
    return p;
  }

  @Test
  void shouldServeEveryGoodRequestAndDeadLetterEveryPoisonWhileTheWorkerIsKilledTwice() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("chaos"));
    String model = DemoMlp.BASE_SERVICE_MODEL;
    String requestTopic = topics.requests(DemoMlp.MODEL_NAME); // the one topic of the demo base model
    String tiny = topics.replies("tiny");
    String sink = topics.replies("poison-sink");
    try (var admin = KafkaFixture.admin()) {
      TopicAdmin.ensure(admin, List.of(TopicSpec.stream(requestTopic, 4), TopicSpec.stream(sink, 1)), (short) 1);
      admin.createTopics(List.of(new NewTopic(tiny, 1, (short) 1).configs(Map.of("max.message.bytes", "64")))).all().get();
    }
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Process worker = startWorker(topics, port, 0);
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();
    await().atMost(Duration.ofSeconds(120)).until(() -> status(http, port, "/health/ready") == 200);

    // Readiness and liveness every 100 ms, from start to end.
    AtomicInteger readySamples = new AtomicInteger();
    List<String> lies = new CopyOnWriteArrayList<>();
    Thread sampler = new Thread(() -> {
      while (sampling.get()) {
        int ready = status(http, port, "/health/ready");
        int live = status(http, port, "/health/live");
        if (ready == 200) {
          readySamples.incrementAndGet();
          if (live == 503) {
            lies.add("ready 200 while live 503 at " + System.currentTimeMillis());
          }
        }
        try {
          Thread.sleep(100); // readiness is sampled every 100 ms, as asked of this run: a fixed period, not a wait for a condition
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "readiness-sampler");
    sampler.setDaemon(true);
    sampler.start();

    Set<String> poisons = new TreeSet<>();
    Map<String, CompletableFuture<InferenceReply>> good = new ConcurrentHashMap<>();
    AtomicInteger answered = new AtomicInteger();
    Semaphore window = new Semaphore(WINDOW);
    int[] killAt = {RECORDS * 3 / 10, RECORDS * 65 / 100};
    int kills = 0;
    try (PartitaClient client = PartitaClient.start(PartitaClient.Config.of(KafkaFixture.bootstrapServers())
            .withTopicPrefix(topics.prefix()).withClientId("chaos-client").withTimeout(Duration.ofMinutes(4))
            .withBaseModel(model, DemoMlp.MODEL_NAME));
         KafkaProducer<String, byte[]> raw = KafkaFixture.producer()) {
      for (int i = 0; i < RECORDS; i++) {
        if (kills < killAt.length && i == killAt[kills]) {
          log.info("Kill {}: SIGKILL with {} sent, {} answered", kills + 1, i, answered.get());
          worker.destroyForcibly();
          assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
          worker = startWorker(topics, port, ++kills);
        }
        switch (i % EVERY) {
          case 250 -> poisons.add(sendPoison(raw, requestTopic, "huge-" + i, hugeCountRequest(), sink, null));
          case 500 -> poisons.add(sendPoison(raw, requestTopic, "tiny-" + i,
              AvroCodec.of(InferenceRequest.class).encode(request("tiny-" + i, model, i)), tiny, null));
          case 750 -> poisons.add(sendPoison(raw, requestTopic, "deadline-" + i,
              AvroCodec.of(InferenceRequest.class).encode(request("deadline-" + i, model, i)), sink, "soon"));
          default -> {
            window.acquire();
            String id = "good-" + i;
            CompletableFuture<InferenceReply> f = client.send(request(id, model, i));
            good.put(id, f);
            f.whenComplete((r, e) -> {
              answered.incrementAndGet();
              window.release();
            });
            if (i % EVERY == 0) {
              // a poisoned reply with the correlation id of this call in flight, on the client's reply topic
              ProducerRecord<String, byte[]> bad = new ProducerRecord<>(client.replyTopic(), id, twoBillionLongReply());
              KafkaHeaders.put(bad.headers(), KafkaHeaders.CORRELATION_ID, id);
              raw.send(bad);
            }
          }
        }
      }
      CompletableFuture.allOf(good.values().toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);

      List<String> failed = new ArrayList<>();
      good.forEach((id, f) -> {
        InferenceReply r = f.join();
        if (r.getError() != null) {
          failed.add(id + ": " + r.getError().getCode() + " " + r.getError().getMessage());
        }
      });
      assertThat(failed).as("good requests answered with an error").isEmpty();
      assertThat(good).hasSize(RECORDS - 3 * (RECORDS / EVERY));
      // A poisoned reply that lands after the call's real reply is dropped unread (nobody waits for it);
      // those that land first are decoded, refused and skipped while the call keeps waiting.
      assertThat(client.repliesUndecodable()).as("poisoned replies skipped by the client").isBetween(1L, (long) RECORDS / EVERY);
      log.info("{} good requests answered; {} duplicate replies dropped by the client after {} kills",
          good.size(), client.duplicatesDropped(), kills);
    }
    assertThat(kills).isEqualTo(2);

    // Every poison dead-lettered; deduplicated by provenance (a kill between the dead letter and the commit repeats it).
    Map<String, String> byProvenance = new ConcurrentHashMap<>();
    AvroCodec<DeadLetter> letters = AvroCodec.of(DeadLetter.class);
    int rawLetters = 0;
    try (KafkaConsumer<String, byte[]> in = KafkaFixture.consumer(topics.deadLetter())) {
      long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (byProvenance.size() < poisons.size() && System.nanoTime() < end) {
        for (ConsumerRecord<String, byte[]> r : in.poll(Duration.ofMillis(200))) {
          DeadLetter d = letters.decode(r.value());
          rawLetters++;
          byProvenance.put(d.getTopic() + "-" + d.getPartition() + "@" + d.getOffset(), r.key() + " " + d.getErrorClass());
        }
      }
    }
    Set<String> deadKeys = new TreeSet<>();
    byProvenance.values().forEach(v -> deadKeys.add(v.substring(0, v.indexOf(' '))));
    assertThat(deadKeys).isEqualTo(poisons);
    assertThat(byProvenance).hasSize(poisons.size()); // one poison record, one provenance
    log.info("{} poison records, {} dead letters ({} after deduplication by provenance)", poisons.size(), rawLetters, byProvenance.size());

    // The last worker: every loop alive and ready; readiness never lied.
    await().atMost(Duration.ofSeconds(60)).until(() -> status(http, port, "/health/ready") == 200);
    assertThat(status(http, port, "/health/live")).isEqualTo(200);
    String metrics = body(http, port, "/metrics");
    assertThat(metrics).contains("partita_worker_loop_alive{loop=\"worker-requests\"} 1.0")
        .doesNotMatch("(?s).*partita_worker_loop_alive\\{[^}]*\\} 0\\.0.*");
    sampling.set(false);
    sampler.join(5_000);
    assertThat(lies).isEmpty();
    assertThat(readySamples.get()).isPositive();
  }

  private static String sendPoison(KafkaProducer<String, byte[]> raw, String topic, String key, byte[] value, String replyTo,
                                   String deadline) throws Exception {
    ProducerRecord<String, byte[]> r = new ProducerRecord<>(topic, key, value);
    KafkaHeaders.put(r.headers(), KafkaHeaders.REPLY_TO, replyTo);
    KafkaHeaders.put(r.headers(), KafkaHeaders.CORRELATION_ID, key);
    if (deadline != null) {
      KafkaHeaders.put(r.headers(), KafkaHeaders.DEADLINE, deadline);
    }
    raw.send(r);
    return key;
  }

  private static InferenceRequest request(String id, String model, int i) {
    float[][] x = DemoMlp.sampleInput(1, i);
    ByteBuffer b = ByteBuffer.allocate(DemoMlp.INPUT_SIZE * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : x[0]) {
      b.putFloat(v);
    }
    b.flip();
    Tensor t = Tensor.newBuilder().setName(DemoMlp.INPUT).setDatatype("FP32").setShape(List.of(1L, (long) DemoMlp.INPUT_SIZE)).setData(b).build();
    return InferenceRequest.newBuilder().setId(id).setServiceModel(model).setVersion(null).setInputs(List.of(t)).build();
  }

  private static byte[] varint(long value) {
    long n = (value << 1) ^ (value >> 63);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while ((n & ~0x7FL) != 0) {
      out.write((int) ((n & 0x7F) | 0x80));
      n >>>= 7;
    }
    out.write((int) n);
    return out.toByteArray();
  }

  private static byte[] header(org.apache.avro.Schema schema) {
    return ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0xC3).put((byte) 0x01)
        .putLong(SchemaNormalization.parsingFingerprint64(schema)).array();
  }

  /** 32 bytes: an InferenceRequest whose inputs array declares 2,000,000,000 tensors. */
  static byte[] hugeCountRequest() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(header(InferenceRequest.getClassSchema()));
    out.writeBytes(new byte[] {2, 'a', 2, 'm', 0});
    out.writeBytes(varint(2_000_000_000L));
    while (out.size() < 32) {
      out.write(0);
    }
    return out.toByteArray();
  }

  /** An InferenceReply whose first string declares 2,000,000,000 bytes. */
  static byte[] twoBillionLongReply() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(header(InferenceReply.getClassSchema()));
    out.writeBytes(varint(2_000_000_000L));
    return out.toByteArray();
  }

  private static int status(HttpClient http, int port, String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).timeout(Duration.ofSeconds(2)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (Exception e) {
      return -1; // down (killed, starting)
    }
  }

  private static String body(HttpClient http, int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString()).body();
  }
}
