package io.partita.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.MultiBrokerCluster;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Broker faults on a 3-broker cluster (RF 3, min ISR 2): the broker leading the request topic's
 * first partition stops while a client keeps requests flowing, and later comes back. Every request
 * gets its reply (duplicates allowed: clients drop them by correlation id), none is lost, and the
 * worker and the gateway carry on without being restarted.
 */
@Tag("slow")
class BrokerFailoverIT {
  private static final String MODEL = "demo";
  private static final int IN_FLIGHT = 8;
  private static MultiBrokerCluster cluster;

  @TempDir Path repo;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = MultiBrokerCluster.start(3);
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void shouldAnswerEveryRequestWhenTheRequestTopicLeaderStopsAndComesBack() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics("failover");
    Settings settings = Settings.of(Map.of(
        "kafka.bootstrap.servers", cluster.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "host.id", "failover-host",
        "model.repo", repo.toString(),
        "worker.threads", "1",
        "gateway.id", "failover-gw",
        // Straight to the request topic: this test is about brokers, not plans (no planner runs).
        "gateway.routing", "any",
        "http.port", "0"));
    String requestTopic = topics.requests("demo-mlp"); // the one topic of MODEL's base model
    String replyTopic = topics.replies("failover-client");
    try (Admin admin = cluster.admin()) {
      TopicAdmin.ensure(admin, List.of(TopicSpec.stream(replyTopic, 1)), (short) 3);
    }
    RecordCodec<InferenceRequest> requests = Codecs.singleObject().codec(InferenceRequest.class);
    RecordCodec<InferenceReply> replies = Codecs.singleObject().codec(InferenceReply.class);

    try (InferenceWorker worker = new InferenceWorker(WorkerConfig.from(settings));
         Gateway gateway = new Gateway(GatewayConfig.from(settings))) {
      worker.start();
      gateway.start();
      // Given a closed-loop client keeping IN_FLIGHT requests outstanding on the request topic
      Semaphore window = new Semaphore(IN_FLIGHT);
      Set<String> sent = ConcurrentHashMap.newKeySet();
      try (ReplyCollector collector = new ReplyCollector(cluster.bootstrapServers(), Map.of(), replyTopic, 1, replies, id -> window.release());
           Sender sender = new Sender(Requests.producer(cluster.bootstrapServers(), Map.of()), requestTopic, replyTopic, requests, window, sent)) {
        assertThat(cluster.leaders(requestTopic)).hasSize(4).doesNotContain(-1);
        awaitReplies(collector, 40);

        // When the leader of the request topic's first partition stops while requests flow
        int victim = cluster.leaders(requestTopic).get(0);
        cluster.stopBroker(victim);
        Awaitility.await("leadership moved off broker " + victim).atMost(Duration.ofSeconds(60))
            .until(() -> !cluster.leaders(requestTopic).contains(victim) && !cluster.leaders(requestTopic).contains(-1));
        // Then requests keep being answered on the two remaining replicas (min ISR 2)
        awaitReplies(collector, collector.count() + 40);
        assertThat(infer(gateway.port(), "during-outage")).isEqualTo(200);

        // When the broker comes back and catches up
        cluster.startBroker(victim);
        cluster.awaitFullyReplicated(requestTopic, 3, Duration.ofSeconds(90));
        awaitReplies(collector, collector.count() + 40);
        assertThat(infer(gateway.port(), "after-restart")).isEqualTo(200);

        // Then every request sent was answered, with a result, by the same worker and gateway
        sender.stop();
        Awaitility.await("a reply for each of the requests sent").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200))
            .until(() -> collector.replies().keySet().containsAll(sent));
        assertThat(sender.failure()).isNull();
        assertThat(collector.replies()).allSatisfy((id, reply) -> assertThat(reply.getError()).as(id).isNull());
        assertThat(worker.failure()).isNull();
        System.out.printf("failover: %d requests, %d answered, %d duplicate replies, broker %d stopped and restarted%n",
            sent.size(), collector.count(), collector.duplicates(), victim);
      }
    }
  }

  private static void awaitReplies(ReplyCollector collector, int atLeast) {
    Awaitility.await(atLeast + " replies").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
        .until(() -> collector.count() >= atLeast);
  }

  private static int infer(int port, String label) throws Exception {
    HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/v2/models/" + MODEL + "/infer"))
        .timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"" + label + "\",\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.body()).as("gateway answer %s", label).contains("outputs");
    return response.statusCode();
  }

  /** Sends requests whenever the window has room, until stopped; remembers every id it sent. */
  private static final class Sender implements AutoCloseable {
    private final Thread thread;
    private final KafkaProducer<String, byte[]> producer;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean running = true;

    Sender(KafkaProducer<String, byte[]> producer, String topic, String replyTo, RecordCodec<InferenceRequest> codec, Semaphore window, Set<String> sent) {
      this.producer = producer;
      this.thread = new Thread(() -> {
        int n = 0;
        try {
          while (running) {
            if (!window.tryAcquire(100, TimeUnit.MILLISECONDS)) {
              continue;
            }
            String id = "req-" + n;
            sent.add(id);
            producer.send(Requests.record(topic, codec, Requests.request(id, MODEL, n), replyTo), (m, e) -> {
              if (e != null) {
                failure.compareAndSet(null, e);
              }
            });
            n++;
          }
          producer.flush();
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "failover-sender");
      thread.start();
    }

    void stop() throws InterruptedException {
      running = false;
      thread.join(60_000);
    }

    Throwable failure() {
      return failure.get();
    }

    @Override
    public void close() throws InterruptedException {
      stop();
      producer.close(Duration.ofSeconds(10));
    }
  }
}
