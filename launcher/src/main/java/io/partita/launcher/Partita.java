package io.partita.launcher;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code partita} command line: one entry point for every Partita component and tool. */
@Command(
    name = "partita",
    mixinStandardHelpOptions = true,
    versionProvider = Partita.Version.class,
    description = "Measure, plan and serve ONNX models on Apache Kafka.",
    subcommands = {
      LocalCommand.class,
      WorkerCommand.class,
      GatewayCommand.class,
      JobCommand.class,
      PlanCommand.class,
      PlannerCommand.class,
      ReplayCommand.class,
      ProfileCommand.class,
      ProfilerCommand.class,
      BenchCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Partita implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    // The JDK HTTP server leaves Nagle's algorithm on by default, which with delayed ACKs adds
    // about 40 ms to every small answer; the gateway wants every answer out at once.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
    System.exit(run(args));
  }

  public static int run(String... args) {
    return new CommandLine(new Partita())
        .setExecutionExceptionHandler((e, cmd, parsed) -> {
          // Errors that name their cause (bad settings, ports in use, bad model repositories) are
          // shown as one line; anything unexpected keeps its stack trace for the bug report.
          if (e instanceof IllegalStateException || e instanceof IllegalArgumentException
              || e instanceof io.partita.common.config.ConfigException
              || e instanceof io.partita.models.repo.RepositoryException) {
            cmd.getErr().println("partita " + cmd.getCommandName() + ": " + e.getMessage());
            return 2;
          }
          throw e;
        })
        .execute(args);
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Partita.class.getPackage().getImplementationVersion();
      return new String[] {"partita " + (v == null ? "(development build)" : v)};
    }
  }
}
