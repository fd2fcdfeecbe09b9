package io.partita.worker;

import static io.partita.worker.WorkerFixtures.record;
import static io.partita.worker.WorkerFixtures.request;
import static io.partita.worker.WorkerFixtures.toRows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.partita.avro.CatalogWeightFile;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.ModelVersion;
import io.partita.avro.MountStatus;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotStatus;
import io.partita.avro.TensorSignature;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.Sha256;
import io.partita.models.repo.TensorSpec;
import io.partita.models.repo.VersionEntry;
import io.partita.schemas.AvroCodec;
import io.partita.testkit.KafkaFixture;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker on a second "host": its own cache directory and no model repository, fed only by the
 * catalog, whose URIs point at a web server this test starts over the first host's repository.
 * Real broker, real ONNX Runtime on the demo model.
 */
@Tag("slow")
@ExtendWith(KafkaFixture.class)
class SecondHostIT {
  private static final AvroCodec<InferenceReply> REPLIES = AvroCodec.of(InferenceReply.class);
  private static final AvroCodec<SlotStatus> STATUS = AvroCodec.of(SlotStatus.class);
  private static final String TAMPERED_ADAPTER = "demo-mlp/adapters/c.onnx_adapter";
  private static final String BROKEN_MODEL = "broken-mlp";

  @TempDir Path repo;
  @TempDir Path cacheB;
  private Topics topics;
  private HttpServer server;
  private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
  private final List<InferenceWorker> workers = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    DemoRepository.writeTo(repo);
    topics = new Topics(KafkaFixture.uniquePrefix("second-host"));
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      String path = exchange.getRequestURI().getPath().substring(1);
      Path file = repo.resolve(path).normalize();
      if (!file.startsWith(repo) || !Files.isRegularFile(file)) {
        exchange.sendResponseHeaders(404, -1);
        exchange.close();
        return;
      }
      byte[] bytes = Files.readAllBytes(file);
      if (path.equals(TAMPERED_ADAPTER)) {
        bytes[bytes.length - 1] ^= 1; // the server's copy is not the file the catalog names
      }
      served.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
      exchange.sendResponseHeaders(200, bytes.length);
      try (var out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    });
    server.start();
  }

  @AfterEach
  void tearDown() {
    workers.forEach(InferenceWorker::close);
    if (server != null) {
      server.stop(0);
    }
  }

  @Test
  void shouldServeModelsFetchedOverHttpOnASecondHostWithTheFirstHostsAnswersAndRefuseAFileWhoseSha256DoesNotMatch()
      throws Exception {
    RepositoryIndex index = ModelRepository.scan(repo);
    String base = "http://127.0.0.1:" + server.getAddress().getPort();
    publishCatalog(index, base);
    float[][] x = DemoMlp.sampleInput(3, 11);
    List<String> callable = List.of("demo", "demo-a", "demo-b");

    // Given the first host, which reads the repository directory, has answered
    InferenceWorker hostA = start(Map.of("host.id", "host-a", "model.repo", repo.toString()));
    Map<String, InferenceReply> fromA = ask("host-a-client", callable, x);
    hostA.close();
    workers.remove(hostA);
    assertThat(served).as("the first host reads its own repository").isEmpty();

    // When a second host with only a cache directory serves the catalog's models
    start(Map.of("host.id", "host-b", "worker.models.from", "catalog", "worker.model.cache.dir", cacheB.toString()));
    Map<String, InferenceReply> fromB = ask("host-b-client", callable, x);

    // Then it answers what the first host answered, from files it fetched over HTTP
    for (String key : fromA.keySet()) {
      InferenceReply a = fromA.get(key);
      InferenceReply b = fromB.get(key);
      assertThat(a.getError()).as("host A %s", key).isNull();
      assertThat(b.getError()).as("host B %s", key).isNull();
      assertThat(b.getModelVersion()).as(key).isEqualTo(a.getModelVersion());
      float[][] rowsA = toRows(a.getOutputs().get(0));
      float[][] rowsB = toRows(b.getOutputs().get(0));
      String serviceModel = key.substring(0, key.lastIndexOf('@'));
      float[][] expected = DemoMlp.reference(x, DemoMlp.adapterForServiceModel(serviceModel).orElse(null), a.getModelVersion());
      for (int r = 0; r < x.length; r++) {
        for (int c = 0; c < expected[r].length; c++) {
          assertThat(rowsB[r][c]).as("%s[%d][%d]", key, r, c).isCloseTo(rowsA[r][c], within(1e-6f));
          assertThat(rowsA[r][c]).as("%s[%d][%d]", key, r, c).isCloseTo(expected[r][c], within(1e-4f));
        }
      }
    }
    assertThat(served.keySet()).contains("demo-mlp/1/model.onnx", "demo-mlp/2/model.onnx",
        DemoRepository.adapterPath("a"), DemoRepository.adapterPath("b"));
    Set<String> cached = Files.list(cacheB).map(p -> p.getFileName().toString()).collect(Collectors.toSet());
    assertThat(cached).contains(index.model(DemoMlp.MODEL_NAME).orElseThrow().version("1").orElseThrow().sha256(),
        Sha256.of(repo.resolve(DemoRepository.adapterPath("a"))));
    String wantC = Sha256.of(repo.resolve(TAMPERED_ADAPTER));
    assertThat(cached).as("a mismatching file never lands in the cache").doesNotContain(wantC);

    // And the weight file whose bytes do not match is refused, named in the slot status; so is the model file
    InferenceReply c = ask("host-b-client-c", List.of("demo-c"), x).values().iterator().next();
    assertThat(c.getError()).isNotNull();
    assertThat(c.getError().getCode()).isEqualTo(ErrorCode.NOT_READY);
    assertThat(c.getError().getMessage()).contains(base + "/" + TAMPERED_ADAPTER).contains("sha256");
    try (KafkaConsumer<String, byte[]> reader = KafkaFixture.consumer(topics.workerStatus())) {
      Map<String, SlotStatus> status = new HashMap<>();
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        readStatus(reader, status);
        List<MountStatus> mountsOfC = status.values().stream().filter(s -> s.getHost().equals("host-b"))
            .flatMap(s -> s.getServiceModels().stream()).filter(m -> m.getServiceModel().equals("demo-c")).toList();
        assertThat(mountsOfC).isNotEmpty().allSatisfy(m -> {
          assertThat(m.getState()).isEqualTo("NOT_READY");
          assertThat(m.getReason()).contains(base + "/" + TAMPERED_ADAPTER).contains("but the catalog says " + wantC);
        });
        List<SlotStatus> broken = status.values().stream()
            .filter(s -> s.getHost().equals("host-b") && s.getModel().equals(BROKEN_MODEL)).toList();
        assertThat(broken).isNotEmpty().allSatisfy(s -> {
          assertThat(s.getHealth()).isEqualTo("FAILED");
          assertThat(s.getMessage()).contains(base + "/demo-mlp/1/model.onnx").contains("sha256");
        });
      });
    }
  }

  private InferenceWorker start(Map<String, String> extra) throws Exception {
    Map<String, String> settings = new HashMap<>(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "worker.threads", "1",
        "worker.status.interval.ms", "500"));
    settings.putAll(extra);
    InferenceWorker worker = new InferenceWorker(WorkerConfig.from(Settings.of(settings)));
    workers.add(worker);
    worker.start();
    return worker;
  }

  /** Asks each service model for versions 1 and 2; the replies by "serviceModel@version". */
  private Map<String, InferenceReply> ask(String client, List<String> serviceModels, float[][] x) {
    String replyTopic = topics.replies(client);
    int sent = 0;
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      for (String model : serviceModels) {
        for (String version : List.of("1", "2")) {
          producer.send(record(topics.requests(DemoMlp.MODEL_NAME), request(model + "@" + version, model, version, x), replyTopic));
          sent++;
        }
      }
    }
    List<ConsumerRecord<String, byte[]>> records = KafkaFixture.read(sent, Duration.ofSeconds(120), replyTopic);
    assertThat(records).hasSize(sent);
    return records.stream().collect(Collectors.toMap(
        r -> KafkaHeaders.get(r.headers(), KafkaHeaders.CORRELATION_ID), r -> REPLIES.decode(r.value()), (a, b) -> a));
  }

  /**
   * The repository's catalog with every file named under {@code base}, as {@code catalog.base-uri}
   * publishes it, plus a model whose record names demo-mlp version 1's file with version 2's sha256.
   */
  private void publishCatalog(RepositoryIndex index, String base) throws Exception {
    Codecs codecs = Codecs.from(Settings.of(Map.of()));
    var versions = codecs.codec(ModelVersion.class);
    var services = codecs.codec(ServiceModel.class);
    List<ProducerRecord<String, byte[]>> out = new ArrayList<>();
    VersionEntry v1 = null;
    VersionEntry v2 = null;
    for (VersionEntry v : index.model(DemoMlp.MODEL_NAME).orElseThrow().versions().values()) {
      out.add(new ProducerRecord<>(topics.catalogModels(), v.model() + "/" + v.version(),
          versions.encode(topics.catalogModels(), version(v.model(), v, base + "/" + v.relativePath(), v.sha256()))));
      if (v.version().equals("1")) {
        v1 = v;
      } else {
        v2 = v;
      }
    }
    out.add(new ProducerRecord<>(topics.catalogModels(), BROKEN_MODEL + "/1",
        versions.encode(topics.catalogModels(), version(BROKEN_MODEL, v1, base + "/" + v1.relativePath(), v2.sha256()))));
    for (ServiceModelEntry sm : index.serviceModels().values()) {
      CatalogWeightFile file = sm.weightFile().map(w -> new CatalogWeightFile(base + "/" + w.relativePath(), w.sha256(), 0L))
          .orElse(null);
      out.add(new ProducerRecord<>(topics.catalogServices(), sm.name(), services.encode(topics.catalogServices(),
          ServiceModel.newBuilder().setName(sm.name()).setBaseModel(sm.baseModel()).setWeightFile(file).build())));
    }
    out.add(new ProducerRecord<>(topics.catalogServices(), "broken", services.encode(topics.catalogServices(),
        ServiceModel.newBuilder().setName("broken").setBaseModel(BROKEN_MODEL).setWeightFile(null).build())));
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      for (ProducerRecord<String, byte[]> r : out) {
        producer.send(r).get();
      }
    }
  }

  private static ModelVersion version(String model, VersionEntry v, String uri, String sha256) {
    return ModelVersion.newBuilder().setModel(model).setVersion(v.version()).setUri(uri).setSha256(sha256)
        .setPrecision(v.precision().text()).setProviders(v.providers()).setAccuracy(null).setMemoryBytes(null)
        .setInputs(signature(v.signature().inputs())).setOutputs(signature(v.signature().outputs())).build();
  }

  private static List<TensorSignature> signature(List<TensorSpec> specs) {
    return specs.stream().map(t -> new TensorSignature(t.name(), t.type().oipDatatype(), t.shape())).toList();
  }

  private static void readStatus(KafkaConsumer<String, byte[]> reader, Map<String, SlotStatus> status) {
    for (ConsumerRecord<String, byte[]> r : reader.poll(Duration.ofMillis(200))) {
      if (r.value() == null) {
        status.remove(r.key());
      } else {
        status.put(r.key(), STATUS.decode(r.value()));
      }
    }
  }
}
