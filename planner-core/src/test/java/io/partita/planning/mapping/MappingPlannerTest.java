package io.partita.planning.mapping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.planning.Tolerance;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MappingPlannerTest {

  private static final List<ResourceSpec> GPU_AND_CPU =
      List.of(new ResourceSpec("g", "gpu"), new ResourceSpec("c", "cpu"));

  private static Map<String, Map<String, Double>> matrix(Object... rows) {
    Map<String, Map<String, Double>> m = new LinkedHashMap<>();
    for (int i = 0; i < rows.length; i += 2) {
      @SuppressWarnings("unchecked")
      Map<String, Double> row = (Map<String, Double>) rows[i + 1];
      m.put((String) rows[i], row);
    }
    return m;
  }

  private static String where(List<Assignment> assignments, String model) {
    return assignments.stream().filter(a -> a.modelId().equals(model)).findFirst().orElseThrow().resourceId();
  }

  @Test
  void shouldChooseHardwareFirstWhenModelFirstPilesModelsOnTheGpu() {
    // a is almost as fast on the CPU; b is ten times slower there. Model-first (a first by id on
    // equal weight) puts both on the GPU (cost 20); hardware-first lets the GPU take b, the model
    // that gains most there, and a goes to the CPU (cost 11).
    MappingProblem p = new MappingProblem(GPU_AND_CPU,
        matrix("a", Map.of("g", 10.0, "c", 11.0), "b", Map.of("g", 10.0, "c", 100.0)),
        List.of(new ServiceSpec("s", List.of(new ServiceStage("a", 1), new ServiceStage("b", 1)))));

    MappingPlan plan = MappingPlanner.plan(p);
    ServiceMapping s = plan.services().get(0);

    assertThat(s.modelFirst().costMsPerSecond()).isEqualTo(20.0);
    assertThat(where(s.modelFirst().assignments(), "a")).isEqualTo("g");
    assertThat(s.hardwareFirst().costMsPerSecond()).isEqualTo(11.0);
    assertThat(s.chosen()).isEqualTo(MappingScheme.HARDWARE_FIRST);
    assertThat(where(plan.assignments(), "a")).isEqualTo("c");
    assertThat(where(plan.assignments(), "b")).isEqualTo("g");
    assertThat(plan.costMsPerSecond()).isEqualTo(11.0);
    assertThat(plan.exact().computed()).isTrue();
    assertThat(plan.exact().costMsPerSecond()).isEqualTo(11.0);
    assertThat(plan.exact().gap()).isEqualTo(1.0);
  }

  @Test
  void shouldChooseModelFirstWhenHardwareFirstOverloadsTheSecondGpu() {
    // The OCR example of planner-core/examples/mapping-ocr.json, first service only.
    List<ResourceSpec> resources = List.of(new ResourceSpec("gpu0", "gpu"), new ResourceSpec("gpu1", "gpu"),
        new ResourceSpec("cpu0", "cpu"));
    MappingProblem p = new MappingProblem(resources,
        matrix("det", Map.of("gpu0", 12.0, "gpu1", 15.0, "cpu0", 160.0),
            "cls", Map.of("gpu0", 1.5, "gpu1", 1.8, "cpu0", 2.8),
            "rec", Map.of("gpu0", 4.0, "gpu1", 5.0, "cpu0", 32.0)),
        List.of(new ServiceSpec("ocr", List.of(new ServiceStage("det", 20), new ServiceStage("cls", 60),
            new ServiceStage("rec", 60)))));

    ServiceMapping s = MappingPlanner.plan(p).services().get(0);

    assertThat(s.modelFirst().costMsPerSecond()).isEqualTo(300.0);
    assertThat(s.hardwareFirst().costMsPerSecond()).isEqualTo(408.0);
    assertThat(s.chosen()).isEqualTo(MappingScheme.MODEL_FIRST);
    assertThat(s.why()).isEqualTo("lower bottleneck load");
  }

  @Test
  void shouldPlanTheHeavierServiceFirstAndCarryItsLoad() {
    MappingProblem p = new MappingProblem(GPU_AND_CPU,
        matrix("x", Map.of("g", 10.0, "c", 30.0), "y", Map.of("g", 10.0, "c", 30.0)),
        List.of(new ServiceSpec("light", List.of(new ServiceStage("y", 1))),
            new ServiceSpec("heavy", List.of(new ServiceStage("x", 5)))));

    MappingPlan plan = MappingPlanner.plan(p);

    assertThat(plan.services()).extracting(ServiceMapping::serviceId).containsExactly("heavy", "light");
    // heavy puts 50 ms/s on g; light then finishes sooner on c (30) than on g (60).
    assertThat(where(plan.assignments(), "y")).isEqualTo("c");
    assertThat(plan.costMsPerSecond()).isEqualTo(50.0);
  }

  @Test
  void shouldImproveWhenAnEarlierServiceTookTheOnlyResourceOfALaterOne() {
    // heavy's x goes to the GPU (10 < 12); light's y runs only there: bottleneck 19. Moving x to
    // the CPU gives 12, the optimum.
    MappingProblem p = new MappingProblem(GPU_AND_CPU,
        matrix("x", Map.of("g", 10.0, "c", 12.0), "y", Map.of("g", 9.0)),
        List.of(new ServiceSpec("heavy", List.of(new ServiceStage("x", 1))),
            new ServiceSpec("light", List.of(new ServiceStage("y", 1)))));

    MappingPlan plan = MappingPlanner.plan(p);

    assertThat(plan.improvement().schemesCostMsPerSecond()).isEqualTo(19.0);
    assertThat(plan.costMsPerSecond()).isEqualTo(12.0);
    assertThat(plan.improvement().improvementSteps()).isEqualTo(1);
    assertThat(where(plan.assignments(), "x")).isEqualTo("c");
    assertThat(plan.exact().gap()).isEqualTo(1.0);
  }

  @Test
  void shouldNameTheModelThatCanRunNowhere() {
    MappingProblem p = new MappingProblem(GPU_AND_CPU, matrix("a", Map.of("g", 1.0)),
        List.of(new ServiceSpec("s", List.of(new ServiceStage("a", 1), new ServiceStage("ghost", 1)))));

    MappingPlan plan = MappingPlanner.plan(p);

    assertThat(plan.planned()).isFalse();
    assertThat(plan.errors()).singleElement().asString().contains("model ghost of service s can run on no resource");
  }

  @Test
  void shouldSkipTheExactOptimumAboveItsBoundAndSaySo() {
    MappingProblem p = new MappingProblem(GPU_AND_CPU, matrix("a", Map.of("g", 1.0, "c", 2.0)),
        List.of(new ServiceSpec("s", List.of(new ServiceStage("a", 1)))), 0, 8);

    ExactMapping exact = MappingPlanner.plan(p).exact();

    assertThat(exact.computed()).isFalse();
    assertThat(exact.gap()).isNull();
    assertThat(exact.reason()).contains("exceeds the bound of 0 placements");
  }

  @Test
  void shouldRefuseAMatrixWithOneResourceKind() {
    assertThatThrownBy(() -> new MappingProblem(List.of(new ResourceSpec("a", "cpu"), new ResourceSpec("b", "cpu")),
        Map.of(), List.of(new ServiceSpec("s", List.of(new ServiceStage("m", 1))))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least two kinds");
  }

  @Test
  void exactOptimumShouldMatchBruteForceOnEightModelsAndFiveResources() {
    java.util.Random random = new java.util.Random(11);
    for (int round = 0; round < 5; round++) {
      MappingProblem p = MappingPropertiesTest.randomProblem(random.nextLong(), 8, 5);
      ExactMapping exact = MappingPlanner.exact(p);
      MappingOracle.Best oracle = MappingOracle.best(p);

      assertThat(exact.computed()).isTrue();
      assertThat(Tolerance.compare(exact.costMsPerSecond(), oracle.cost())).isZero();
      assertThat(Tolerance.compare(exact.pipelineLatencyMs(), oracle.latency())).isZero();
      assertThat(exact.nodesExplored()).isLessThan(oracle.assignments() * 8);
    }
  }

  /**
   * The improvement pass's candidate budget binds only on large problems: below it the plan is the
   * one of an unbounded pass (the benchmark problem, 200 placements on 32 resources, included).
   */
  @Test
  void shouldPlanAsWithoutTheCandidateBudgetWhereItDoesNotBind() {
    for (long seed = 1; seed <= 12; seed++) {
      MappingProblem problem = io.partita.planning.bench.Problems.mapping(20 + (int) (seed * 7), 4 + (int) (seed % 5) * 3,
          4, seed, 0);
      assertThat(MappingPlanner.plan(problem)).as("seed %d", seed).isEqualTo(MappingPlanner.plan(problem, Long.MAX_VALUE));
    }
    MappingProblem bench = io.partita.planning.bench.Problems.mapping(200, 32, 20, 1, 10);
    assertThat(MappingPlanner.plan(bench).improvement().improvementSteps()).isEqualTo(129);
  }
}
