package io.partita.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.Service;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.models.demo.DemoRepository;
import io.partita.profiler.ProfilerConfig;
import io.partita.profiler.ProfilerService;
import io.partita.testkit.SaslCluster;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Security settings pass through {@code kafka.*} to every Kafka client a component makes (admin,
 * producer, consumer): against a SASL/SCRAM broker that denies whatever no ACL allows, a worker,
 * a gateway and a plain client, each its own user with only the ACLs listed in docs/deployment.md,
 * serve requests end to end, and the profiler publishes; a component with a wrong password fails
 * fast, naming authentication. (The planner is not here: it passes the {@code kafka.*} settings to
 * its admin and Streams clients, but no test runs it against an authorizer yet.)
 */
class SaslAclIT {
  private static SaslCluster cluster;

  @TempDir Path repo;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = SaslCluster.start();
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** The worker's ACLs as docs/deployment.md lists them, on topic prefix {@code p}. */
  private static void grantWorker(String user, String p) throws Exception {
    cluster.allow(user, ResourceType.TOPIC, p + ".", PatternType.PREFIXED, AclOperation.DESCRIBE, AclOperation.CREATE);
    for (String read : List.of(".requests.", ".plan.", ".catalog.")) {
      cluster.allow(user, ResourceType.TOPIC, p + read, PatternType.PREFIXED, AclOperation.READ);
    }
    cluster.allow(user, ResourceType.TOPIC, p + ".replies.", PatternType.PREFIXED, AclOperation.WRITE);
    for (String write : List.of(".deadletter", ".workers.status", ".hosts.environments")) {
      cluster.allow(user, ResourceType.TOPIC, p + write, PatternType.LITERAL, AclOperation.WRITE);
    }
    cluster.allow(user, ResourceType.GROUP, p + ".workers", PatternType.PREFIXED, AclOperation.READ);
  }

  /** A gateway's ACLs as docs/deployment.md lists them, for gateway id {@code id}. */
  private static void grantGateway(String user, String p, String id) throws Exception {
    cluster.allow(user, ResourceType.TOPIC, p + ".", PatternType.PREFIXED, AclOperation.DESCRIBE, AclOperation.CREATE);
    cluster.allow(user, ResourceType.TOPIC, p + ".requests.", PatternType.PREFIXED, AclOperation.WRITE);
    cluster.allow(user, ResourceType.TOPIC, p + ".replies." + id, PatternType.LITERAL, AclOperation.READ);
    for (String read : List.of(".plan.", ".catalog.")) {
      cluster.allow(user, ResourceType.TOPIC, p + read, PatternType.PREFIXED, AclOperation.READ);
    }
    cluster.allow(user, ResourceType.TOPIC, p + ".workers.status", PatternType.LITERAL, AclOperation.READ);
    cluster.allow(user, ResourceType.TOPIC, p + ".jobs", PatternType.PREFIXED, AclOperation.READ, AclOperation.WRITE);
    for (String write : List.of(".demand", ".deadletter")) {
      cluster.allow(user, ResourceType.TOPIC, p + write, PatternType.LITERAL, AclOperation.WRITE);
    }
    cluster.allow(user, ResourceType.GROUP, p + ".gateway", PatternType.PREFIXED, AclOperation.READ);
  }

  /** The profiler's ACLs as docs/deployment.md lists them. */
  private static void grantProfiler(String user, String p) throws Exception {
    cluster.allow(user, ResourceType.TOPIC, p + ".", PatternType.PREFIXED, AclOperation.DESCRIBE, AclOperation.CREATE);
    cluster.allow(user, ResourceType.TOPIC, p + ".profile.requests", PatternType.LITERAL, AclOperation.READ);
    cluster.allow(user, ResourceType.TOPIC, p + ".workers.status", PatternType.LITERAL, AclOperation.READ);
    cluster.allow(user, ResourceType.GROUP, p + ".profiler.", PatternType.PREFIXED, AclOperation.READ);
    for (String write : List.of(".profile.timings", ".profile.status", ".hosts.environments", ".deadletter")) {
      cluster.allow(user, ResourceType.TOPIC, p + write, PatternType.LITERAL, AclOperation.WRITE);
    }
  }

  private Map<String, String> settings(String user, String password, String prefix, Map<String, String> more) {
    Map<String, String> s = new HashMap<>(cluster.clientSettings(user, password));
    s.put("topic.prefix", prefix);
    s.put("model.repo", repo.toString());
    s.put("host.id", "sasl-host");
    s.put("worker.threads", "1");
    s.put("http.port", "0");
    // The gateway produces straight to the request topic: no planner runs in these tests.
    s.put("gateway.routing", "any");
    s.putAll(more);
    return s;
  }

  @Test
  void shouldServeRequestsEndToEndWithScramCredentialsAndOnlyTheDocumentedAcls() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics("sasl-ok");
    cluster.createUser("partita-worker", "worker-secret");
    cluster.createUser("partita-gateway", "gateway-secret");
    cluster.createUser("some-client", "client-secret");
    grantWorker("partita-worker", topics.prefix());
    grantGateway("partita-gateway", topics.prefix(), "gw1");
    String replyTopic = topics.replies("some-client");
    cluster.allow("some-client", ResourceType.TOPIC, topics.prefix() + ".requests.", PatternType.PREFIXED, AclOperation.WRITE, AclOperation.DESCRIBE);
    cluster.allow("some-client", ResourceType.TOPIC, replyTopic, PatternType.LITERAL, AclOperation.READ, AclOperation.DESCRIBE);
    try (Admin admin = cluster.admin()) {
      admin.createTopics(List.of(new NewTopic(replyTopic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }

    try (InferenceWorker worker = new InferenceWorker(WorkerConfig.from(Settings.of(settings("partita-worker", "worker-secret", topics.prefix(), Map.of()))));
         Gateway gateway = new Gateway(GatewayConfig.from(Settings.of(settings("partita-gateway", "gateway-secret", topics.prefix(), Map.of("gateway.id", "gw1")))))) {
      worker.start();
      gateway.start();

      // Through the gateway over HTTP: gateway user produces, worker user consumes and replies
      HttpResponse<String> http = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://localhost:" + gateway.port() + "/v2/models/demo-a/infer"))
          .timeout(Duration.ofSeconds(60))
          .POST(HttpRequest.BodyPublishers.ofString("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      assertThat(http.statusCode()).as(http.body()).isEqualTo(200);
      assertThat(http.body()).contains("\"outputs\"");

      // Straight through Kafka, as any authenticated client
      Map<String, String> clientKafka = kafkaOnly(cluster.clientSettings("some-client", "client-secret"));
      RecordCodec<InferenceRequest> requests = Codecs.singleObject().codec(InferenceRequest.class);
      RecordCodec<InferenceReply> replies = Codecs.singleObject().codec(InferenceReply.class);
      try (ReplyCollector collector = new ReplyCollector(cluster.bootstrapServers(), clientKafka, replyTopic, 1, replies, id -> { });
           KafkaProducer<String, byte[]> producer = Requests.producer(cluster.bootstrapServers(), clientKafka)) {
        producer.send(Requests.record(topics.requests("demo-mlp"), requests, Requests.request("sasl-1", "demo", 3), replyTopic)).get(30, TimeUnit.SECONDS);
        Awaitility.await("the reply to sasl-1").atMost(Duration.ofSeconds(60)).until(() -> collector.replies().containsKey("sasl-1"));
        assertThat(collector.replies().get("sasl-1").getError()).isNull();
        assertThat(collector.replies().get("sasl-1").getOutputs()).isNotEmpty();
      }
      assertThat(worker.failure()).isNull();
    }
  }

  @Test
  void shouldRunTheProfilerWithScramCredentialsAndOnlyItsDocumentedAcls() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics("sasl-prof");
    cluster.createUser("partita-profiler", "profiler-secret");
    cluster.createUser("reader", "reader-secret");
    grantProfiler("partita-profiler", topics.prefix());
    cluster.allow("reader", ResourceType.TOPIC, topics.hostEnvironments(), PatternType.LITERAL, AclOperation.READ, AclOperation.DESCRIBE);

    try (ProfilerService profiler = new ProfilerService(ProfilerConfig.from(Settings.of(settings("partita-profiler", "profiler-secret", topics.prefix(),
            Map.of("profiler.baseline", "false")))))) {
      profiler.start();
      // The profiler published this host's environment where an authorized reader finds it
      Map<String, String> reader = kafkaOnly(cluster.clientSettings("reader", "reader-secret"));
      Awaitility.await("the host environment on " + topics.hostEnvironments()).atMost(Duration.ofSeconds(90))
          .until(() -> countRecords(reader, topics.hostEnvironments()) > 0);
      assertThat(profiler.failure()).isNull();
    }
  }

  private static int countRecords(Map<String, String> clientSettings, String topic) {
    Properties p = new Properties();
    p.putAll(clientSettings);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      TopicPartition partition = new TopicPartition(topic, 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      return consumer.poll(Duration.ofSeconds(2)).count();
    }
  }

  @Test
  void shouldFailFastNamingAuthenticationWhenTheWorkerPasswordIsWrong() throws Exception {
    DemoRepository.writeTo(repo);
    cluster.createUser("worker-2", "right-password");
    Map<String, String> bounded = Map.of("kafka.default.api.timeout.ms", "15000", "kafka.max.block.ms", "15000", "kafka.request.timeout.ms", "10000");
    InferenceWorker worker = new InferenceWorker(WorkerConfig.from(Settings.of(settings("worker-2", "wrong-password", "sasl-bad", bounded))));
    assertFailsNamingAuthentication(worker, worker::failure);
  }

  @Test
  void shouldFailFastNamingAuthenticationWhenTheGatewayPasswordIsWrong() throws Exception {
    DemoRepository.writeTo(repo);
    Map<String, String> bounded = Map.of("kafka.default.api.timeout.ms", "15000", "kafka.max.block.ms", "15000", "kafka.request.timeout.ms", "10000", "gateway.id", "gw-bad");
    Gateway gateway = new Gateway(GatewayConfig.from(Settings.of(settings("nobody", "nothing", "sasl-bad-gw", bounded))));
    assertFailsNamingAuthentication(gateway, () -> null);
  }

  /**
   * The component either refuses to start or reports the failure of its loop; both within a
   * bound (a hang fails the test) and with a message that says authentication failed.
   */
  private static void assertFailsNamingAuthentication(Service service, Supplier<Throwable> loopFailure) {
    try (service) {
      Throwable failure = assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
        Throwable thrown = catchThrowable(service::start);
        if (thrown != null) {
          return thrown;
        }
        Awaitility.await("the loop to report the failure").atMost(Duration.ofSeconds(60)).until(() -> loopFailure.get() != null);
        return loopFailure.get();
      }, "the component hung instead of failing on wrong credentials");
      assertThat(failure).isNotNull();
      assertThat(failure).hasStackTraceContaining("Authentication failed");
      assertThat(rootCause(failure)).isInstanceOf(SaslAuthenticationException.class);
      System.out.println("wrong credentials -> " + failure);
    }
  }

  private static Throwable rootCause(Throwable t) {
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t;
  }

  private static Map<String, String> kafkaOnly(Map<String, String> settings) {
    Map<String, String> out = new HashMap<>();
    settings.forEach((k, v) -> {
      if (k.startsWith("kafka.") && !k.equals("kafka.bootstrap.servers")) {
        out.put(k.substring("kafka.".length()), v);
      }
    });
    return out;
  }
}
