package io.partita.planner;

import static io.partita.planner.TestRecords.GIB;
import static io.partita.planner.TestRecords.adapterModel;
import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.ready;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.BatchRuns;
import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.HostLiveness;
import io.partita.avro.ModelVersion;
import io.partita.avro.MountStatus;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.avro.ServiceModel;
import io.partita.avro.ServingEvidence;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.avro.TopicPartitions;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.metrics.PlannerMetrics;
import io.partita.planner.plan.Keys;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.replay.PlanRun;
import io.partita.planner.stream.PlanTable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A pass re-plans only what a change touched (one host's partitions and slots, the instances of
 * one base model, the routes of the service models whose slots changed and of every service model
 * of a base model whose slots opened, closed or reported in, the version of a model on
 * the hosts that measured it or predict it): that must give the plan that re-planning every key
 * of every table gives. Two planners in lockstep, the live one and one built {@code exhaustive}
 * (every key re-planned in every pass, through the whole-problem functions), are fed the same
 * random changes (timings and grouping-mode timings; hosts joining, leaving (environment deleted,
 * or its worker LEFT) and changing (a CPU quota too); models, versions, service models and demand
 * added, changed and deleted; slot status, with service models mounted on demand and serving
 * evidence); after every pass
 * their plan tables are equal byte for byte. Half the runs map classes of alike pools, whose
 * matrix the live planner keeps between passes and the exhaustive one builds whole.
 */
class IncrementalPlanningTest {
  private static final Codecs CODECS = Codecs.singleObject();
  private static final int STEPS = 30;
  private final Topics topics = new Topics("t");
  @TempDir Path stateDir;

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 28, 95, 164, 263})
  void shouldPlanWhatReplanningEverythingPlans(long seed) {
    // Even seeds map classes of alike pools (more than 3 pools), odd ones single pools.
    // Odd seeds bound routes to one or three on-demand slots: the incremental stage chooses them by key
    // before decoding, and keeps the choice between passes.
    PlanSettings settings = PlanSettings.defaults(topics).withMappingPoolLimit(seed % 2 == 0 ? 3 : 64)
        .withRouteOnDemandLimit(seed % 2 == 1 ? (seed % 4 == 1 ? 1 : 3) : PlanSettings.DEFAULT_ROUTE_ON_DEMAND_LIMIT);
    try (PlanRun incremental = new PlanRun(settings, CODECS, stateDir.resolve("incremental-" + seed));
         PlanRun exhaustive = new PlanRun(settings, CODECS, stateDir.resolve("exhaustive-" + seed),
             PlannerMetrics.inMemory(), true)) {
      World world = new World(seed, List.of(incremental, exhaustive), seed % 2 == 0);
      world.start();
      for (int step = 0; step < STEPS; step++) {
        int changes = 1 + world.random.nextInt(4);
        for (int c = 0; c < changes; c++) {
          world.change(incremental.tables().get(PlanTable.ASSIGNMENTS));
        }
        incremental.plan();
        exhaustive.plan();
        assertSamePlan(incremental, exhaustive, "seed " + seed + ", step " + step);
      }
      assertThat(incremental.tables().get(PlanTable.ASSIGNMENTS)).as("the worlds plan something").isNotEmpty();
    }
  }

  @Test
  void shouldWriteNoPlanRecordWhenTheSameInputsArriveAgain() {
    try (PlanRun run = new PlanRun(PlanSettings.defaults(topics), CODECS, stateDir.resolve("same"))) {
      World world = new World(11, List.of(run), false);
      world.start();
      for (int step = 0; step < 10; step++) {
        world.change(run.tables().get(PlanTable.ASSIGNMENTS));
      }
      run.plan();
      Map<PlanTable, Integer> before = run.emissions();
      world.replayAll();
      run.plan();
      assertThat(run.emissions()).as("records written after every input arrived again").isEqualTo(before);
    }
  }

  @Test
  void shouldCarryANewWeightFileToTheSlotsHoldingItsInstances() {
    PlanSettings settings = PlanSettings.defaults(topics);
    try (PlanRun incremental = new PlanRun(settings, CODECS, stateDir.resolve("weights-incremental"));
         PlanRun exhaustive = new PlanRun(settings, CODECS, stateDir.resolve("weights-exhaustive"),
             PlannerMetrics.inMemory(), true)) {
      World world = new World(1, List.of(incremental, exhaustive), false);
      world.send(topics.catalogModels(), "a/1", version("a", "1", "CPU"));
      world.send(topics.hostEnvironments(), "h0", host("h0", 2, 0));
      world.send(topics.catalogServices(), "a-1", serviceModel("a-1", "a", 1));
      incremental.plan();
      exhaustive.plan();
      world.send(topics.catalogServices(), "a-1", adapterModel("a-1", "a", 1));
      incremental.plan();
      exhaustive.plan();
      assertSamePlan(incremental, exhaustive, "after the weight file");
      List<AssignedServiceModel> instances = new ArrayList<>();
      for (byte[] bytes : incremental.tables().get(PlanTable.ASSIGNMENTS).values()) {
        instances.addAll(CODECS.codec(SlotAssignment.class).decode(topics.planAssignments(), bytes).getServiceModels());
      }
      assertThat(instances).singleElement()
          .satisfies(asm -> assertThat(asm.getWeightFile()).as("the adapter now on the slot").isNotNull());
    }
  }

  @Test
  void shouldRouteEveryServiceModelOfABaseModelToASlotOpeningOnAnotherHost() {
    PlanSettings settings = PlanSettings.defaults(topics);
    try (PlanRun incremental = new PlanRun(settings, CODECS, stateDir.resolve("base-incremental"));
         PlanRun exhaustive = new PlanRun(settings, CODECS, stateDir.resolve("base-exhaustive"),
             PlannerMetrics.inMemory(), true)) {
      World world = new World(1, List.of(incremental, exhaustive), false);
      world.send(topics.catalogModels(), "a/1", version("a", "1", "CPU"));
      world.send(topics.hostEnvironments(), "h0", host("h0", 2, 0));
      for (String name : List.of("a", "a-x", "a-y")) {
        world.send(topics.catalogServices(), name, name.equals("a") ? serviceModel(name, "a", 1) : adapterModel(name, "a", 1));
      }
      incremental.plan();
      exhaustive.plan();
      assertSamePlan(incremental, exhaustive, "one host");

      // A second host joins: slots of a open there, and no service model's instances need move.
      world.send(topics.hostEnvironments(), "h1", host("h1", 2, 0));
      incremental.plan();
      exhaustive.plan();
      assertSamePlan(incremental, exhaustive, "after h1 joined");
      List<SlotAssignment> onH1 = slotsOf(incremental, "h1", "a");
      assertThat(onH1).as("slots of a on h1").isNotEmpty();
      List<String> without = serviceModelsWithoutInstanceOn(incremental, "h1", List.of("a", "a-x", "a-y"));
      assertThat(without).as("service models with no instance on h1").isNotEmpty();
      for (String name : without) {
        Route route = route(incremental, name);
        assertThat(route.getInstances()).as("%s's route", name).filteredOn(i -> i.getHost().equals("h1"))
            .extracting(RouteInstance::getInstanceId)
            .containsExactlyElementsOf(onH1.stream().map(a -> "h1/" + a.getSlot() + "/" + name).toList());
      }

      // h1's slot reports in: the routes of the service models with no instance there count it ready.
      SlotAssignment first = onH1.get(0);
      world.send(topics.workerStatus(), Keys.hostSlot("h1", first.getSlot()), ready("h1", first.getSlot(), "a", first.getVersion()));
      incremental.plan();
      exhaustive.plan();
      assertSamePlan(incremental, exhaustive, "after h1's slot reported in");
      for (String name : without) {
        assertThat(route(incremental, name).getInstances()).filteredOn(RouteInstance::getReady).singleElement()
            .satisfies(i -> assertThat(i.getInstanceId()).isEqualTo("h1/" + first.getSlot() + "/" + name));
      }

      // h1 leaves: its slots close, and leave every route of a.
      world.send(topics.hostEnvironments(), "h1", null);
      incremental.plan();
      exhaustive.plan();
      assertSamePlan(incremental, exhaustive, "after h1 left");
      for (String name : List.of("a", "a-x", "a-y")) {
        assertThat(route(incremental, name).getInstances()).as("%s's route", name).isNotEmpty()
            .allSatisfy(i -> assertThat(i.getHost()).isEqualTo("h0"));
      }
    }
  }

  private List<SlotAssignment> slotsOf(PlanRun run, String host, String model) {
    return run.tables().get(PlanTable.ASSIGNMENTS).values().stream()
        .map(bytes -> CODECS.codec(SlotAssignment.class).decode(topics.planAssignments(), bytes))
        .filter(a -> a.getHost().equals(host) && a.getModel().equals(model)).toList();
  }

  private List<String> serviceModelsWithoutInstanceOn(PlanRun run, String host, List<String> names) {
    List<String> out = new ArrayList<>(names);
    for (SlotAssignment a : slotsOf(run, host, "a")) {
      a.getServiceModels().forEach(asm -> out.remove(asm.getServiceModel()));
    }
    return out;
  }

  private Route route(PlanRun run, String name) {
    return CODECS.codec(Route.class).decode(topics.planRoutes(), run.tables().get(PlanTable.ROUTES).get(name));
  }

  private static void assertSamePlan(PlanRun a, PlanRun b, String when) {
    for (PlanTable table : PlanTable.values()) {
      SortedMap<String, byte[]> left = a.tables().get(table);
      SortedMap<String, byte[]> right = b.tables().get(table);
      assertThat(left.keySet()).as("%s keys at %s", table.id(), when).isEqualTo(right.keySet());
      for (String key : left.keySet()) {
        assertThat(Arrays.equals(left.get(key), right.get(key))).as("%s %s at %s", table.id(), key, when).isTrue();
      }
    }
  }

  /** A small random cluster whose every record is sent to each planner alike. */
  private final class World {
    final Random random;
    /** Draws the on-demand mounts of slot statuses, apart from {@link #random}: the worlds' other changes stay as they were. */
    final Random mounts;
    /** Draws the serving evidence of slot statuses, apart from the other two. */
    final Random serving;
    final List<PlanRun> runs;
    /** Few kinds of hardware, so that hosts share classes of alike pools. */
    final boolean alike;
    final String[] hosts = {"h0", "h1", "h2", "h3", "h4", "h5"};
    final String[] models = {"a", "b", "c", "d"};
    /** Every record sent last per topic and key (null: deleted), to send again. */
    final Map<String, Map<String, SpecificRecord>> sent = new TreeMap<>();
    long clock = 1;

    World(long seed, List<PlanRun> runs, boolean alike) {
      this.random = new Random(seed);
      this.mounts = new Random(~seed);
      this.serving = new Random(seed * 31 + 7);
      this.runs = runs;
      this.alike = alike;
    }

    void start() {
      for (String m : models) {
        send(topics.catalogModels(), m + "/1", version(m, "1", "CPU"));
        send(topics.catalogServices(), m, serviceModel(m, m, 1 + random.nextInt(2)));
      }
      for (int h = 0; h < 3; h++) {
        send(topics.hostEnvironments(), hosts[h], environment(hosts[h]));
      }
    }

    HostEnvironment environment(String id) {
      HostEnvironment env = alike ? host(id, 2 + 2 * random.nextInt(2), random.nextInt(2))
          : host(id, 1 + random.nextInt(6), random.nextInt(3));
      // Sometimes under a CPU quota: its times are stretched (Plans.batchTimeMs), so its cells change with it.
      return random.nextInt(3) == 0 ? HostEnvironment.newBuilder(env).setCpuQuotaCores(0.5 + random.nextInt(2)).build() : env;
    }

    void change(SortedMap<String, byte[]> assignments) {
      String m = models[random.nextInt(models.length)];
      String h = hosts[random.nextInt(hosts.length)];
      switch (random.nextInt(15)) {
        case 0, 1, 2, 3 -> { // a host profiles a model (some sizes of a version), or re-profiles it
          String v = random.nextInt(3) == 0 ? "2" : "1";
          String pool = random.nextInt(4) == 0 ? "gpu" : "cpu";
          for (int size : pool.equals("gpu") ? new int[] {1, 2} : new int[] {1, 2, 4}) {
            if (random.nextInt(3) > 0) {
              double p50 = (10 + random.nextInt(40)) / Math.pow(size, random.nextDouble());
              TimingEvent e = TimingEvent.newBuilder(timing(m, v, h, pool, size, p50))
                  .setBatch(random.nextInt(4) == 0 ? 2 : 1).setTimestamp(++clock).build();
              send(topics.profileTimings(), Keys.timing(e), e);
            }
          }
        }
        case 4 -> { // a grouping-mode measurement
          List<Integer> grouping = random.nextBoolean() ? List.of(1, 1) : List.of(2);
          TimingEvent e = TimingEvent.newBuilder(timing(m, "1", h, "cpu", 2, 5 + random.nextInt(10)))
              .setGrouping(grouping).setThroughput(100 + random.nextInt(300)).setCondition("IDLE")
              .setTimestamp(++clock).build();
          send(topics.profileTimings(), Keys.grouping(e), e);
        }
        case 5 -> send(topics.hostEnvironments(), h, random.nextInt(3) == 0 ? null : environment(h));
        case 6 -> send(topics.catalogModels(), m + "/2", random.nextBoolean() ? null
            : ModelVersion.newBuilder(version(m, "2", random.nextBoolean() ? "CPU" : "CUDA"))
                .setAccuracy(0.5 + random.nextInt(5) / 10.0).setMemoryBytes(random.nextInt(3) == 0 ? 200 * GIB : null)
                .build());
        case 7 -> { // a service model added, changed (instances, weight file, service, objective) or deleted
          String name = m + "-" + random.nextInt(3);
          ServiceModel sm = random.nextBoolean() ? adapterModel(name, m, random.nextInt(4))
              : serviceModel(name, random.nextInt(4) == 0 ? models[random.nextInt(models.length)] : m, random.nextInt(4));
          if (random.nextInt(3) == 0) {
            sm = ServiceModel.newBuilder(sm).setService("pipeline").setLatencyObjectiveMs(random.nextBoolean() ? 30.0 : null)
                .build();
          }
          send(topics.catalogServices(), name, random.nextInt(5) == 0 ? null : sm);
        }
        case 8, 9 -> { // demand
          String name = random.nextBoolean() ? m : m + "-" + random.nextInt(3);
          send(topics.demand(), name, random.nextInt(5) == 0 ? null
              : Demand.newBuilder().setServiceModel(name).setRequestsPerSecond(random.nextInt(200)).setLag(0)
                  .setTimestamp(0).build());
        }
        case 10, 11, 12 -> status(assignments);
        case 13 -> send(topics.hostLiveness(), h, random.nextInt(4) == 0 ? null  // its worker left the group, or is back
            : new HostLiveness(h, random.nextBoolean() ? "LEFT" : "PRESENT", null, 0L));
        default -> send(topics.catalogModels(), m + "/1", random.nextInt(6) == 0 ? null : version(m, "1", "CPU"));
      }
    }

    /** A worker reports one planned slot: ready with its instances, with load, on another model, or gone. */
    void status(SortedMap<String, byte[]> assignments) {
      if (assignments.isEmpty()) {
        return;
      }
      List<String> keys = new ArrayList<>(assignments.keySet());
      String key = keys.get(random.nextInt(keys.size()));
      SlotAssignment a = CODECS.codec(SlotAssignment.class).decode(topics.planAssignments(), assignments.get(key));
      List<String> ids = new ArrayList<>();
      for (AssignedServiceModel asm : a.getServiceModels()) {
        if (random.nextInt(4) > 0) {
          ids.add(asm.getInstanceId());
        }
      }
      SlotStatus status = ready(a.getHost(), a.getSlot(), random.nextInt(5) == 0 ? "other" : a.getModel(),
          a.getVersion(), ids.toArray(String[]::new));
      if (mounts.nextInt(4) == 0) { // a service model it mounted on demand, or failed to
        String name = models[mounts.nextInt(models.length)] + (mounts.nextBoolean() ? "" : "-" + mounts.nextInt(3));
        List<MountStatus> list = new ArrayList<>(status.getServiceModels());
        list.add(MountStatus.newBuilder().setServiceModel(name)
            .setInstanceId(Keys.hostSlot(a.getHost(), a.getSlot()) + Keys.SEP + name).setWeightFile(null).setSha256(null)
            .setState(mounts.nextBoolean() ? "READY" : "NOT_READY").setReason(mounts.nextBoolean() ? null : "sha256 differs")
            .setBytes(0).setLastUsed(0).build());
        status = SlotStatus.newBuilder(status).setServiceModels(list).build();
      }
      if (serving.nextInt(3) > 0) { // what the slot ran over its last window, some sizes slower than profiled
        // runs as assigned (pool, provider, threads), after every window already recorded
        status = SlotStatus.newBuilder(status).setPool(a.getPool()).setProvider(a.getProvider())
            .setThreads(a.getThreads()).setTimestamp(++clock * 100_000).setServing(evidence()).build();
      }
      status = SlotStatus.newBuilder(status).setInFlight(random.nextInt(5)).setRequestPartitions(
          List.of(new TopicPartitions(topics.requests(a.getModel()), List.of(random.nextInt(4))))).build();
      send(topics.workerStatus(), key, random.nextInt(6) == 0 ? null : status);
      if (random.nextInt(3) == 0) { // the slot the instance moved from still serves it (make before break)
        String other = Keys.hostSlot(a.getHost(), "cpu-" + (9 + random.nextInt(2)));
        send(topics.workerStatus(), other, ready(a.getHost(), "cpu-" + other.substring(other.lastIndexOf('-') + 1),
            a.getModel(), a.getVersion(), ids.toArray(String[]::new)));
      }
    }

    ServingEvidence evidence() {
      List<BatchRuns> sizes = new ArrayList<>();
      long items = 0;
      long runs = 0;
      long busy = 0;
      for (int rows : new int[] {1, 2, 4, 8}) {
        if (serving.nextBoolean()) {
          long n = serving.nextInt(3) == 0 ? 0 : 1 + serving.nextInt(400);
          long nanos = n * rows * (200_000L + serving.nextInt(20_000_000));
          sizes.add(new BatchRuns(rows, n, nanos));
          items += n * rows;
          runs += n;
          busy += nanos;
        }
      }
      return ServingEvidence.newBuilder().setWindowMs(serving.nextInt(4) == 0 ? 5_000 : 30_000).setItems(items)
          .setBatches(runs).setBusyNanos(busy).setSizes(sizes).build();
    }

    @SuppressWarnings("unchecked")
    <T extends SpecificRecord> void send(String topic, String key, T value) {
      sent.computeIfAbsent(topic, t -> new TreeMap<>()).put(key, value);
      byte[] bytes = value == null ? null : CODECS.codec((Class<T>) value.getClass()).encode(topic, value);
      for (PlanRun run : runs) {
        run.pipe(topic, key, bytes, clock);
      }
    }

    /** Every record again, as it was sent last (deleted keys deleted again). */
    void replayAll() {
      Map<String, Map<String, SpecificRecord>> copy = new TreeMap<>();
      sent.forEach((t, m) -> copy.put(t, new TreeMap<>(m)));
      copy.forEach((topic, records) -> records.forEach((key, value) -> send(topic, key, value)));
    }
  }
}
