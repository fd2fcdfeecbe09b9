package io.partita.worker;

import static io.partita.worker.WorkerFixtures.record;
import static io.partita.worker.WorkerFixtures.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.AssignedWeightFile;
import io.partita.avro.InferenceReply;
import io.partita.avro.MountStatus;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.schemas.AvroCodec;
import io.partita.testkit.KafkaFixture;
import io.partita.runtime.Pinning;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker follows {@code plan.assignments} for its host: assignments produced the way the planner
 * writes them (transactions, key host/slot, instance ids {@code <service model>#<n>}) replace the
 * start-up slots, then a change of grouping ({2} to {1,1}) while requests flow loses none.
 */
@ExtendWith(KafkaFixture.class)
class FollowPlanIT {
  private static final String HOST = "plan-host";
  private static final AvroCodec<InferenceReply> REPLIES = AvroCodec.of(InferenceReply.class);
  private static final AvroCodec<SlotAssignment> ASSIGNMENTS = AvroCodec.of(SlotAssignment.class);
  private static final AvroCodec<SlotStatus> STATUS = AvroCodec.of(SlotStatus.class);

  @TempDir Path repo;
  private InferenceWorker worker;
  private ScheduledExecutorService sender;

  @AfterEach
  void tearDown() {
    if (sender != null) {
      sender.shutdownNow();
    }
    if (worker != null) {
      worker.close();
    }
  }

  @Test
  void shouldSwitchFromOneTwoCoreSlotToTwoOneCoreSlotsWithoutLosingARequest() throws Exception {
    RepositoryIndex index = WorkerFixtures.demoRepository(repo);
    List<Integer> cpus = Pinning.usableCpus();
    org.junit.jupiter.api.Assumptions.assumeTrue(cpus.size() >= 2, "needs two usable CPUs");
    Topics topics = new Topics(KafkaFixture.uniquePrefix("follow"));
    String replyTopic = topics.replies("follow-client");
    worker = new InferenceWorker(WorkerConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "host.id", HOST,
        "model.repo", repo.toString(),
        "worker.threads", "1",
        "worker.status.interval.ms", "500",
        "worker.follow-plan", "true"))));
    worker.start();
    Set<String> startUp = new HashSet<>();
    worker.slots().slots().forEach(s -> startUp.add(s.spec().name()));

    String version = DemoMlp.VERSIONS.get(DemoMlp.VERSIONS.size() - 1);
    List<String> models = DemoMlp.SERVICE_MODELS;
    try (KafkaProducer<String, byte[]> plan = transactional();
         KafkaConsumer<String, byte[]> statusReader = KafkaFixture.consumer(topics.workerStatus())) {
      Map<String, SlotStatus> status = new HashMap<>();
      Set<String> tombstoned = new HashSet<>();

      // Phase 1: one 2-core slot serving every demo service model.
      publish(plan, topics, Map.of("cpu-0", assignment(index, "cpu-0", version, cpus.subList(0, 2), models)), Set.of());
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        readStatus(statusReader, status, tombstoned);
        assertPlanned(status.get(HOST + "/cpu-0"), cpus.subList(0, 2), models);
        assertThat(tombstoned).containsAll(startUp);
      });
      startUp.forEach(k -> assertThat(status).doesNotContainKey(k));

      // A steady stream of requests for every demo service model, across the switch.
      int total = 300;
      AtomicInteger sent = new AtomicInteger();
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < total; i++) {
        ids.add("req-" + i);
      }
      KafkaProducer<String, byte[]> requests = KafkaFixture.producer();
      sender = Executors.newSingleThreadScheduledExecutor();
      sender.scheduleAtFixedRate(() -> {
        int i = sent.get();
        if (i >= total) {
          return;
        }
        String model = models.get(i % models.size());
        requests.send(record(topics.requests(DemoMlp.MODEL_NAME), request(ids.get(i), model, DemoMlp.sampleInput(1 + i % 3, i)), replyTopic));
        sent.incrementAndGet();
      }, 0, 20, TimeUnit.MILLISECONDS);
      await().atMost(Duration.ofSeconds(30)).until(() -> sent.get() >= total / 4);

      // Phase 2: the planner regroups the two cores as {1,1}; the instances are split over the slots.
      Map<String, SlotAssignment> split = new HashMap<>();
      split.put("cpu-0", assignment(index, "cpu-0", version, cpus.subList(0, 1), models.subList(0, 2)));
      split.put("cpu-1", assignment(index, "cpu-1", version, cpus.subList(1, 2), models.subList(2, models.size())));
      publish(plan, topics, split, Set.of());

      await().atMost(Duration.ofSeconds(60)).until(() -> sent.get() >= total);
      requests.flush();
      requests.close();

      Map<String, InferenceReply> replies = new ConcurrentHashMap<>();
      List<String> errors = new ArrayList<>();
      int[] received = {0};
      try (KafkaConsumer<String, byte[]> replyReader = KafkaFixture.consumer(replyTopic)) {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
          for (ConsumerRecord<String, byte[]> r : replyReader.poll(Duration.ofMillis(200))) {
            received[0]++;
            InferenceReply reply = REPLIES.decode(r.value());
            replies.put(KafkaHeaders.get(r.headers(), KafkaHeaders.CORRELATION_ID), reply);
            if (reply.getError() != null) {
              errors.add(reply.getId() + ": " + reply.getError().getCode() + " " + reply.getError().getMessage());
            }
          }
          assertThat(replies.keySet()).containsExactlyInAnyOrderElementsOf(ids);
        });
      }
      assertThat(errors).isEmpty();
      Set<String> instances = new HashSet<>();
      replies.values().forEach(r -> instances.add(r.getInstance()));
      System.out.printf("FollowPlanIT: %d requests, %d replies (%d duplicates), answered by %s%n",
          total, received[0], received[0] - total, instances);
      // Both groupings served: the 2-core slot before the switch, the 1-core slots after it.
      assertThat(instances).contains(HOST + "/cpu-0", HOST + "/cpu-1");

      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        readStatus(statusReader, status, tombstoned);
        assertPlanned(status.get(HOST + "/cpu-0"), cpus.subList(0, 1), models.subList(0, 2));
        assertPlanned(status.get(HOST + "/cpu-1"), cpus.subList(1, 2), models.subList(2, models.size()));
      });
      assertThat(worker.slots().slots()).hasSize(2);

      // Phase 3: the plan drops cpu-1 (its service models move to cpu-0): cpu-1 is tombstoned.
      publish(plan, topics, Map.of("cpu-0", assignment(index, "cpu-0", version, cpus.subList(0, 1), models)), Set.of("cpu-1"));
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        readStatus(statusReader, status, tombstoned);
        assertPlanned(status.get(HOST + "/cpu-0"), cpus.subList(0, 1), models);
        assertThat(status).doesNotContainKey(HOST + "/cpu-1");
        assertThat(tombstoned).contains(HOST + "/cpu-1");
      });
      assertThat(worker.failure()).isNull();
    }
  }

  @Test
  void shouldKeepServingFromTheCurrentSlotsWhenTheAssignmentCannotBeApplied() throws Exception {
    RepositoryIndex index = WorkerFixtures.demoRepository(repo);
    List<Integer> cpus = Pinning.usableCpus();
    Topics topics = new Topics(KafkaFixture.uniquePrefix("refuse"));
    String replyTopic = topics.replies("refuse-client");
    worker = new InferenceWorker(WorkerConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "host.id", HOST,
        "model.repo", repo.toString(),
        "worker.threads", "1",
        "worker.status.interval.ms", "500",
        "worker.follow-plan", "true"))));
    worker.start();
    Set<String> startUp = new HashSet<>();
    worker.slots().slots().forEach(s -> startUp.add(s.spec().name()));
    String version = DemoMlp.VERSIONS.get(0);
    SlotAssignment good = assignment(index, "cpu-0", version, cpus.subList(0, 1), List.of("demo-a"));
    AssignedServiceModel a = good.getServiceModels().get(0);
    SlotAssignment badWeights = SlotAssignment.newBuilder(good).setServiceModels(List.of(new AssignedServiceModel(a.getServiceModel(),
        a.getInstanceId(), new AssignedWeightFile(a.getWeightFile().getPath(), "0".repeat(64))))).build();
    SlotAssignment unknownVersion = SlotAssignment.newBuilder(good).setSlot("cpu-1").setVersion("no-such-version").build();
    try (KafkaProducer<String, byte[]> plan = transactional();
         KafkaConsumer<String, byte[]> statusReader = KafkaFixture.consumer(topics.workerStatus())) {
      Map<String, SlotStatus> status = new HashMap<>();
      Set<String> tombstoned = new HashSet<>();
      for (SlotAssignment refused : List.of(badWeights, unknownVersion)) {
        publish(plan, topics, Map.of(refused.getSlot(), refused), Set.of());
        String field = refused == badWeights ? "sha256" : "version";
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
          readStatus(statusReader, status, tombstoned);
          SlotStatus s = status.get(HOST + "/" + refused.getSlot());
          assertThat(s).isNotNull();
          assertThat(s.getHealth()).isEqualTo("FAILED");
          assertThat(s.getMessage()).contains(field);
          assertThat(s.getServiceModels()).extracting(MountStatus::getState).containsOnly("NOT_READY");
          startUp.forEach(k -> assertThat(status.get(k)).as(k).isNotNull());
          startUp.forEach(k -> assertThat(status.get(k).getMessage()).as(k).contains("not applied"));
        });
        publish(plan, topics, Map.of(), Set.of(refused.getSlot()));
      }
      assertThat(tombstoned).doesNotContainAnyElementsOf(startUp);
      try (KafkaProducer<String, byte[]> requests = KafkaFixture.producer()) {
        requests.send(record(topics.requests(DemoMlp.MODEL_NAME), request("still-served", "demo-a", DemoMlp.sampleInput(2, 1)), replyTopic));
      }
      List<ConsumerRecord<String, byte[]>> replies = KafkaFixture.read(1, Duration.ofSeconds(60), replyTopic);
      assertThat(replies).hasSize(1);
      InferenceReply reply = REPLIES.decode(replies.get(0).value());
      assertThat(reply.getError()).isNull();
      assertThat(startUp).contains(reply.getInstance());
    }
  }

  private static void assertPlanned(SlotStatus s, List<Integer> cpus, List<String> models) {
    assertThat(s).as("status").isNotNull();
    assertThat(s.getCpus()).isEqualTo(cpus);
    assertThat(s.getHealth()).isEqualTo("READY");
    assertThat(s.getRequestPartitions()).isNotEmpty();
    // The planned instances; besides them, a slot of the base model may hold service models it mounted on demand
    // (a request for one came while it was the least loaded slot): those carry the id host/slot/service model.
    List<String> planned = s.getServiceModels().stream().map(MountStatus::getInstanceId).filter(id -> id.endsWith("#0")).sorted().toList();
    assertThat(planned).isEqualTo(models.stream().map(m -> m + "#0").sorted().toList());
    assertThat(s.getServiceModels()).filteredOn(m -> !m.getInstanceId().endsWith("#0"))
        .allSatisfy(m -> assertThat(m.getInstanceId()).isEqualTo(s.getHost() + "/" + s.getSlot() + "/" + m.getServiceModel()));
    s.getServiceModels().forEach(m -> assertThat(m.getState()).as(m.getServiceModel()).isIn("READY", "EVICTED"));
  }

  private static void readStatus(KafkaConsumer<String, byte[]> reader, Map<String, SlotStatus> status, Set<String> tombstoned) {
    for (ConsumerRecord<String, byte[]> r : reader.poll(Duration.ofMillis(200))) {
      if (r.value() == null) {
        status.remove(r.key());
        tombstoned.add(r.key());
      } else {
        status.put(r.key(), STATUS.decode(r.value()));
        tombstoned.remove(r.key());
      }
    }
  }

  /** What the planner writes for one slot: the slot's model version, its CPUs, and one instance per service model. */
  private static SlotAssignment assignment(RepositoryIndex index, String slot, String version, List<Integer> cpus, List<String> models) {
    List<AssignedServiceModel> services = new ArrayList<>();
    for (String m : models) {
      ServiceModelEntry entry = index.serviceModel(m).orElseThrow();
      AssignedWeightFile file = entry.weightFile().map(w -> new AssignedWeightFile(w.relativePath(), w.sha256())).orElse(null);
      services.add(new AssignedServiceModel(m, m + "#0", file));
    }
    return SlotAssignment.newBuilder().setHost(HOST).setSlot(slot).setModel(DemoMlp.MODEL_NAME).setVersion(version).setPool("cpu")
        .setCpus(List.copyOf(cpus)).setGpu(-1).setProvider("CPU").setThreads(cpus.size()).setMaxBatch(8)
        .setMemoryBudgetBytes(0).setPlanId(null).setTimestamp(0).setServiceModels(services).build();
  }

  /** One planner transaction: the slots written, the dropped ones tombstoned. */
  private static void publish(KafkaProducer<String, byte[]> producer, Topics topics, Map<String, SlotAssignment> slots, Set<String> dropped) {
    String topic = topics.planAssignments();
    producer.beginTransaction();
    slots.forEach((slot, a) -> producer.send(new ProducerRecord<>(topic, HOST + "/" + slot, ASSIGNMENTS.encode(a))));
    dropped.forEach(slot -> producer.send(new ProducerRecord<>(topic, HOST + "/" + slot, null)));
    producer.commitTransaction();
  }

  private static KafkaProducer<String, byte[]> transactional() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaFixture.bootstrapServers());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "follow-plan-" + UUID.randomUUID());
    KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p);
    producer.initTransactions();
    return producer;
  }
}
