package dev.reconcile.estimator;

import dev.reconcile.core.CellLayout;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.Sizing;
import dev.reconcile.core.wire.Estimator;
import java.util.Locale;

/**
 * Measurement behind the sizing factor and the end-to-end table bytes in docs/estimator.md and
 * docs/sizing.md (not a test; run by hand):
 *
 * <pre>
 *   java -cp ... dev.reconcile.estimator.SizingMeasurement [trials] [tow|strata] [max d]
 * </pre>
 *
 * For an estimator and each d, over seeded trials ({@link DifferenceTrial#of}): the share of exact
 * estimates; the share with {@code ceil(estimate * f) >= d} ("cover"); first-try decode of the
 * table of the 99.9 % sizing ({@link DifferenceTrial#firstShape}); and with the planner's default,
 * {@link Sizing#firstShape(long, boolean, double)} followed by doubling until a decode: first-try
 * decode, mean cells sent (= cells of the table that decoded), mean retries and mean table bytes
 * ({@code 14 * cells + Sizing.DEFAULT_ROUND_TRIP_BYTES * retries}).
 */
final class SizingMeasurement {
  private SizingMeasurement() {}

  static final int[] DS = {
    1, 2, 3, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000, 2000, 5000, 10_000, 30_000,
    100_000
  };

  public static void main(String[] args) {
    int trials = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    String kind = args.length > 1 ? args[1] : "tow";
    long maxD = args.length > 2 ? Long.parseLong(args[2]) : 100_000;
    EstimatorFactory f =
        kind.equals("strata")
            ? StrataEstimatorFactory.defaults()
            : TugOfWarEstimatorFactory.defaults();
    double factor = f.create(DifferenceTrial.SPEC).sizingFactor();
    Estimator empty = DifferenceTrial.emptyProto(f);
    int cellBytes = CellLayout.WIDE.cellBytes();
    System.out.printf(
        Locale.ROOT,
        "%s, sizing factor %.2f, %d trials per d, round trip %d B, %d B cells%n",
        f.params().toString().replace('\n', ' '),
        factor,
        trials,
        Sizing.DEFAULT_ROUND_TRIP_BYTES,
        cellBytes);
    System.out.println(
        "| d | exact | cover | first try, 99.9 % table | first try, least bytes | cells sent"
            + " | retries | table bytes | table bytes / d |");
    System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (int d : DS) {
      if (d > maxD) {
        break;
      }
      int exact = 0;
      int cover = 0;
      int reliable = 0;
      int first = 0;
      long cells = 0;
      long retries = 0;
      for (int t = 0; t < trials; t++) {
        DifferenceTrial trial = DifferenceTrial.of(t, d);
        var e = trial.differenceEstimator(f);
        dev.reconcile.core.Estimate estimate;
        try {
          estimate = e.estimate(empty);
        } catch (dev.reconcile.core.FormatException ex) {
          throw new AssertionError(ex);
        }
        long est = estimate.value();
        boolean isExact = estimate.exact();
        if (isExact) {
          exact++;
        }
        double used = isExact ? 1.0 : factor;
        if (Math.ceil(est * used) >= d) {
          cover++;
        }
        if (trial.decodes(DifferenceTrial.firstShape(est, used))) {
          reliable++;
        }
        IbltShape s = Sizing.firstShape(est, isExact, factor);
        int r = 0;
        while (!trial.decodes(s)) {
          s = s.doubled();
          r++;
        }
        if (r == 0) {
          first++;
        }
        cells += s.cells();
        retries += r;
      }
      double meanCells = (double) cells / trials;
      double meanRetries = (double) retries / trials;
      double bytes = meanCells * cellBytes + meanRetries * Sizing.DEFAULT_ROUND_TRIP_BYTES;
      System.out.printf(
          Locale.ROOT,
          "| %d | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %.1f | %.3f | %.0f | %.1f |%n",
          d,
          100.0 * exact / trials,
          100.0 * cover / trials,
          100.0 * reliable / trials,
          100.0 * first / trials,
          meanCells,
          meanRetries,
          bytes,
          bytes / d);
    }
  }
}
