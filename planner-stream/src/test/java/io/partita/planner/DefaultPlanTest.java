package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.PartitionPlan;
import io.partita.avro.Route;
import io.partita.avro.SlotAssignment;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.replay.PlanRun;
import io.partita.planner.stream.PlanTable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every catalogued model has an instance from the first plan on, whatever the count of cores: a
 * default partition before any timing, shared cores when models outnumber them.
 */
class DefaultPlanTest {
  private static final Codecs CODECS = Codecs.singleObject();
  private final Topics topics = new Topics("t");
  private final PlanSettings settings = PlanSettings.defaults(topics);
  @TempDir Path stateDir;
  private PlanRun run;

  @BeforeEach
  void start() {
    run = new PlanRun(settings, CODECS, stateDir);
  }

  @AfterEach
  void stop() {
    run.close();
  }

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> void pipe(String topic, String key, T value) {
    run.pipe(topic, key, CODECS.codec((Class<T>) value.getClass()).encode(topic, value), 1);
  }

  private <T extends SpecificRecord> List<T> all(PlanTable table, Class<T> type) {
    List<T> out = new ArrayList<>();
    run.tables().get(table).values().forEach(b -> out.add(CODECS.codec(type).decode(table.topic(topics), b)));
    return out;
  }

  private void catalog(int models) {
    for (int i = 0; i < models; i++) {
      String m = "m" + i;
      pipe(topics.catalogModels(), m + "/1", version(m, "1", "CPU"));
      pipe(topics.catalogServices(), m, serviceModel(m, m, 1));
    }
  }

  @ParameterizedTest(name = "{0} models on 2 cores")
  @ValueSource(ints = {1, 3, 8})
  void shouldPlaceEveryModelWithADefaultPartitionBeforeAnyTiming(int models) {
    catalog(models);
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 2, 0));
    run.plan();

    // one model alone takes both cores (planner.default.partitions.max, 2); more share them, one each
    int each = models == 1 ? 2 : 1;
    List<PartitionPlan> partitions = all(PlanTable.PARTITIONS, PartitionPlan.class);
    assertThat(partitions).hasSize(models).allSatisfy(p -> {
      assertThat(p.getDefaultPlan()).isTrue();
      assertThat(p.getPlacement()).isEqualTo("default");
      assertThat(p.getPlanned()).isTrue();
      assertThat(p.getSizes()).hasSize(each).containsOnly(1);
    });
    List<SlotAssignment> slots = all(PlanTable.ASSIGNMENTS, SlotAssignment.class);
    assertThat(slots).hasSize(models * each).allSatisfy(a -> assertThat(a.getCpus()).hasSize(1).allMatch(c -> c == 0 || c == 1));
    for (int i = 0; i < models; i++) {
      String m = "m" + i;
      assertThat(slots).filteredOn(a -> a.getModel().equals(m)).flatExtracting(SlotAssignment::getServiceModels)
          .extracting(s -> s.getServiceModel()).as("instances of %s", m).containsExactly(m);
    }
    Map<Integer, Integer> perCore = new TreeMap<>();
    slots.forEach(a -> perCore.merge(a.getCpus().get(0), 1, Integer::sum));
    assertThat(perCore).as("slots per core").containsOnlyKeys(0, 1);
    assertThat(perCore.values()).as("slots per core %s", perCore)
        .allMatch(n -> Math.abs(n - models * each / 2.0) <= 1);
    // a route lists its planned instance and every other slot of the base model (on-demand mounts)
    assertThat(all(PlanTable.ROUTES, Route.class)).hasSize(models).allSatisfy(r -> assertThat(r.getInstances()).hasSize(each));
  }

  @Test
  void shouldKeepALoneDefaultModelToTheLimitOnALargerPool() {
    run.close();
    run = new PlanRun(settings.withDefaultPartitionsLimit(3), CODECS, stateDir.resolve("limit"));
    catalog(1);
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 8, 0));
    run.plan();

    assertThat(all(PlanTable.PARTITIONS, PartitionPlan.class)).singleElement()
        .satisfies(p -> assertThat(p.getSizes()).containsExactly(1, 1, 1));
    List<SlotAssignment> slots = all(PlanTable.ASSIGNMENTS, SlotAssignment.class);
    assertThat(slots).hasSize(3);
    assertThat(slots).flatExtracting(SlotAssignment::getCpus).doesNotHaveDuplicates();
  }

  @Test
  void shouldReplaceTheDefaultByTheMeasuredPlanOnceTheModelIsTimed() {
    catalog(3);
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 2, 0));
    run.plan();

    pipe(topics.profileTimings(), "t1", timing("m1", "1", "host-a", "cpu", 1, 5.0));
    pipe(topics.profileTimings(), "t2", timing("m1", "1", "host-a", "cpu", 2, 3.0));
    run.plan();

    List<PartitionPlan> partitions = all(PlanTable.PARTITIONS, PartitionPlan.class);
    assertThat(partitions).extracting(PartitionPlan::getModel).containsExactly("m0", "m1", "m2");
    assertThat(partitions).filteredOn(p -> !p.getModel().equals("m1")).allMatch(PartitionPlan::getDefaultPlan);
    PartitionPlan measured = partitions.get(1);
    assertThat(measured.getDefaultPlan()).isFalse();
    assertThat(measured.getPlanned()).isTrue();
    assertThat(measured.getMethod()).isNotEqualTo("default");
    assertThat(all(PlanTable.ASSIGNMENTS, SlotAssignment.class)).extracting(SlotAssignment::getModel)
        .contains("m0", "m1", "m2");
  }

  @Test
  void shouldShareCoresWhenMeasuredModelsOutnumberThem() {
    catalog(3);
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 2, 0));
    for (int i = 0; i < 3; i++) {
      pipe(topics.profileTimings(), "a" + i, timing("m" + i, "1", "host-a", "cpu", 1, 4.0 + i));
      pipe(topics.profileTimings(), "b" + i, timing("m" + i, "1", "host-a", "cpu", 2, 3.0 + i));
    }
    run.plan();

    List<PartitionPlan> partitions = all(PlanTable.PARTITIONS, PartitionPlan.class);
    assertThat(partitions).hasSize(3).allSatisfy(p -> {
      assertThat(p.getPlanned()).isTrue();
      assertThat(p.getDefaultPlan()).isFalse();
    });
    assertThat(partitions).extracting(PartitionPlan::getPlacement).containsExactly("split", "split", "shared");
    List<SlotAssignment> slots = all(PlanTable.ASSIGNMENTS, SlotAssignment.class);
    assertThat(slots).extracting(SlotAssignment::getModel).containsExactlyInAnyOrder("m0", "m1", "m2");
    assertThat(slots).allSatisfy(a -> assertThat(a.getCpus()).hasSize(1).allMatch(c -> c == 0 || c == 1));
  }
}
