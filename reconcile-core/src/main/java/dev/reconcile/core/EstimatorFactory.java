package dev.reconcile.core;

import dev.reconcile.core.wire.EstimatorParams;

/** Makes empty estimators of one parameter set. */
public interface EstimatorFactory {
  EstimatorParams params();

  DifferenceEstimator create(HashSpec spec);
}
