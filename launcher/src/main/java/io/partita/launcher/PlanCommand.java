package io.partita.launcher;

import io.partita.planning.cli.PlanCli;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

@Command(name = "plan",
    description = {"Plan offline from a JSON problem file and print the plan as JSON.",
        "  partita plan grouping --input FILE   split a pool into partitions",
        "  partita plan mapping --input FILE    map a service's models onto kinds of hardware",
        "The file formats are in docs/planning.md; examples in planner-core/examples/."})
final class PlanCommand implements Callable<Integer> {
  @Unmatched List<String> args = new java.util.ArrayList<>();

  @Override
  public Integer call() {
    return PlanCli.run(args.toArray(String[]::new), System.out, System.err);
  }
}
