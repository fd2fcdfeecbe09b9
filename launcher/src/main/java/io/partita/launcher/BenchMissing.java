package io.partita.launcher;

import io.partita.common.cli.UsageErrors;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What {@code partita bench} is when the benchmark harness (module {@code bench}, its jar in
 * {@code lib/} beside the launcher's) is not on the class path: a command that says so and how to
 * get it, with exit code 2, before anything runs. {@link Partita} also puts {@link #HINT} before the
 * usage error of any flag given to it, since the flags it does not know are the bench's.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = {"Measure Partita on this machine and write BENCHMARKS.md; not in this build:",
        "build the whole project to get it (./mvnw -B -DskipTests package from the repository root)."})
final class BenchMissing implements Callable<Integer> {

  /** Why there is no bench and how to get it. */
  static final String HINT = String.join(System.lineSeparator(),
      "partita bench: the benchmark harness is not in this build: lib/ beside partita-launcher.jar has no",
      "partita-bench jar (a build of the launcher module alone leaves it out). Build the whole project, from the",
      "repository root: ./mvnw -B -DskipTests package (./partita bench does it by itself when the jar is missing).");

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    CommandLine cmd = spec.commandLine();
    cmd.getErr().println(HINT);
    cmd.getErr().flush();
    return UsageErrors.EXIT_CODE;
  }
}
