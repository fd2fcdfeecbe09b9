package io.partita.profiler.cli;

import io.partita.profiler.measure.ProgressListener;
import java.io.PrintStream;

/** A one-line progress bar redrawn with carriage returns; a total of -1 shows a count only. */
final class ProgressBar implements ProgressListener {

  private static final int WIDTH = 24;
  private final PrintStream err;
  private int failed;

  ProgressBar(PrintStream err) {
    this.err = err;
  }

  @Override
  public void starting(int index, int total, String label) {
    draw(index, total, label);
  }

  @Override
  public void finished(int index, int total, String label, boolean ok) {
    if (!ok) {
      failed++;
    }
    draw(index + 1, total, label + (ok ? "" : " FAILED"));
  }

  /** Ends the bar's line. */
  void done() {
    err.print("\n");
    err.flush();
  }

  private void draw(int done, int total, String label) {
    StringBuilder line = new StringBuilder("\r");
    if (total > 0) {
      int filled = (int) ((long) WIDTH * done / total);
      line.append('[').append("#".repeat(filled)).append(".".repeat(WIDTH - filled)).append("] ")
          .append(done).append('/').append(total);
    } else {
      line.append("[").append(done).append(" points]");
    }
    line.append(' ').append(label);
    if (failed > 0) {
      line.append(" (").append(failed).append(" failed)");
    }
    // pad so a shorter line fully covers the previous one
    err.print(String.format("%-100s", line));
    err.flush();
  }
}
