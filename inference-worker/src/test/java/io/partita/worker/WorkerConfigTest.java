package io.partita.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkerConfigTest {
  private static WorkerConfig config(Map<String, String> extra) {
    Map<String, String> values = new HashMap<>(Map.of("kafka.bootstrap.servers", "localhost:9092", "model.repo", "/models"));
    values.putAll(extra);
    return WorkerConfig.from(Settings.of(values));
  }

  @Test
  void shouldKeepTheFirstCutBehaviourByDefault() {
    WorkerConfig c = config(Map.of());
    assertThat(c.slots().partitions()).isEmpty();
    assertThat(c.slots().assignmentFile()).isNull();
    assertThat(c.intraOpThreads()).isZero();
    assertThat(c.operation().metricsPort()).as("no endpoint unless asked").isZero();
    assertThat(c.batching().maxBatch()).isEqualTo(32);
    assertThat(c.batching().maxDelayMs()).isEqualTo(2);
  }

  @Test
  void shouldBatchAcrossWeightFilesUnlessTurnedOff() {
    assertThat(config(Map.of()).batching().acrossWeightFiles()).isTrue();
    assertThat(config(Map.of("worker.batch.across-weight-files", "false")).batching().acrossWeightFiles()).isFalse();
  }

  @Test
  void shouldReadPartitionSizes() {
    assertThat(config(Map.of("worker.partitions", "1, 1,2")).slots().partitions()).containsExactly(1, 1, 2);
  }

  @Test
  void shouldNameTheSettingAtFault() {
    assertThatThrownBy(() -> config(Map.of("worker.partitions", "1,x")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("worker.partitions=1,x").hasMessageContaining("'x'");
    assertThatThrownBy(() -> config(Map.of("worker.partitions", "0")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("'0' is not a partition size");
    assertThatThrownBy(() -> config(Map.of("worker.partitions", "1", "worker.assignments", "/slots.json")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("use one");
    assertThatThrownBy(() -> config(Map.of("worker.batch.max", "0")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("worker.batch.max");
  }

  @Test
  void shouldUseStaticMembershipOnlyWhenAGroupInstanceIdIsGiven() {
    assertThat(config(Map.of()).operation().groupInstanceId()).isEmpty();
    assertThat(config(Map.of("worker.group.instance.id", " local-worker-h1 ")).operation().groupInstanceId()).isEqualTo("local-worker-h1");
  }

  @Test
  void shouldServeTheCatalogWithoutARepositoryOnlyWithACacheDirectory() {
    WorkerConfig c = WorkerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "localhost:9092",
        "worker.models.from", "catalog", "worker.model.cache.dir", "/var/cache/partita")));
    assertThat(c.slots().fromCatalog()).isTrue();
    assertThat(c.modelRepository()).isNull();
    assertThat(c.slots().modelCache()).contains(java.nio.file.Path.of("/var/cache/partita"));
    assertThat(config(Map.of()).slots().fromCatalog()).as("the repository by default").isFalse();

    assertThatThrownBy(() -> WorkerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "localhost:9092",
        "worker.models.from", "catalog")))).isInstanceOf(ConfigException.class).hasMessageContaining("worker.model.cache.dir");
    assertThatThrownBy(() -> WorkerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "localhost:9092"))))
        .isInstanceOf(ConfigException.class).hasMessageContaining("model.repo").hasMessageContaining("worker.models.from=catalog");
    assertThatThrownBy(() -> config(Map.of("worker.models.from", "s3")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("worker.models.from=s3");
  }
}
