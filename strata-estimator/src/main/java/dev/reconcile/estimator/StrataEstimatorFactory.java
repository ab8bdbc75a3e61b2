package dev.reconcile.estimator;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.wire.EstimatorParams;

/**
 * Makes empty {@link StrataEstimator}s of one validated parameter set.
 *
 * <p>{@link #defaults()} is the measured strata choice (see {@code docs/estimator.md}): 18 strata
 * of 128 cells, 4 hashes, 16 159 bytes on the wire. It was the production default before the
 * tug-of-war estimator ({@link EstimatorKinds#defaults()}), which is as accurate in a quarter of
 * the bytes; it stays readable for peers that negotiate kind 1. {@link #of} accepts any valid
 * parameters; its {@link #sizingFactor()} is the measured one for the parameter sets of the
 * measurement table and a conservative {@value #UNMEASURED_SIZING_FACTOR} otherwise.
 */
public final class StrataEstimatorFactory implements EstimatorFactory {
  static final int DEFAULT_STRATA = 18;
  static final int DEFAULT_CELLS_PER_STRATUM = 128;
  static final int DEFAULT_HASH_COUNT = 4;
  static final int MAX_STRATA = 64;

  /**
   * Cap on {@code strata * cells_per_stratum} (28 MiB on the wire), a sanity bound on
   * configuration.
   */
  static final long MAX_TOTAL_CELLS = 1L << 22;

  /** Sizing factor of parameter sets that were not measured. */
  static final double UNMEASURED_SIZING_FACTOR = 2.0;

  /**
   * Measured sizing factors: {strata, cells per stratum, hash count, factor}. Each factor makes a
   * first IBLT of {@code Sizing.cellsFor(ceil(estimate * f))} cells decode in at least 99 % of
   * trials for every d in {1, 10, ..., 10^5} (docs/estimator.md, "Sizing factor").
   */
  private static final double[][] MEASURED = {
    {18, 128, 4, 1.35},
  };

  private static final StrataEstimatorFactory DEFAULTS =
      of(
          EstimatorParams.newBuilder()
              .setKind(StrataEstimator.KIND)
              .setStrata(DEFAULT_STRATA)
              .setCellsPerStratum(DEFAULT_CELLS_PER_STRATUM)
              .setHashCount(DEFAULT_HASH_COUNT)
              .build());

  private final EstimatorParams params;
  private final IbltShape shape;
  private final double sizingFactor;

  private StrataEstimatorFactory(EstimatorParams params, IbltShape shape, double sizingFactor) {
    this.params = params;
    this.shape = shape;
    this.sizingFactor = sizingFactor;
  }

  /** The measured strata parameters: 18 strata x 128 cells, 4 hashes (kind 1). */
  public static StrataEstimatorFactory defaults() {
    return DEFAULTS;
  }

  /**
   * A factory for {@code params}: kind 1, strata in [1, 64], hash count in [2, 8], and {@code
   * cells_per_stratum = hash_count * (base << log2)} with base 1 or 3.
   *
   * @throws IllegalArgumentException naming the offending value
   */
  public static StrataEstimatorFactory of(EstimatorParams params) {
    if (params.getKind() != StrataEstimator.KIND) {
      throw new IllegalArgumentException(
          "estimator kind "
              + Integer.toUnsignedString(params.getKind())
              + " is not "
              + StrataEstimator.KIND
              + " (strata estimator)");
    }
    long strata = Integer.toUnsignedLong(params.getStrata());
    if (strata < 1 || strata > MAX_STRATA) {
      throw new IllegalArgumentException("strata " + strata + " outside [1, " + MAX_STRATA + "]");
    }
    long k = Integer.toUnsignedLong(params.getHashCount());
    if (k < IbltShape.MIN_HASHES || k > IbltShape.MAX_HASHES) {
      throw new IllegalArgumentException(
          "hash count "
              + k
              + " outside ["
              + IbltShape.MIN_HASHES
              + ", "
              + IbltShape.MAX_HASHES
              + "]");
    }
    long cells = Integer.toUnsignedLong(params.getCellsPerStratum());
    IbltShape shape = shapeOf((int) k, cells);
    if (shape == null) {
      throw new IllegalArgumentException(
          "cells per stratum "
              + cells
              + " is not hash count "
              + k
              + " x (1 or 3) x 2^j (j in [0, "
              + IbltShape.MAX_LOG2
              + "])");
    }
    if (strata * cells > MAX_TOTAL_CELLS) {
      throw new IllegalArgumentException(
          "strata x cells per stratum = "
              + strata * cells
              + " exceeds the cap of "
              + MAX_TOTAL_CELLS
              + " cells");
    }
    EstimatorParams clean =
        EstimatorParams.newBuilder()
            .setKind(StrataEstimator.KIND)
            .setStrata((int) strata)
            .setCellsPerStratum((int) cells)
            .setHashCount((int) k)
            .build();
    return new StrataEstimatorFactory(
        clean, shape, measuredFactor((int) strata, (int) cells, (int) k));
  }

  /** The shape {@code (k, base, log2)} with {@code k * (base << log2) == cells}, or null. */
  static IbltShape shapeOf(int k, long cells) {
    if (cells <= 0 || cells % k != 0) {
      return null;
    }
    long sub = cells / k;
    int base = sub % 3 == 0 ? 3 : 1;
    long pow = sub / base;
    if (Long.bitCount(pow) != 1) {
      return null;
    }
    int log2 = Long.numberOfTrailingZeros(pow);
    if (log2 > IbltShape.MAX_LOG2) {
      return null;
    }
    return new IbltShape(k, base, log2);
  }

  private static double measuredFactor(int strata, int cells, int k) {
    for (double[] row : MEASURED) {
      if (row[0] == strata && row[1] == cells && row[2] == k) {
        return row[3];
      }
    }
    return UNMEASURED_SIZING_FACTOR;
  }

  @Override
  public EstimatorParams params() {
    return params;
  }

  @Override
  public StrataEstimator create(HashSpec spec) {
    return new StrataEstimator(spec, this);
  }

  /** See {@link StrataEstimator#sizingFactor()}. */
  public double sizingFactor() {
    return sizingFactor;
  }

  int strata() {
    return params.getStrata();
  }

  IbltShape shape() {
    return shape;
  }

  /** The same parameters with another sizing factor: for measurements. */
  StrataEstimatorFactory withSizingFactor(double f) {
    return new StrataEstimatorFactory(params, shape, f);
  }

  @Override
  public String toString() {
    return "StrataEstimatorFactory{strata="
        + params.getStrata()
        + ", cells_per_stratum="
        + params.getCellsPerStratum()
        + ", hash_count="
        + params.getHashCount()
        + ", sizingFactor="
        + sizingFactor
        + "}";
  }
}
