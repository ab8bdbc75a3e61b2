package dev.reconcile.core;

import dev.reconcile.core.wire.Estimator;

/**
 * Estimates the size of the symmetric difference between the local set and a remote one from a
 * small, linear sketch. Defined here so that the session can call it; implemented by the {@code
 * strata-estimator} module and wired in by the agent and the CLI.
 */
public interface DifferenceEstimator {
  void add(long element);

  void remove(long element);

  /**
   * Adds {@code other} (an estimator of the same kind and parameters) into this one: the estimator
   * of the union of two disjoint sets. Fails on another kind or other parameters.
   */
  void merge(DifferenceEstimator other);

  /** The versioned wire form of this sketch. */
  Estimator toProto();

  /**
   * Estimated {@code |local \u0394 remote|} and whether it is exact (counted, not extrapolated),
   * after validating {@code remote} (format version, hash id, seed fingerprint, parameters, cell
   * bytes). Never allocates more than the local parameters allow.
   */
  Estimate estimate(Estimator remote) throws FormatException;

  /**
   * Factor by which to multiply an estimate that is not {@link Estimate#exact() exact} before
   * sizing a table from it: a first IBLT of {@code Sizing.cellsFor(ceil(estimate * f))} cells
   * decodes at the first attempt in at least 99 % of cases, measured for this estimator's
   * parameters.
   */
  double sizingFactor();

  DifferenceEstimator copy();

  /** Bytes of {@link #toProto()} on the wire. */
  default long wireBytes() {
    return toProto().getSerializedSize();
  }
}
