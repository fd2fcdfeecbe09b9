package io.partita.launcher;

import java.util.ServiceLoader;

/**
 * A {@code partita} subcommand that lives in a module built on top of the launcher (the benchmark
 * harness, module {@code bench}), so the launcher cannot name it at compile time. {@link Partita}
 * finds each one on its class path with {@link ServiceLoader} (a
 * {@code META-INF/services/io.partita.launcher.CliExtension} entry in the extension's jar) and
 * puts it in the command tree under the name of its {@code @Command} annotation.
 */
public interface CliExtension {

  /** A fresh picocli command object (annotated with {@code @Command}) for one command line. */
  Object command();
}
