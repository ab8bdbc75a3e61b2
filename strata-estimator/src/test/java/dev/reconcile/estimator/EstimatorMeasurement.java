package dev.reconcile.estimator;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Measurement behind the estimator choice in docs/estimator.md (not a test; run by hand):
 *
 * <pre>
 *   java -cp ... dev.reconcile.estimator.EstimatorMeasurement [trials] [max d] [candidate names...]
 * </pre>
 *
 * For each candidate and each d of {@link #DS}: wire bytes and the quantiles of estimate/d over
 * {@code trials} seeded trials ({@link DifferenceTrial#of}, trial seeds 0..trials-1), and {@code
 * 1/p0.5}, the factor that puts {@code estimate * f >= d} in 99.5 % of trials.
 */
final class EstimatorMeasurement {
  private EstimatorMeasurement() {}

  record Candidate(String name, EstimatorFactory factory) {}

  static List<Candidate> candidates() {
    List<Candidate> c = new ArrayList<>();
    c.add(strata(18, 128, 4));
    c.add(strata(16, 36, 3));
    c.add(strata(12, 48, 3));
    c.add(strata(12, 48, 4));
    c.add(strata(9, 64, 4));
    c.add(new Candidate("tow-2016x16", TugOfWarEstimatorFactory.defaults()));
    c.add(
        new Candidate(
            "tow-1008x16", TugOfWarEstimatorFactory.of(TugOfWarEstimatorFactory.params(1008))));
    c.add(
        new Candidate(
            "tow-4032x8",
            TugOfWarEstimatorFactory.of(TugOfWarEstimatorFactory.params(4032)).withByteCounters()));
    return c;
  }

  static Candidate strata(int strata, int cells, int k) {
    return new Candidate(
        "strata-" + strata + "x" + cells + "k" + k,
        StrataEstimatorFactory.of(
            EstimatorParams.newBuilder()
                .setKind(1)
                .setStrata(strata)
                .setCellsPerStratum(cells)
                .setHashCount(k)
                .build()));
  }

  static final int[] DS = {
    1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 100_000, 1_000_000
  };

  public static void main(String[] args) {
    int trials = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    long maxD = args.length > 1 ? Long.parseLong(args[1]) : 1_000_000;
    List<String> only = Arrays.asList(args).subList(Math.min(2, args.length), args.length);
    System.out.println(
        "| candidate | wire B | d | trials | median | p95 | p99 | p1 | p0.5 | 1/p0.5 | max |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (Candidate c : candidates()) {
      if (!only.isEmpty() && !only.contains(c.name())) {
        continue;
      }
      Estimator empty = DifferenceTrial.emptyProto(c.factory());
      long wire = c.factory().create(DifferenceTrial.SPEC).wireBytes();
      for (int d : DS) {
        if (d > maxD) {
          break;
        }
        double[] r = new double[trials];
        for (int t = 0; t < trials; t++) {
          r[t] = (double) DifferenceTrial.of(t, d).estimate(c.factory(), empty) / d;
        }
        Arrays.sort(r);
        System.out.println(
            String.format(
                Locale.ROOT,
                "| %s | %d | %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |",
                c.name(),
                wire,
                d,
                trials,
                q(r, 0.5),
                q(r, 0.95),
                q(r, 0.99),
                q(r, 0.01),
                q(r, 0.005),
                1 / q(r, 0.005),
                r[r.length - 1]));
      }
    }
  }

  /** Nearest-rank quantile of sorted {@code r}. */
  static double q(double[] r, double p) {
    int i = (int) Math.ceil(p * r.length) - 1;
    return r[Math.max(0, Math.min(r.length - 1, i))];
  }
}
