package io.partita.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Walks the whole {@code partita} command tree: every command and subcommand answers
 * {@code --help} with its usage and exit 0, and refuses an unknown flag with exit 2 and one line
 * naming the flag, without running anything.
 */
class PartitaCommandTreeTest {

  private record Run(int code, String out, String err) {}

  private static Run run(List<String> args) {
    CommandLine cmd = Partita.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    int code = cmd.execute(args.toArray(String[]::new));
    return new Run(code, out.toString(), err.toString());
  }

  /** Every command path below {@code partita}, e.g. {@code [plan, grouping]}, depth first. */
  private static List<List<String>> paths(CommandLine cmd, List<String> prefix) {
    List<List<String>> out = new ArrayList<>();
    for (Map.Entry<String, CommandLine> sub : cmd.getSubcommands().entrySet()) {
      List<String> path = new ArrayList<>(prefix);
      path.add(sub.getKey());
      out.add(path);
      out.addAll(paths(sub.getValue(), path));
    }
    return out;
  }

  private static List<List<String>> everyCommand() {
    List<List<String>> all = new ArrayList<>();
    all.add(List.of());
    all.addAll(paths(Partita.commandLine(), List.of()));
    return all;
  }

  @Test
  void shouldWalkEveryCommandAndSubcommand() {
    assertThat(everyCommand()).contains(List.of("plan", "grouping"), List.of("plan", "mapping"), List.of("profile"),
        List.of("job", "submit"), List.of("local"), List.of("generate-completion")).hasSizeGreaterThan(15);
  }

  @Test
  void shouldPrintTheUsageAndExitZeroOnHelpForEveryCommand() {
    for (List<String> path : everyCommand()) {
      List<String> args = new ArrayList<>(path);
      args.add("--help");

      Run r = run(args);

      String name = String.join(" ", path);
      assertThat(r.code()).as("partita %s --help: %s", name, r.err()).isZero();
      assertThat(r.out()).as("partita %s --help", name).containsIgnoringCase("usage:").contains("--help");
      if (!path.isEmpty()) {
        assertThat(r.out()).as("partita %s --help", name).contains(path.get(path.size() - 1));
      }
      assertThat(r.err()).as("partita %s --help", name).isEmpty();
    }
  }

  @Test
  void shouldRefuseAnUnknownFlagWithExitTwoNamingItForEveryCommand() {
    for (List<String> path : everyCommand()) {
      List<String> args = new ArrayList<>(path);
      args.add("--no-such-flag");

      Run r = run(args);

      String name = String.join(" ", path);
      assertThat(r.code()).as("partita %s --no-such-flag: %s", name, r.err()).isEqualTo(2);
      assertThat(r.err()).as("partita %s --no-such-flag", name).contains("unknown flag '--no-such-flag'")
          .contains("--help");
      assertThat(r.out()).as("partita %s --no-such-flag", name).isEmpty();
    }
  }

  @Test
  void shouldPrintNothingOnStandardOutputAndExitTwoWhenPlanIsGivenNoProblem() {
    Run noSubcommand = run(List.of("plan"));
    Run noInput = run(List.of("plan", "grouping"));
    Run unknown = run(List.of("plan", "placement", "--input", "p.json"));
    Run noValue = run(List.of("plan", "mapping", "--input"));

    assertThat(noSubcommand.code()).isEqualTo(2);
    assertThat(noSubcommand.err()).contains("a planning problem is required");
    assertThat(noInput.code()).isEqualTo(2);
    assertThat(noInput.err()).startsWith("--input is required");
    assertThat(unknown.code()).isEqualTo(2);
    assertThat(unknown.err()).startsWith("unknown command 'placement' (known: grouping, mapping");
    assertThat(noValue.code()).isEqualTo(2);
    assertThat(noValue.err()).startsWith("--input needs a value");
  }

  @Test
  void shouldNameAMistypedFlagAndSuggestTheOneMeant() {
    Run r = run(List.of("plan", "grouping", "--inptu", "p.json"));

    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("unknown flag '--inptu' (did you mean '--input'?)" + System.lineSeparator()
        + "Try 'partita plan grouping --help' for the usage." + System.lineSeparator());
  }

  @Test
  void shouldShowTheUsageOfTheCommandHelpNames() {
    Run r = run(List.of("help", "plan", "grouping"));
    Run unknown = run(List.of("help", "plna"));

    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("partita plan grouping").contains("--input=FILE");
    assertThat(unknown.code()).isEqualTo(2);
    assertThat(unknown.err()).startsWith("unknown command 'plna' (known: ");
  }

  @Test
  void shouldGenerateABashCompletionScriptForTheWholeTree() {
    Run r = run(List.of("generate-completion"));

    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("complete -F _complete_partita").contains("grouping").contains("mapping")
        .contains("--model-repo").contains("--input");
  }

  /**
   * The bench is its own module, built on top of the launcher, so this module's tests run without it:
   * {@code partita bench} is then the command that says how to get it (the real one is checked in
   * module bench, BenchCommandTest).
   */
  @Test
  void shouldSayHowToGetTheBenchWhenItsJarIsNotOnTheClassPath() {
    Run bare = run(List.of("bench"));
    Run withFlag = run(List.of("bench", "--quick"));
    Run help = run(List.of("bench", "--help"));

    assertThat(bare.code()).isEqualTo(2);
    assertThat(bare.err()).contains("not in this build").contains("./mvnw -B -DskipTests package");
    assertThat(bare.out()).isEmpty();
    assertThat(withFlag.code()).isEqualTo(2);
    assertThat(withFlag.err()).contains("not in this build").contains("unknown flag '--quick'");
    assertThat(help.code()).isZero();
    assertThat(help.out()).contains("not in this build");
  }

  /** The order of partita --help, which the commands found at run time (bench) must not change. */
  @Test
  void shouldListTheCommandsInTheirOrderWithBenchAfterTheProfiler() {
    assertThat(Partita.commandLine().getSubcommands().keySet()).containsExactly("local", "cluster", "broker", "worker",
        "gateway", "job", "plan", "planner", "replay", "profile", "profiler", "bench", "generate-completion", "help");
  }
}
