package io.partita.planning;

/** The one comparison of planned figures: values within a relative 1e-9 tie. */
final class Tolerance {
  static final double RELATIVE = 1e-9;

  private Tolerance() {}

  static int compare(double a, double b) {
    if (a == b) {
      return 0;
    }
    if (Double.isInfinite(a) || Double.isInfinite(b)) {
      return Double.compare(a, b);
    }
    double scale = Math.max(1.0, Math.max(Math.abs(a), Math.abs(b)));
    if (Math.abs(a - b) <= RELATIVE * scale) {
      return 0;
    }
    return a < b ? -1 : 1;
  }
}
