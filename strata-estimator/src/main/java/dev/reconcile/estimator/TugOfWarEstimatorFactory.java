package dev.reconcile.estimator;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.wire.CellLayoutProto;
import dev.reconcile.core.wire.EstimatorParams;

/**
 * Makes empty {@link TugOfWarEstimator}s of one validated parameter set: {@code kind = 2, strata =
 * 1, hash_count = 1, cells_per_stratum = b} buckets of 16-bit counters.
 *
 * <p>{@link #defaults()} is the measured production choice (docs/estimator.md): {@code b = 2016},
 * {@value TugOfWarEstimator#DEFAULT_WIRE_BYTES} bytes on the wire, sizing factor {@value
 * #DEFAULT_SIZING_FACTOR}.
 */
public final class TugOfWarEstimatorFactory implements EstimatorFactory {
  static final int DEFAULT_BUCKETS = 2016;
  static final int MIN_BUCKETS = 16;
  static final int MAX_BUCKETS = 1 << 20;

  /**
   * Measured factor of the defaults: {@code ceil(estimate * f) >= d} in at least 99.5 % of trials
   * for every measured d (docs/estimator.md, "Sizing factor").
   */
  static final double DEFAULT_SIZING_FACTOR = 1.10;

  /**
   * Factor of other bucket counts: covers 3.3 standard deviations of the relative error {@code
   * sqrt(2/b)} (the measured default is 1 + 3.1 of them), plus the small-d discreteness.
   */
  static double sizingFactorFor(int buckets) {
    return buckets == DEFAULT_BUCKETS
        ? DEFAULT_SIZING_FACTOR
        : 1 + 3.3 * Math.sqrt(2.0 / buckets) + 0.01;
  }

  private static final TugOfWarEstimatorFactory DEFAULTS = of(params(DEFAULT_BUCKETS));

  private final EstimatorParams params;
  private final int counterBytes;
  private final double sizingFactor;

  private TugOfWarEstimatorFactory(EstimatorParams params, int counterBytes, double sizingFactor) {
    this.params = params;
    this.counterBytes = counterBytes;
    this.sizingFactor = sizingFactor;
  }

  /** The production parameters: 2016 buckets of 16-bit counters. */
  public static TugOfWarEstimatorFactory defaults() {
    return DEFAULTS;
  }

  /** Parameters of {@code buckets} buckets. */
  public static EstimatorParams params(int buckets) {
    return EstimatorParams.newBuilder()
        .setKind(TugOfWarEstimator.KIND)
        .setStrata(1)
        .setCellsPerStratum(buckets)
        .setHashCount(1)
        .build();
  }

  /**
   * A factory for {@code params}: kind 2, strata 1, hash count 1, buckets in [16, 2^20].
   *
   * @throws IllegalArgumentException naming the offending value
   */
  public static TugOfWarEstimatorFactory of(EstimatorParams params) {
    if (params.getKind() != TugOfWarEstimator.KIND) {
      throw new IllegalArgumentException(
          "estimator kind "
              + Integer.toUnsignedString(params.getKind())
              + " is not "
              + TugOfWarEstimator.KIND
              + " (tug-of-war estimator)");
    }
    if (params.getStrata() != 1 || params.getHashCount() != 1) {
      throw new IllegalArgumentException(
          "a tug-of-war estimator has strata = 1 and hash_count = 1, got " + describe(params));
    }
    long b = Integer.toUnsignedLong(params.getCellsPerStratum());
    if (b < MIN_BUCKETS || b > MAX_BUCKETS) {
      throw new IllegalArgumentException(
          "buckets " + b + " outside [" + MIN_BUCKETS + ", " + MAX_BUCKETS + "]");
    }
    return new TugOfWarEstimatorFactory(params((int) b), 2, sizingFactorFor((int) b));
  }

  /** The same buckets with 8-bit counters: for measurements only (not negotiable on the wire). */
  TugOfWarEstimatorFactory withByteCounters() {
    return new TugOfWarEstimatorFactory(params, 1, sizingFactor);
  }

  /** The same parameters with another sizing factor: for measurements. */
  TugOfWarEstimatorFactory withSizingFactor(double f) {
    return new TugOfWarEstimatorFactory(params, counterBytes, f);
  }

  @Override
  public EstimatorParams params() {
    return params;
  }

  @Override
  public TugOfWarEstimator create(HashSpec spec) {
    return new TugOfWarEstimator(spec, this);
  }

  public double sizingFactor() {
    return sizingFactor;
  }

  int buckets() {
    return params.getCellsPerStratum();
  }

  int counterBytes() {
    return counterBytes;
  }

  CellLayoutProto layout() {
    return CellLayoutProto.newBuilder()
        .setCountBytes(counterBytes)
        .setKeyBytes(0)
        .setCheckBytes(0)
        .build();
  }

  static String describe(EstimatorParams p) {
    return "kind="
        + Integer.toUnsignedString(p.getKind())
        + ", strata="
        + Integer.toUnsignedString(p.getStrata())
        + ", cells_per_stratum="
        + Integer.toUnsignedString(p.getCellsPerStratum())
        + ", hash_count="
        + Integer.toUnsignedString(p.getHashCount());
  }

  @Override
  public String toString() {
    return "TugOfWarEstimatorFactory{"
        + describe(params)
        + ", counterBytes="
        + counterBytes
        + ", sizingFactor="
        + sizingFactor
        + "}";
  }
}
