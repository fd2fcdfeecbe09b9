package io.partita.bench;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.client.PartitaClient;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.serde.Codecs;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.launcher.broker.EmbeddedKafka;
import io.partita.planner.plan.Keys;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A whole Partita pipeline for one benchmark configuration: an embedded broker on free ports, a
 * model repository holding the benchmark's models, one inference worker and one gateway, all in
 * this JVM (the same cores the engine figures used). The worker runs its own slots (the settings
 * say which), or follows the plan's slots given to it.
 */
final class PipelineEnv implements AutoCloseable {
  final EmbeddedKafka kafka;
  /** The worker in this JVM; null when it runs elsewhere ({@link #withoutWorker}). */
  final InferenceWorker worker;
  /** The model repository the worker serves. */
  final Path repo;
  final Gateway gateway;
  final String prefix;

  PipelineEnv(Path dir, List<BenchModel> models, Map<String, String> workerSettings, int threads) throws Exception {
    this(dir, repositoryOf(dir.resolve("repo"), models), workerSettings, threads);
  }

  /** A model repository holding each benchmark model as {@code <name>/1/model.onnx}. */
  static Path repositoryOf(Path repo, List<BenchModel> models) throws IOException {
    for (BenchModel m : models) {
      Path version = repo.resolve(m.name()).resolve("1");
      Files.createDirectories(version);
      Files.copy(m.file(), version.resolve("model.onnx"));
    }
    return repo;
  }

  PipelineEnv(Path dir, Path repo, Map<String, String> workerSettings, int threads) throws Exception {
    this(dir, repo, workerSettings, threads, null);
  }

  /** @param cpu told which threads each part's start created (null: nobody asks) */
  PipelineEnv(Path dir, List<BenchModel> models, Map<String, String> workerSettings, int threads, CpuSplit cpu) throws Exception {
    this(dir, repositoryOf(dir.resolve("repo"), models), workerSettings, threads, cpu);
  }

  PipelineEnv(Path dir, Path repo, Map<String, String> workerSettings, int threads, CpuSplit cpu) throws Exception {
    this(dir, repo, workerSettings, threads, List.of(), cpu, true);
  }

  /**
   * A pipeline whose worker runs the plan's slots: the assignments are published on this broker's
   * {@code plan.assignments} before the worker starts, and the worker follows them
   * ({@code worker.follow-plan}, {@code host.id} of the assignments), as {@code partita local}'s
   * worker follows the live planner's. Returns once the worker runs exactly those slots.
   */
  PipelineEnv(Path dir, List<BenchModel> models, Map<String, String> workerSettings, List<SlotAssignment> plan, CpuSplit cpu)
      throws Exception {
    this(dir, repositoryOf(dir.resolve("repo"), models), workerSettings, 0, plan, cpu, true);
  }

  /**
   * A broker and a gateway in this JVM and the models' repository, without a worker: the caller
   * starts one elsewhere (its own process, on other cores) with {@link #repo} and the broker's address.
   */
  static PipelineEnv withoutWorker(Path dir, List<BenchModel> models) throws Exception {
    return new PipelineEnv(dir, repositoryOf(dir.resolve("repo"), models), Map.of(), 0, List.of(), null, false);
  }

  private PipelineEnv(Path dir, Path repo, Map<String, String> workerSettings, int threads, List<SlotAssignment> plan, CpuSplit cpu,
      boolean withWorker) throws Exception {
    this.repo = repo;
    if (cpu != null) {
      cpu.part("other Java");
    }
    kafka = new EmbeddedKafka(freePortPair(), dir);
    kafka.start();
    if (cpu != null) {
      cpu.part("broker");
    }
    prefix = "bench";
    Map<String, String> values = new HashMap<>();
    values.put("kafka.bootstrap.servers", kafka.bootstrapServers());
    values.put("kafka.max.request.size", Integer.toString(8 << 20));
    values.put("topic.prefix", prefix);
    values.put("model.repo", repo.toString());
    values.put("http.port", "0");
    values.put("worker.threads", Integer.toString(threads));
    values.put("gateway.id", "bench");
    values.put("gateway.routing", "any"); // no planner here: requests go straight to the worker group
    values.putAll(workerSettings);
    if (!plan.isEmpty()) {
      values.put("worker.follow-plan", "true");
      values.put("host.id", plan.get(0).getHost());
      publish(plan);
    }
    Settings settings = Settings.of(values);
    worker = withWorker ? new InferenceWorker(WorkerConfig.from(settings)) : null;
    if (worker != null) {
      worker.start();
    }
    if (!plan.isEmpty()) {
      awaitSlots(plan, Duration.ofSeconds(120));
    }
    if (cpu != null) {
      cpu.part("worker");
    }
    gateway = new Gateway(GatewayConfig.from(settings));
    gateway.start();
    if (cpu != null) {
      cpu.part("gateway");
    }
  }

  /** Publishes the plan's slots on {@code <prefix>.plan.assignments} (key host/slot), as the planner does. */
  private void publish(List<SlotAssignment> plan) throws Exception {
    Topics topics = new Topics(prefix);
    Codecs codecs = Codecs.singleObject();
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    try (Admin admin = Admin.create(props)) {
      TopicAdmin.ensure(admin, List.of(TopicSpec.compacted(topics.planAssignments())), (short) 1);
    }
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer())) {
      for (SlotAssignment a : plan) {
        producer.send(topics.planAssignments(codecs).record(Keys.hostSlot(a.getHost(), a.getSlot()), a)).get(30, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * Waits until the worker runs exactly the plan's slots, each ready, on the planned CPUs with the
   * planned largest batch and its instances mounted; otherwise fails naming what it runs.
   */
  private void awaitSlots(List<SlotAssignment> plan, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<SlotStatus> now = worker.slots().statuses();
    while (!matches(plan, now)) {
      if (System.nanoTime() > deadline) {
        worker.close();
        kafka.close();
        throw new IllegalStateException("the worker did not take the plan's slots in " + timeout.toSeconds() + " s: planned "
            + plan.stream().map(a -> a.getSlot() + " cpus " + a.getCpus() + " batch " + a.getMaxBatch()).toList() + ", it runs "
            + now.stream().map(s -> s.getSlot() + " cpus " + s.getCpus() + " batch " + s.getMaxBatch() + " " + s.getHealth()).toList());
      }
      // A fixed poll: the worker offers its slots only as a snapshot (no change callback), the plan's slots open in
      // a few seconds, and this runs once per pipeline, bounded by the deadline above.
      Thread.sleep(100);
      now = worker.slots().statuses();
    }
  }

  static boolean matches(List<SlotAssignment> plan, List<SlotStatus> running) {
    if (plan.size() != running.size()) {
      return false;
    }
    for (SlotAssignment a : plan) {
      boolean found = running.stream().anyMatch(s -> s.getSlot().equals(a.getSlot()) && s.getHealth().equals("READY")
          && s.getCpus().equals(a.getCpus()) && s.getMaxBatch() == a.getMaxBatch() && s.getModel().equals(a.getModel())
          && a.getServiceModels().stream().allMatch(i -> mounted(s, i)));
      if (!found) {
        return false;
      }
    }
    return true;
  }

  /** Whether the slot reports the assigned instance's service model mounted and ready. */
  private static boolean mounted(SlotStatus s, AssignedServiceModel instance) {
    return s.getServiceModels().stream()
        .anyMatch(m -> m.getServiceModel().equals(instance.getServiceModel()) && m.getState().equals("READY"));
  }

  static int freePortPair() throws IOException {
    for (int i = 0; i < 50; i++) {
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      try (ServerSocket next = new ServerSocket(port + 1)) {
        return port;
      } catch (IOException busy) {
        // the controller port is taken: try another pair
      }
    }
    throw new IOException("no two adjacent free ports for the embedded broker");
  }

  /**
   * A Kafka-native client of this pipeline, on its own reply topic: its id is not the gateway's
   * ({@code gateway.id=bench}), else each would read the other's replies and drop them.
   */
  PartitaClient client() {
    return PartitaClient.start(PartitaClient.Config.of(kafka.bootstrapServers())
        .withTopicPrefix(prefix).withClientId("bench-client").withTimeout(Duration.ofSeconds(60)));
  }

  /** A client that packs concurrent calls ({@code PartitaClient.Config.withPacking}), on its own reply topic. */
  PartitaClient packingClient(PartitaClient.Packing packing) {
    return PartitaClient.start(PartitaClient.Config.of(kafka.bootstrapServers())
        .withTopicPrefix(prefix).withClientId("bench-packing-" + packing.inFlight()).withTimeout(Duration.ofSeconds(60)).withPacking(packing));
  }

  @Override
  public void close() {
    gateway.close();
    if (worker != null) {
      worker.close();
    }
    kafka.close();
  }
}
