package io.partita.launcher;

import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.gateway.dashboard.WhatIf;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.replay.Inventory;
import io.partita.planner.replay.Replay;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.SortedMap;
import java.util.stream.Stream;

/**
 * The dashboard's what-if, for gateways run by the launcher: what {@code partita replay --inventory}
 * does, over the whole recorded history up to now, with the planner's default settings
 * ({@link PlanSettings#defaults}); a planner run with other {@code planner.*} settings is compared
 * against a plan made with the defaults. Found by the gateway through {@link java.util.ServiceLoader}.
 */
public final class ReplayWhatIf implements WhatIf.Provider {
  @Override
  public WhatIf create(Properties kafka, Topics topics, Codecs codecs) {
    return inventoryYaml -> {
      Path state = null;
      try {
        state = Files.createTempDirectory("partita-whatif");
        Path file = state.resolve("inventory.yaml");
        Files.writeString(file, inventoryYaml);
        Inventory inventory;
        try {
          inventory = Inventory.read(file);
        } catch (IllegalArgumentException e) { // name the upload, not the temporary file
          throw new IllegalArgumentException(String.valueOf(e.getMessage()).replace("inventory " + file + ": ", "")
              .replace("inventory " + file + " ", ""), e);
        }
        Replay.Result result = Replay.run(kafka, PlanSettings.defaults(topics), codecs, 0, System.currentTimeMillis(),
            inventory, state.resolve("state"));
        Map<String, SortedMap<String, byte[]>> out = new LinkedHashMap<>();
        result.replayed().forEach((table, rows) -> out.put(table.topic(topics), rows));
        return out;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } finally {
        if (state != null) {
          deleteTree(state);
        }
      }
    };
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

}
