package io.partita.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.planner.plan.PlanSettings;
import io.partita.planning.grouping.GroupingObjective;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class PlannerConfigTest {
  @Test
  void shouldRunExactlyOnceWithTheConfiguredStandbysAndLetKafkaSettingsWin() {
    PlannerConfig config = PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:9092",
        "topic.prefix", "p", "planner.standby.replicas", "2", "planner.objective", "latency",
        "kafka.commit.interval.ms", "250")));
    Properties props = config.streamsProperties();
    assertThat(props.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)).isEqualTo(StreamsConfig.EXACTLY_ONCE_V2);
    assertThat(props.get(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG)).isEqualTo(2);
    assertThat(props.get(StreamsConfig.APPLICATION_ID_CONFIG)).isEqualTo("p-planner");
    assertThat(props.get("commit.interval.ms")).isEqualTo("250");
    assertThat(config.plan().objective()).isEqualTo(GroupingObjective.LATENCY);
    assertThat(config.topics().planRoutes()).isEqualTo("p.plan.routes");
  }

  @Test
  void shouldNameTheSettingAtFault() {
    assertThatThrownBy(() -> PlannerConfig.from(Settings.of(Map.of())))
        .isInstanceOf(ConfigException.class).hasMessageContaining("kafka.bootstrap.servers");
    assertThatThrownBy(() -> PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1",
        "planner.objective", "speed")))).hasMessageContaining("planner.objective=speed");
    assertThatThrownBy(() -> PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1",
        "planner.default.rate", "0")))).hasMessageContaining("planner.default.rate");
    assertThatThrownBy(() -> PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1",
        "planner.standby.replicas", "-1")))).hasMessageContaining("planner.standby.replicas");
    assertThatThrownBy(() -> PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1",
        "planner.routes.on-demand.max", "-1")))).hasMessageContaining("planner.routes.on-demand.max");
    assertThat(PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1", "planner.routes.on-demand.max", "4")))
        .plan().routeOnDemandLimit()).isEqualTo(4);
    assertThat(PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1"))).plan().routeOnDemandLimit())
        .isEqualTo(PlanSettings.DEFAULT_ROUTE_ON_DEMAND_LIMIT);
    assertThatThrownBy(() -> PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1",
        "planner.default.partitions.max", "0")))).hasMessageContaining("planner.default.partitions.max");
    assertThat(PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1", "planner.default.partitions.max", "5")))
        .plan().defaultPartitionsLimit()).isEqualTo(5);
    assertThat(PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1"))).plan().defaultPartitionsLimit())
        .isEqualTo(PlanSettings.DEFAULT_PARTITIONS_LIMIT);
    assertThatThrownBy(() -> PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1",
        "planner.mapping.drift", "1")))).hasMessageContaining("planner.mapping.drift");
    assertThatThrownBy(() -> PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1",
        "planner.mapping.drift", "a lot")))).hasMessageContaining("planner.mapping.drift");
    assertThat(PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1", "planner.mapping.drift", "0.03")))
        .plan().mappingDrift()).isEqualTo(0.03);
    assertThat(PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1"))).plan().mappingDrift())
        .isEqualTo(PlanSettings.DEFAULT_MAPPING_DRIFT);
  }

  @Test
  void shouldReadHowThePlannerAsksForMeasurements() {
    PlannerConfig defaults = PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:9092")));
    assertThat(defaults.plan().measure()).isEqualTo(io.partita.planner.plan.MeasureSettings.DEFAULTS);

    PlannerConfig set = PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:9092",
        "planner.measure.enabled", "false", "planner.measure.margin", "0.05", "planner.measure.interval.ms", "5000",
        "planner.measure.timeout.ms", "90000", "planner.measure.retry.ms", "600000", "planner.measure.budget.ms", "500")));
    assertThat(set.plan().measure()).isEqualTo(new io.partita.planner.plan.MeasureSettings(false, 0.05, 5000, 90000,
        600000, 500));
    assertThatThrownBy(() -> PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:1",
        "planner.measure.margin", "2")))).hasMessageContaining("planner.measure.margin");
  }

  @Test
  void shouldTakeItsOldMembersPlaceAtOnceWithAGroupInstanceId() {
    Properties dynamic = PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:9092"))).streamsProperties();
    assertThat(dynamic).doesNotContainKey(StreamsConfig.mainConsumerPrefix("group.instance.id"));

    Properties fixed = PlannerConfig.from(Settings.of(Map.of("kafka.bootstrap.servers", "b:9092",
        "planner.group.instance.id", "local-planner-h1"))).streamsProperties();
    assertThat(fixed.get(StreamsConfig.mainConsumerPrefix("group.instance.id"))).isEqualTo("local-planner-h1");
    // Kafka Streams appends the thread index, so every stream thread is a distinct static member.
    assertThat(new StreamsConfig(fixed).getMainConsumerConfigs("g", "c", 1).get("group.instance.id")).isEqualTo("local-planner-h1-1");
  }
}
