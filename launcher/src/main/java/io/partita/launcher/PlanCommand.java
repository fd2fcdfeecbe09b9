package io.partita.launcher;

import io.partita.planning.cli.PlanCli;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code partita plan grouping|mapping --input FILE}: the offline planner over a JSON problem file.
 * The file is read and checked by {@link PlanCli} (exit 2 naming the field of anything it cannot
 * mean, 1 for a valid problem without a plan, 0 planned).
 */
@Command(name = "plan", mixinStandardHelpOptions = true,
    description = {"Plan offline from a JSON problem file and print the plan as JSON.",
        "The file formats are in docs/planning.md; examples in planner-core/examples/."},
    subcommands = {PlanCommand.Grouping.class, PlanCommand.Mapping.class})
final class PlanCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    throw new CommandLine.ParameterException(spec.commandLine(),
        "a planning problem is required: partita plan grouping --input FILE, or partita plan mapping --input FILE");
  }

  /** What both subcommands take. */
  static class Input {
    @Option(names = "--input", required = true, paramLabel = "FILE", description = "The problem file (JSON).")
    Path file;
  }

  @Command(name = "grouping", mixinStandardHelpOptions = true,
      description = {"Split a pool of alike resources into partitions for one or more models (method 1).",
          "Example: planner-core/examples/grouping-cpu-pool.json. Exit 0 planned, 1 no eligible grouping,"
              + " 2 invalid problem (the message names the field)."})
  static final class Grouping implements Callable<Integer> {
    @CommandLine.Mixin Input input = new Input();

    @Override
    public Integer call() {
      return PlanCli.plan(PlanCli.Kind.GROUPING, input.file, System.out, System.err);
    }
  }

  @Command(name = "mapping", mixinStandardHelpOptions = true,
      description = {"Map services' models onto kinds of hardware from a timing matrix (method 2).",
          "Example: planner-core/examples/mapping-ocr.json. Exit 0 planned, 1 a model can run nowhere,"
              + " 2 invalid problem (the message names the field)."})
  static final class Mapping implements Callable<Integer> {
    @CommandLine.Mixin Input input = new Input();

    @Override
    public Integer call() {
      return PlanCli.plan(PlanCli.Kind.MAPPING, input.file, System.out, System.err);
    }
  }
}
