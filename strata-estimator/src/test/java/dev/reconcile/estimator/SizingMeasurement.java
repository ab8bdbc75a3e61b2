package dev.reconcile.estimator;

import dev.reconcile.core.IbltShape;
import dev.reconcile.core.wire.Estimator;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Measurement behind the sizing factor in docs/estimator.md (not a test; run by hand):
 *
 * <pre>
 *   java -cp ... dev.reconcile.estimator.SizingMeasurement [trials]
 * </pre>
 *
 * For the default estimator, each d and each candidate factor f: the share of trials whose first
 * table ({@code IbltShape.atLeast(3, Sizing.cellsFor(ceil(estimate * f)))}) decodes, and the share
 * with {@code ceil(estimate * f) >= d} (independent of the sizing table).
 */
final class SizingMeasurement {
  private SizingMeasurement() {}

  static final double[] FACTORS = {1.0, 1.1, 1.2, 1.25, 1.3, 1.35, 1.4, 1.5};
  static final int[] DS = {1, 10, 100, 1000, 10_000, 100_000};

  public static void main(String[] args) {
    int trials = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    StrataEstimatorFactory f = StrataEstimatorFactory.defaults();
    Estimator empty = DifferenceTrial.emptyProto(f);
    StringBuilder head = new StringBuilder("| d | trials |");
    StringBuilder sep = new StringBuilder("|---|---|");
    for (double x : FACTORS) {
      head.append(String.format(Locale.ROOT, " f=%.2f decode / cover |", x));
      sep.append("---|");
    }
    System.out.println(head);
    System.out.println(sep);
    for (int d : DS) {
      int[] ok = new int[FACTORS.length];
      int[] cover = new int[FACTORS.length];
      for (int t = 0; t < trials; t++) {
        DifferenceTrial trial = DifferenceTrial.of(t, d);
        long est = trial.estimate(f, empty);
        Map<IbltShape, Boolean> cache = new HashMap<>();
        for (int i = 0; i < FACTORS.length; i++) {
          IbltShape s = DifferenceTrial.firstShape(est, FACTORS[i]);
          if (cache.computeIfAbsent(s, trial::decodes)) {
            ok[i]++;
          }
          if (Math.ceil(est * FACTORS[i]) >= d) {
            cover[i]++;
          }
        }
      }
      StringBuilder row = new StringBuilder("| " + d + " | " + trials + " |");
      for (int i = 0; i < FACTORS.length; i++) {
        row.append(
            String.format(
                Locale.ROOT,
                " %.1f %% / %.1f %% |",
                100.0 * ok[i] / trials,
                100.0 * cover[i] / trials));
      }
      System.out.println(row);
    }
  }
}
