package dev.reconcile.estimator;

import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.util.Arrays;
import java.util.Locale;

/**
 * Measurement behind the parameter choice in docs/estimator.md (not a test; run by hand):
 *
 * <pre>
 *   java -cp ... dev.reconcile.estimator.EstimatorMeasurement [trialsScale]
 * </pre>
 *
 * For each parameter set and d, prints wire bytes and quantiles of estimate/d, the saturation count
 * and {@code 1 / p1(estimate/d)}, the factor that puts {@code estimate * f >= d} in 99 % of trials.
 */
final class EstimatorMeasurement {
  private EstimatorMeasurement() {}

  static final int[][] CANDIDATES = {
    {32, 72, 3},
    {32, 64, 4},
    {32, 48, 3},
    {24, 96, 3},
    {24, 96, 4},
    {16, 144, 3},
    {16, 128, 4},
    {32, 80, 5},
    {20, 96, 3},
    {20, 96, 4},
    {18, 128, 4},
    {17, 128, 4},
  };
  static final int[] DS = {1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 3_000_000, 10_000_000};

  public static void main(String[] args) {
    double scale = args.length > 0 ? Double.parseDouble(args[0]) : 1;
    String only = args.length > 1 ? args[1] : null;
    System.out.println(
        "| strata x cells, k | wire B | d | trials | median | p95 | p99 | p1 | 1/p1 | saturated |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|");
    for (int[] c : CANDIDATES) {
      String name = c[0] + " x " + c[1] + ", " + c[2];
      if (only != null
          && !(" " + only + " ").contains(" " + c[0] + "x" + c[1] + "k" + c[2] + " ")) {
        continue;
      }
      StrataEstimatorFactory f =
          StrataEstimatorFactory.of(
              EstimatorParams.newBuilder()
                  .setKind(1)
                  .setStrata(c[0])
                  .setCellsPerStratum(c[1])
                  .setHashCount(c[2])
                  .build());
      Estimator empty = DifferenceTrial.emptyProto(f);
      long wire = f.create(DifferenceTrial.SPEC).wireBytes();
      for (int d : DS) {
        int trials =
            (int)
                Math.max(
                    10,
                    scale * (d <= 10_000 ? 1000 : d == 100_000 ? 300 : d == 1_000_000 ? 40 : 10));
        double[] r = new double[trials];
        int sat = 0;
        for (int t = 0; t < trials; t++) {
          long e = DifferenceTrial.of(t, d).estimate(f, empty);
          if (e >= f.shape().cells() << f.strata() || e >= StrataEstimator.MAX_ESTIMATE) {
            sat++;
          }
          r[t] = (double) e / d;
        }
        Arrays.sort(r);
        System.out.println(
            String.format(
                Locale.ROOT,
                "| %s | %d | %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %d |",
                name,
                wire,
                d,
                trials,
                q(r, 0.5),
                q(r, 0.95),
                q(r, 0.99),
                q(r, 0.01),
                1 / q(r, 0.01),
                sat));
      }
    }
  }

  /** Nearest-rank quantile of sorted {@code r}. */
  static double q(double[] r, double p) {
    int i = (int) Math.ceil(p * r.length) - 1;
    return r[Math.max(0, Math.min(r.length - 1, i))];
  }
}
