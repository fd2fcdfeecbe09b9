package io.partita.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.Demand;
import io.partita.common.serde.Codecs;
import io.partita.schemas.AvroCodec;
import io.partita.schemas.DecodeException;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

class TopicsTest {
  private static final Topics TOPICS = new Topics("t");
  private static final Codecs CODECS = Codecs.singleObject();
  private static final Demand DEMAND = new Demand("demo", 2.5, 3L, 1_000L);

  @Test
  void shouldNameEveryTypedHandleAsItsUntypedMethodDoes() {
    Map<Function<Topics, String>, Function<Topics, Topic<?>>> pairs = Map.ofEntries(
        Map.entry(Topics::catalogModels, t -> t.catalogModels(CODECS)),
        Map.entry(Topics::catalogServices, t -> t.catalogServices(CODECS)),
        Map.entry(Topics::hostEnvironments, t -> t.hostEnvironments(CODECS)),
        Map.entry(Topics::hostLiveness, t -> t.hostLiveness(CODECS)),
        Map.entry(Topics::workerStatus, t -> t.workerStatus(CODECS)),
        Map.entry(Topics::profileRequests, t -> t.profileRequests(CODECS)),
        Map.entry(Topics::profileTimings, t -> t.profileTimings(CODECS)),
        Map.entry(Topics::profileStatus, t -> t.profileStatus(CODECS)),
        Map.entry(Topics::planPartitions, t -> t.planPartitions(CODECS)),
        Map.entry(Topics::planMappings, t -> t.planMappings(CODECS)),
        Map.entry(Topics::planVersions, t -> t.planVersions(CODECS)),
        Map.entry(Topics::planAssignments, t -> t.planAssignments(CODECS)),
        Map.entry(Topics::planRoutes, t -> t.planRoutes(CODECS)),
        Map.entry(Topics::demand, t -> t.demand(CODECS)),
        Map.entry(Topics::jobs, t -> t.jobs(CODECS)),
        Map.entry(Topics::jobStatus, t -> t.jobStatus(CODECS)),
        Map.entry(Topics::jobItems, t -> t.jobItems(CODECS)),
        Map.entry(Topics::deadLetter, t -> t.deadLetter(CODECS)),
        Map.entry(t -> t.requests("demo"), t -> t.requests("demo", CODECS)),
        Map.entry(t -> t.replies("gw-1"), t -> t.replies("gw-1", CODECS)));

    pairs.forEach((name, handle) -> assertThat(handle.apply(TOPICS).name()).isEqualTo(name.apply(TOPICS)));
    assertThat(pairs).hasSize(TOPICS.infrastructure().size() + 2);
  }

  @Test
  void shouldWriteTheSameBytesAsTheRecordTypesOwnCodec() {
    Topic<Demand> demand = TOPICS.demand(CODECS);

    byte[] bytes = demand.encode(DEMAND);

    assertThat(bytes).isEqualTo(AvroCodec.of(Demand.class).encode(DEMAND));
    assertThat(demand.decode(bytes)).isEqualTo(DEMAND);
  }

  @Test
  void shouldBuildARecordForItsTopicAndATombstoneForNull() {
    Topic<Demand> demand = TOPICS.demand(CODECS);

    ProducerRecord<String, byte[]> record = demand.record(2, "demo", DEMAND);
    ProducerRecord<String, byte[]> tombstone = demand.record("demo", null);

    assertThat(record.topic()).isEqualTo("t.demand");
    assertThat(record.partition()).isEqualTo(2);
    assertThat(record.key()).isEqualTo("demo");
    assertThat(demand.decode(record.value())).isEqualTo(DEMAND);
    assertThat(tombstone.topic()).isEqualTo("t.demand");
    assertThat(tombstone.value()).isNull();
  }

  @Test
  void shouldRefuseBytesOfAnotherRecordType() {
    byte[] demand = TOPICS.demand(CODECS).encode(DEMAND);

    assertThatThrownBy(() -> TOPICS.planRoutes(CODECS).decode(demand)).isInstanceOf(DecodeException.class);
  }

  @Test
  void shouldShareOneCodecPerRecordTypeAcrossHandles() {
    assertThat(TOPICS.requests("a", CODECS).codec()).isSameAs(TOPICS.requests("b", CODECS).codec());
  }

  @Test
  void shouldNameAHostInTheWorkersGroupByItsRequestConsumersClientId() {
    assertThat(TOPICS.workersGroup()).isEqualTo(TOPICS.prefix() + ".workers");
    assertThat(Topics.hostOfWorkerClient(Topics.workerClientId("host-2"))).isEqualTo("host-2");
    assertThat(Topics.hostOfWorkerClient("partita-worker-plan-host-2")).isNull();
    assertThat(Topics.hostOfWorkerClient("partita-requests-")).isNull();
    assertThat(Topics.hostOfWorkerClient(null)).isNull();
  }
}
