package io.partita.launcher;

import io.partita.common.cli.UsageErrors;
import io.partita.common.config.ConfigException;
import io.partita.models.repo.RepositoryException;
import io.partita.profiler.cli.ProfileCli;
import java.util.ServiceLoader;
import picocli.CommandLine.Command;
import picocli.CommandLine;

/**
 * The {@code partita} command line: one entry point for every Partita component and tool. Every
 * command and subcommand answers {@code --help} with its usage (exit 0) and a command line it
 * cannot act on with one line naming the flag (exit 2, {@link UsageErrors});
 * {@code partita generate-completion} prints a bash/zsh completion script for the whole tree.
 */
@Command(
    name = "partita",
    mixinStandardHelpOptions = true,
    versionProvider = Partita.Version.class,
    description = "Measure, plan and serve ONNX models on Apache Kafka.",
    subcommands = {
      LocalCommand.class,
      ClusterCommand.class,
      BrokerCommand.class,
      WorkerCommand.class,
      GatewayCommand.class,
      JobCommand.class,
      PlanCommand.class,
      PlannerCommand.class,
      ReplayCommand.class,
      ProfileCli.class,
      ProfilerCommand.class
      // then the extensions found on the class path (bench), generate-completion and help: commandLine()
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
    return commandLine().execute(args);
  }

  /**
   * The whole command tree with Partita's handling of usage errors and of failures while running.
   * The subcommands of modules built on top of the launcher ({@link CliExtension}) come after the
   * launcher's own, so {@code partita --help} lists them where they always stood; {@code bench}
   * without its jar is {@link BenchMissing}, which says how to get it.
   */
  public static CommandLine commandLine() {
    CommandLine root = new CommandLine(new Partita());
    for (CliExtension extension : ServiceLoader.load(CliExtension.class, Partita.class.getClassLoader())) {
      root.addSubcommand(extension.command());
    }
    if (!root.getSubcommands().containsKey("bench")) {
      root.addSubcommand(new BenchMissing());
    }
    root.addSubcommand(new CompletionCommand());
    root.addSubcommand(new HelpCommand());
    UsageErrors usageErrors = new UsageErrors();
    return root
        .setParameterExceptionHandler((ex, args) -> {
          if (ex.getCommandLine().getCommand() instanceof BenchMissing) {
            ex.getCommandLine().getErr().println(BenchMissing.HINT);
          }
          return usageErrors.handleParseException(ex, args);
        })
        .setExecutionExceptionHandler((e, cmd, parsed) -> {
          // Errors that name their cause (bad settings, ports in use, bad model repositories) are
          // shown as one line; anything unexpected keeps its stack trace for the bug report.
          if (e instanceof IllegalStateException || e instanceof IllegalArgumentException
              || e instanceof ConfigException
              || e instanceof RepositoryException) {
            cmd.getErr().println("partita " + cmd.getCommandName() + ": " + e.getMessage());
            return 2;
          }
          throw e;
        });
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
