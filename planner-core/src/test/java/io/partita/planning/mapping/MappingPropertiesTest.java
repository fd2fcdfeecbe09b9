package io.partita.planning.mapping;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.planning.Tolerance;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

class MappingPropertiesTest {

  /**
   * {@code models} models split into one to three services, on {@code resources} resources of two
   * or three kinds; about 20% of the cells missing, every model runnable somewhere.
   */
  static MappingProblem randomProblem(long seed, int models, int resources) {
    Random r = new Random(seed);
    List<ResourceSpec> res = new ArrayList<>();
    String[] kinds = {"gpu", "cpu", "npu"};
    for (int i = 0; i < resources; i++) {
      res.add(new ResourceSpec("r" + i, kinds[i < 2 ? i : r.nextInt(3)]));
    }
    Map<String, Map<String, Double>> matrix = new LinkedHashMap<>();
    for (int m = 0; m < models; m++) {
      Map<String, Double> row = new LinkedHashMap<>();
      double base = 1 + r.nextInt(50);
      for (int i = 0; i < resources; i++) {
        if (r.nextInt(5) > 0) {
          double factor = res.get(i).kind().equals("gpu") ? 1 : 1 + 9 * r.nextDouble();
          row.put("r" + i, r.nextBoolean() ? Math.rint(base * factor) : base * factor);
        }
      }
      if (row.isEmpty()) {
        row.put("r" + r.nextInt(resources), base);
      }
      matrix.put("m" + m, row);
    }
    int serviceCount = 1 + r.nextInt(Math.min(3, models));
    List<List<ServiceStage>> stages = new ArrayList<>();
    for (int s = 0; s < serviceCount; s++) {
      stages.add(new ArrayList<>());
    }
    for (int m = 0; m < models; m++) {
      int s = m < serviceCount ? m : r.nextInt(serviceCount);
      stages.get(s).add(new ServiceStage("m" + m, r.nextInt(6) == 0 ? 0 : 1 + r.nextInt(20)));
    }
    List<ServiceSpec> services = new ArrayList<>();
    for (int s = 0; s < serviceCount; s++) {
      services.add(new ServiceSpec("s" + s, stages.get(s)));
    }
    return new MappingProblem(res, matrix, services, 12, 8);
  }

  @Property(tries = 60)
  void exactOptimumEqualsBruteForce(@ForAll long seed, @ForAll @IntRange(min = 1, max = 8) int models,
      @ForAll @IntRange(min = 2, max = 5) int resources) {
    MappingProblem p = randomProblem(seed, models, resources);

    ExactMapping exact = MappingPlanner.exact(p);
    MappingOracle.Best oracle = MappingOracle.best(p);

    assertThat(Tolerance.compare(exact.costMsPerSecond(), oracle.cost())).isZero();
    assertThat(Tolerance.compare(exact.pipelineLatencyMs(), oracle.latency())).isZero();
  }

  @Property(tries = 200)
  void noModelLandsWhereItCannotRun(@ForAll long seed, @ForAll @IntRange(min = 1, max = 30) int models,
      @ForAll @IntRange(min = 2, max = 12) int resources) {
    MappingProblem p = randomProblem(seed, models, resources);

    MappingPlan plan = MappingPlanner.plan(p);

    List<Assignment> all = new ArrayList<>(plan.assignments());
    plan.services().forEach(s -> {
      all.addAll(s.modelFirst().assignments());
      all.addAll(s.hardwareFirst().assignments());
    });
    all.addAll(plan.exact().assignments());
    assertThat(plan.assignments()).hasSize(models);
    for (Assignment a : all) {
      assertThat(p.latencyMs().get(a.modelId())).containsKey(a.resourceId());
      assertThat(a.latencyMs()).isEqualTo(p.latencyMs().get(a.modelId()).get(a.resourceId()));
    }
  }

  @Property(tries = 200)
  void shufflingTheInputNeverChangesThePlan(@ForAll long seed, @ForAll @IntRange(min = 1, max = 9) int models,
      @ForAll @IntRange(min = 2, max = 6) int resources) {
    MappingProblem p = randomProblem(seed, models, resources);
    Random r = new Random(~seed);
    List<ResourceSpec> res = new ArrayList<>(p.resources());
    Collections.shuffle(res, r);
    List<String> rows = new ArrayList<>(p.latencyMs().keySet());
    Collections.shuffle(rows, r);
    Map<String, Map<String, Double>> matrix = new LinkedHashMap<>();
    for (String row : rows) {
      List<Map.Entry<String, Double>> cells = new ArrayList<>(p.latencyMs().get(row).entrySet());
      Collections.shuffle(cells, r);
      Map<String, Double> shuffledRow = new LinkedHashMap<>();
      cells.forEach(e -> shuffledRow.put(e.getKey(), e.getValue()));
      matrix.put(row, shuffledRow);
    }
    List<ServiceSpec> services = new ArrayList<>(p.services());
    Collections.shuffle(services, r);
    MappingProblem shuffled = new MappingProblem(res, matrix, services, p.exactMaxPlacements(),
        p.exactMaxResources());

    assertThat(MappingPlanner.plan(shuffled)).isEqualTo(MappingPlanner.plan(p));
  }

  @Property(tries = 200)
  void exactOptimumIsNeverWorseThanEitherScheme(@ForAll long seed, @ForAll @IntRange(min = 1, max = 9) int models,
      @ForAll @IntRange(min = 2, max = 6) int resources) {
    MappingProblem p = randomProblem(seed, models, resources);

    MappingPlan plan = MappingPlanner.plan(p);
    double exact = plan.exact().costMsPerSecond();

    assertThat(plan.exact().computed()).isTrue();
    assertThat(Tolerance.compare(exact, MappingPlanner.runScheme(p, MappingScheme.MODEL_FIRST).costMsPerSecond()))
        .isLessThanOrEqualTo(0);
    assertThat(Tolerance.compare(exact, MappingPlanner.runScheme(p, MappingScheme.HARDWARE_FIRST).costMsPerSecond()))
        .isLessThanOrEqualTo(0);
    assertThat(Tolerance.compare(exact, plan.costMsPerSecond())).isLessThanOrEqualTo(0);
    // The improvement pass never makes the per-service choice worse.
    assertThat(Tolerance.compare(plan.costMsPerSecond(), plan.improvement().schemesCostMsPerSecond())).isLessThanOrEqualTo(0);
    assertThat(plan.exact().gap()).isGreaterThanOrEqualTo(1.0 - 1e-9);
  }
}
