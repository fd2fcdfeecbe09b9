package io.partita.planning.bench;

import io.partita.planning.grouping.GroupingPlan;
import io.partita.planning.grouping.GroupingPlanner;
import io.partita.planning.grouping.GroupingProblem;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Grouping a pool of 1024 resources with 64 measured sizes. Scenarios: {@code unconstrained}
 * (the one-dimensional program decides), {@code buffer64} (at most 64 partitions, below the
 * unconstrained optimum's count, so the (partitions, resources) program runs), {@code buffer512}
 * (the same with 512 partitions) and {@code memory} (a pool memory that can bind, on a
 * 128-resource pool with 24 sizes: the Pareto program).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class GroupingBenchmark {

  @Param({"unconstrained", "buffer64", "buffer512", "memory"})
  public String scenario;

  private GroupingProblem problem;

  @Setup
  public void setUp() {
    problem = switch (scenario) {
      case "unconstrained" -> Problems.grouping(1024, 64, 0, 0, 1L << 40, 1);
      case "buffer64" -> Problems.grouping(1024, 64, 1 << 20, 64L << 20, 1L << 40, 1);
      case "buffer512" -> Problems.grouping(1024, 64, 1 << 20, 512L << 20, 1L << 40, 1);
      case "memory" -> Problems.grouping(128, 24, 0, 0, 40_000_000L, 1);
      default -> throw new IllegalArgumentException(scenario);
    };
  }

  @Benchmark
  public GroupingPlan plan() {
    return GroupingPlanner.plan(problem);
  }
}
