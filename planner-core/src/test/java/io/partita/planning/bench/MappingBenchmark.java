package io.partita.planning.bench;

import io.partita.planning.mapping.MappingPlan;
import io.partita.planning.mapping.MappingPlanner;
import io.partita.planning.mapping.MappingProblem;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Mapping 200 models (10 services of 20) on 32 resources (8 GPUs, 24 CPU partitions) with both
 * schemes; far above the exact optimum's bound, so the plan only says why it was not computed.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class MappingBenchmark {

  private MappingProblem problem;

  @Setup
  public void setUp() {
    problem = Problems.mapping(200, 32, 20, 1, 10);
  }

  @Benchmark
  public MappingPlan plan() {
    return MappingPlanner.plan(problem);
  }
}
