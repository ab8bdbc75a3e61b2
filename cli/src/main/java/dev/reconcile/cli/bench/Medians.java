package dev.reconcile.cli.bench;

import java.util.Arrays;

/** Order statistics of small samples (the bench's, and the benchmarks module's). */
public final class Medians {
  private Medians() {}

  /** The median (mean of the two middle values for an even count); NaN when empty. */
  public static double of(double[] xs) {
    if (xs.length == 0) {
      return Double.NaN;
    }
    double[] s = xs.clone();
    Arrays.sort(s);
    int m = s.length / 2;
    return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
  }

  static double of(long[] xs) {
    return of(Arrays.stream(xs).asDoubleStream().toArray());
  }

  /**
   * The {@code q} quantile by the nearest-rank method (the smallest value with at least {@code q}
   * of the sample at or below it); NaN when empty.
   */
  static double quantile(double[] xs, double q) {
    if (xs.length == 0) {
      return Double.NaN;
    }
    double[] s = xs.clone();
    Arrays.sort(s);
    int rank = (int) Math.ceil(q * s.length);
    return s[Math.max(0, Math.min(s.length - 1, rank - 1))];
  }

  static double max(double[] xs) {
    return Arrays.stream(xs).max().orElse(Double.NaN);
  }
}
