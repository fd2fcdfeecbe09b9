package io.partita.launcher;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.common.config.Settings;
import io.partita.planner.PlannerConfig;
import io.partita.planner.replay.Inventory;
import io.partita.planner.replay.Replay;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "replay", mixinStandardHelpOptions = true,
    description = {"Re-plan a stretch of recorded history in a private copy of the planner topology and print the plan it would have made, with a diff against the live plan tables.",
        "  partita replay --from 2026-11-29T10:00:00Z --to 2026-11-29T12:00:00Z --inventory hosts.yaml --out plan.json",
        "Times are ISO-8601 instants or epoch milliseconds. See docs/planner.md."})
final class ReplayCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Option(names = "--from", paramLabel = "TIME", description = "Start of the timing events replayed (default: the beginning).")
  String from;

  @Option(names = "--to", paramLabel = "TIME", description = "End of the range, inclusive (default: now).")
  String to;

  @Option(names = "--inventory", paramLabel = "FILE", description = "What-if inventory (YAML): hosts to add, change or remove.")
  Path inventory;

  @Option(names = "--out", paramLabel = "FILE", description = "Write the replayed plan (JSON) to this file.")
  Path out;

  @Override
  public Integer call() throws Exception {
    Settings settings = common.settings(Map.of(), Map.of());
    PlannerConfig config = PlannerConfig.from(settings);
    long fromMs = from == null ? 0 : time("--from", from);
    long toMs = to == null ? System.currentTimeMillis() : time("--to", to);
    Inventory whatIf = inventory == null ? null : Inventory.read(inventory);
    Path state = Files.createTempDirectory("partita-replay");
    try {
      Replay.Result result = Replay.run(config.kafka().clients(), config.plan(), config.codecs(), fromMs, toMs, whatIf, state);
      ObjectNode plan = Replay.toJson(result.replayed(), config.topics(), config.codecs());
      ObjectNode report = new ObjectMapper().createObjectNode();
      report.put("from", fromMs);
      report.put("to", toMs);
      report.put("topicPrefix", config.kafka().topicPrefix());
      report.set("plan", plan);
      report.set("diff", Replay.toJson(result.diff(), result.replayed(), result.live(), config.topics(), config.codecs()));
      System.out.println(Replay.pretty(report));
      if (out != null) {
        Replay.write(out, plan);
      }
      return 0;
    } finally {
      deleteTree(state);
    }
  }

  static long time(String option, String text) {
    if (text.matches("-?\\d+")) {
      return Long.parseLong(text);
    }
    try {
      return Instant.parse(text).toEpochMilli();
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(option + " " + text
          + ": expected an ISO-8601 instant (2026-11-29T10:00:00Z) or epoch milliseconds");
    }
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
