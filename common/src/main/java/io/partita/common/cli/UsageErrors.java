package io.partita.common.cli;

import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * How every Partita command answers a command line it cannot act on: one line naming the flag (or
 * argument) and what is wrong with it, then where the usage is, on standard error, and exit code 2
 * ({@link #EXIT_CODE}). Nothing has run when it answers. Shared by the launcher's command tree and
 * the commands that also run on their own ({@code partita profile}).
 *
 * <p>The lines: {@code unknown flag '--frobnicate'} (with picocli's suggestion when one is close),
 * {@code unknown command 'placement' (known: grouping, mapping)}, {@code --budget-ms needs a value},
 * {@code --input is required}, {@code --sizes: expected a positive whole number, got 'x'} (a typed
 * option's converter names what it expected), or the message a command's own check gave.
 */
public final class UsageErrors implements CommandLine.IParameterExceptionHandler {

  /** The exit code of a usage error, the same for every command. */
  public static final int EXIT_CODE = 2;

  @Override
  public int handleParseException(ParameterException ex, String[] args) {
    CommandLine cmd = ex.getCommandLine();
    PrintWriter err = cmd.getErr();
    err.println(message(ex));
    err.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for the usage.");
    err.flush();
    return EXIT_CODE;
  }

  /** The one line that names what is wrong. */
  public static String message(ParameterException ex) {
    // picocli reports a missing required flag before an unknown one; the unknown flag is the more
    // likely mistake (a typo of the required one), so it is named first.
    List<String> unmatched = ex.getCommandLine().getUnmatchedArguments();
    if (ex instanceof MissingParameterException && !unmatched.isEmpty() && unmatched.get(0).startsWith("-")) {
      return message(new UnmatchedArgumentException(ex.getCommandLine(), unmatched));
    }
    if (ex instanceof UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
      String arg = u.getUnmatched().get(0);
      CommandLine cmd = u.getCommandLine();
      List<String> suggestions = u.getSuggestions();
      String hint = suggestions.isEmpty() ? "" : " (did you mean '" + suggestions.get(0) + "'?)";
      if (!arg.startsWith("-") && !cmd.getSubcommands().isEmpty()) {
        return "unknown command '" + arg + "' (known: " + String.join(", ", cmd.getSubcommands().keySet()) + ")";
      }
      return "unknown flag '" + arg + "'" + hint;
    }
    if (ex instanceof MissingParameterException m && !m.getMissing().isEmpty()) {
      ArgSpec missing = m.getMissing().get(0);
      String name = name(missing);
      return ex.getMessage().startsWith("Missing required option") || missing instanceof PositionalParamSpec
          ? name + " is required"
          : name + " needs a value";
    }
    if (ex.getArgSpec() != null && ex.getCause() instanceof CommandLine.TypeConversionException t) {
      return name(ex.getArgSpec()) + ": " + t.getMessage();
    }
    return ex.getMessage();
  }

  private static String name(ArgSpec arg) {
    return arg instanceof OptionSpec o ? o.longestName() : arg.paramLabel();
  }
}
