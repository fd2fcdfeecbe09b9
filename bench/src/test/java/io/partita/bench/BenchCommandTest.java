package io.partita.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.launcher.Partita;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code partita bench} through the launcher's whole command tree, as a user reaches it: the
 * launcher finds this module's command on the class path (META-INF/services), puts it where it
 * always stood, and it refuses what it cannot run before running anything.
 */
class BenchCommandTest {

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

  @Test
  void shouldBeTheBenchOfThisModuleInThePlaceOfTheLaunchersStandIn() {
    Object bench = Partita.commandLine().getSubcommands().get("bench").getCommand();

    assertThat(bench).isInstanceOf(BenchCommand.class);
    assertThat(Partita.commandLine().getSubcommands().keySet())
        .containsSubsequence("profiler", "bench", "generate-completion", "help");
  }

  @Test
  void shouldPrintTheBenchUsageAndExitZeroOnHelp() {
    Run r = run(List.of("bench", "--help"));

    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("Usage: partita bench").contains("--quick").contains("--only=PART")
        .contains("--scale-cells").doesNotContain("not in this build");
    assertThat(r.err()).isEmpty();
  }

  @Test
  void shouldRefuseAnUnknownFlagWithExitTwoNamingIt() {
    Run r = run(List.of("bench", "--no-such-flag"));

    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("unknown flag '--no-such-flag'").contains("--help").doesNotContain("not in this build");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void shouldRefuseABenchModelOrPartItDoesNotHaveBeforeRunningAnything() {
    Run unknown = run(List.of("bench", "--model", "resnet", "--work-dir", "/nonexistent/bench"));
    Run contradiction = run(List.of("bench", "--model", "ocr-rec", "--no-ocr", "--work-dir", "/nonexistent/bench"));
    Run part = run(List.of("bench", "--only", "everything", "--work-dir", "/nonexistent/bench"));

    assertThat(unknown.code()).isEqualTo(2);
    assertThat(unknown.err()).contains("--model resnet").contains("'demo-mlp' and 'ocr-rec'");
    assertThat(contradiction.code()).isEqualTo(2);
    assertThat(contradiction.err()).contains("--model ocr-rec and --no-ocr");
    assertThat(part.code()).isEqualTo(2);
    assertThat(part.err()).contains("--only everything");
  }
}
