package io.partita.launcher;

import io.partita.profiler.cli.ProfileCli;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

/**
 * {@code partita profile ...}: hands every argument after the word {@code profile} to
 * {@link ProfileCli}, which parses them itself (so its usage errors name the flag exactly as typed).
 */
@Command(name = "profile",
    description = "Measure a model on this machine (latency percentiles and throughput over partition and batch"
        + " sizes), print the host environment, or run the baseline benchmark; --broker also publishes."
        + " 'partita profile --help' lists the flags.")
final class ProfileCommand implements Callable<Integer> {
  @Unmatched List<String> args = new ArrayList<>();

  @Override
  public Integer call() {
    return ProfileCli.run(args, System.out, System.err);
  }
}
