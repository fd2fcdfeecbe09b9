package io.partita.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Collects the benchmark's tables and writes them as Markdown, with the machine they ran on. */
final class Report {
  record Table(String title, String note, List<String> columns, List<List<String>> rows, String command) {}

  private final List<Table> tables = new ArrayList<>();
  private final Map<String, String> notes = new LinkedHashMap<>();

  void add(Table table) {
    tables.add(table);
    System.out.println(render(table));
  }

  void note(String key, String text) {
    notes.put(key, text);
    System.out.println("- " + key + ": " + text);
  }

  static String fmt(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "n/a";
    }
    double a = Math.abs(v);
    if (a >= 1000) return String.format(Locale.ROOT, "%.0f", v);
    if (a >= 100) return String.format(Locale.ROOT, "%.1f", v);
    if (a >= 1) return String.format(Locale.ROOT, "%.2f", v);
    if (a >= 0.01 || a == 0) return String.format(Locale.ROOT, "%.3f", v);
    return String.format(Locale.ROOT, "%.2g", v);
  }

  static String render(Table t) {
    StringBuilder b = new StringBuilder();
    b.append("### ").append(t.title()).append("\n\n");
    if (t.note() != null && !t.note().isBlank()) {
      b.append(t.note()).append("\n\n");
    }
    b.append("| ").append(String.join(" | ", t.columns())).append(" |\n");
    b.append("|").append(" --- |".repeat(t.columns().size())).append("\n");
    for (List<String> row : t.rows()) {
      b.append("| ").append(String.join(" | ", row)).append(" |\n");
    }
    b.append("\nReproduce: `").append(t.command()).append("`\n");
    return b.toString();
  }

  void write(Path out, boolean quick, String machine) throws IOException {
    StringBuilder b = new StringBuilder();
    b.append("# Benchmarks\n\n");
    b.append("Written by `./partita bench").append(quick ? " --quick" : "").append("` on ")
        .append(LocalDate.now(ZoneOffset.UTC)).append(".").append(quick ? " **Quick mode: tiny sizes, figures are only a smoke test.**" : "").append("\n\n");
    b.append(machine).append("\n\n");
    b.append("Every ratio compares figures measured in the same run, on the same cores; absolute times on a shared machine drift.\n\n");
    for (Table t : tables) {
      b.append(render(t)).append("\n");
    }
    if (!notes.isEmpty()) {
      b.append("## Notes\n\n");
      notes.forEach((k, v) -> b.append("- **").append(k).append("**: ").append(v).append("\n"));
    }
    Files.writeString(out, b.toString());
  }
}
