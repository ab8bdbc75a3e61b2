package dev.reconcile.core;

/**
 * The result of {@link DifferenceEstimator#estimate}: an estimated size of a set difference, and
 * whether it was counted rather than extrapolated. An exact estimate (a strata estimator whose
 * strata all decoded) sizes tables as it is; any other is multiplied by the estimator's {@link
 * DifferenceEstimator#sizingFactor()} first (see {@link Sizing#firstShape(long, boolean, double)}).
 */
public record Estimate(long value, boolean exact) {
  public Estimate {
    if (value < 0) {
      throw new IllegalArgumentException("negative estimate " + value);
    }
  }

  /** A counted difference. */
  public static Estimate exact(long value) {
    return new Estimate(value, true);
  }

  /** An extrapolated difference. */
  public static Estimate approximate(long value) {
    return new Estimate(value, false);
  }
}
