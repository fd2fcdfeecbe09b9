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
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one-broker fixture of the cluster tests: Testcontainers' {@code apache/kafka} where Docker
 * runs, the in-JVM broker elsewhere; a worker serves a request on whichever it is.
 */
@ExtendWith(ClusterKafka.class)
class ClusterKafkaIT {
  @TempDir Path repo;

  @Test
  void shouldChooseTestcontainersExactlyWhenADockerEngineIsAvailable() {
    System.out.println("ClusterKafka: " + ClusterKafka.kind() + " (" + ClusterKafka.reason() + ")");
    if (System.getProperty("partita.kafka") == null) {
      assertThat(ClusterKafka.kind()).isEqualTo(ClusterKafka.dockerAvailable() ? ClusterKafka.Kind.TESTCONTAINERS : ClusterKafka.Kind.IN_JVM);
    }
  }

  @Test
  void shouldServeARequestOnTheApacheKafkaContainer() throws Exception {
    Assumptions.assumeTrue(ClusterKafka.kind() == ClusterKafka.Kind.TESTCONTAINERS,
        "no Docker engine here (Testcontainers found none): the apache/kafka container path is skipped; "
            + "the same request runs on the in-JVM broker in shouldServeARequestOnWhicheverBrokerTheFixtureChose");
    serveOneRequest("tc");
  }

  @Test
  void shouldServeARequestOnWhicheverBrokerTheFixtureChose() throws Exception {
    serveOneRequest("any");
  }

  private void serveOneRequest(String label) throws Exception {
    DemoRepository.writeTo(repo);
    String bootstrap = ClusterKafka.bootstrapServers();
    Topics topics = new Topics(KafkaFixture.uniquePrefix("fixture-" + label));
    String replyTopic = topics.replies("fixture-client");
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      TopicAdmin.ensure(admin, List.of(TopicSpec.stream(replyTopic, 1)), (short) 1);
    }
    RecordCodec<InferenceRequest> requests = Codecs.singleObject().codec(InferenceRequest.class);
    RecordCodec<InferenceReply> replies = Codecs.singleObject().codec(InferenceReply.class);
    try (InferenceWorker worker = new InferenceWorker(WorkerConfig.from(Settings.of(Map.of(
            "kafka.bootstrap.servers", bootstrap,
            "topic.prefix", topics.prefix(),
            "host.id", "fixture-host",
            "model.repo", repo.toString(),
            "worker.threads", "1"))));
         ReplyCollector collector = new ReplyCollector(bootstrap, Map.of(), replyTopic, 1, replies, id -> { });
         KafkaProducer<String, byte[]> producer = Requests.producer(bootstrap, Map.of())) {
      worker.start();
      producer.send(Requests.record(topics.requests("demo-mlp"), requests, Requests.request(label + "-1", "demo", 2), replyTopic)).get(30, TimeUnit.SECONDS);
      Awaitility.await("the reply").atMost(Duration.ofSeconds(60)).until(() -> collector.replies().containsKey(label + "-1"));
      assertThat(collector.replies().get(label + "-1").getError()).isNull();
    }
  }
}
