package io.partita.launcher;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code partita help [COMMAND...]}: the usage of {@code partita}, or of the command named (as
 * {@code partita help plan grouping}); the same text as {@code --help} on that command. An unknown
 * command name or flag is a usage error like anywhere else in the tree.
 */
@Command(name = "help", mixinStandardHelpOptions = true,
    description = "Show the usage of partita, or of a command: partita help plan grouping.")
final class HelpCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(paramLabel = "COMMAND", arity = "0..*", description = "The command (and subcommand) to show.")
  List<String> path = List.of();

  @Override
  public Integer call() {
    CommandLine target = spec.root().commandLine();
    for (String name : path) {
      CommandLine next = target.getSubcommands().get(name);
      if (next == null) {
        throw new CommandLine.ParameterException(spec.commandLine(), "unknown command '" + name + "' (known: "
            + String.join(", ", target.getSubcommands().keySet()) + ")");
      }
      target = next;
    }
    target.usage(spec.commandLine().getOut());
    return 0;
  }
}
