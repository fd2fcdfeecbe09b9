package io.partita.profiler.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.HostEnvironment;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code partita profile --broker}: what it prints is also on the topics, decodable with the schemas. */
@ExtendWith(KafkaFixture.class)
class ProfileCliIT {

  private static final RecordCodec<TimingEvent> TIMINGS = Codecs.singleObject().codec(TimingEvent.class);
  private static final RecordCodec<HostEnvironment> ENVIRONMENTS = Codecs.singleObject().codec(HostEnvironment.class);

  @TempDir
  static Path repo;

  @BeforeAll
  static void writeDemoRepository() throws Exception {
    DemoRepository.writeTo(repo);
  }

  @Test
  void shouldPublishEveryPrintedPointAndTheEnvironment() throws Exception {
    Topics topics = new Topics(KafkaFixture.uniquePrefix("cli"));

    ProfileCliTest.Run r = ProfileCliTest.run("--model-repo", repo.toString(), "--model", "demo-mlp", "--sizes", "1",
        "--batches", "1,2", "--budget-ms", "30", "--host-id", "cli-host", "--json", "--broker",
        KafkaFixture.bootstrapServers(), "--topic-prefix", topics.prefix(), "--no-baseline");

    assertThat(r.code()).as(r.err()).isEqualTo(ProfileCli.OK);
    assertThat(r.lines()).hasSize(2);
    assertThat(r.err()).contains("published to " + KafkaFixture.bootstrapServers());
    List<ConsumerRecord<String, byte[]>> timings = KafkaFixture.read(2, Duration.ofSeconds(20), topics.profileTimings());
    assertThat(timings).extracting(ConsumerRecord::key)
        .containsExactly("demo-mlp/2/cli-host/cpu/1/1", "demo-mlp/2/cli-host/cpu/1/2"); // the latest version
    for (int i = 0; i < 2; i++) {
      TimingEvent e = TIMINGS.decode(timings.get(i).topic(), timings.get(i).value());
      assertThat(e.getOk()).isTrue();
      assertThat(e.getRequestId()).startsWith("cli-cli-host-");
      assertThat(e.getP50Ms()).isEqualTo(r.lines().get(i).get("p50Ms").asDouble());
      assertThat(e.getThroughput()).isEqualTo(r.lines().get(i).get("throughput").asDouble());
    }
    List<ConsumerRecord<String, byte[]>> envs = KafkaFixture.read(1, Duration.ofSeconds(20), topics.hostEnvironments());
    assertThat(envs).singleElement().satisfies(rec -> {
      assertThat(rec.key()).isEqualTo("cli-host");
      HostEnvironment env = ENVIRONMENTS.decode(rec.topic(), rec.value());
      assertThat(env.getBaseline()).isNull();
      assertThat(env.getExecutionProviders()).contains("CPU");
    });
  }

  @Test
  void shouldPublishAGroupingAndAnEnvironmentWithItsBaseline() throws Exception {
    Topics topics = new Topics(KafkaFixture.uniquePrefix("cli-grouping"));

    ProfileCliTest.Run r = ProfileCliTest.run("--model-repo", repo.toString(), "--model", "demo-mlp", "--version", "1",
        "--grouping", "1,1", "--batches", "2", "--budget-ms", "30", "--host-id", "cli-host", "--broker",
        KafkaFixture.bootstrapServers(), "--topic-prefix", topics.prefix());

    assertThat(r.out()).contains("grouping [1, 1] batch 2 CPU");
    List<ConsumerRecord<String, byte[]>> timings = KafkaFixture.read(1, Duration.ofSeconds(20), topics.profileTimings());
    assertThat(timings).singleElement().satisfies(rec -> {
      assertThat(rec.key()).isEqualTo("demo-mlp/1/cli-host/cpu/2/2/g1+1");
      TimingEvent e = TIMINGS.decode(rec.topic(), rec.value());
      assertThat(e.getGrouping()).containsExactly(1, 1);
      assertThat(e.getOk()).isEqualTo(r.code() == ProfileCli.OK);
    });
    List<ConsumerRecord<String, byte[]>> envs = KafkaFixture.read(1, Duration.ofSeconds(20), topics.hostEnvironments());
    HostEnvironment env = ENVIRONMENTS.decode(envs.get(0).topic(), envs.get(0).value());
    assertThat(env.getBaseline()).isNotNull();
    assertThat(env.getBaseline().getThroughput()).isPositive();
  }
}
