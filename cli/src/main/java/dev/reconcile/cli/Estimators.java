package dev.reconcile.cli;

import dev.reconcile.core.EstimatorFactory;

/** The one place that chooses the production difference estimator. */
final class Estimators {
  private Estimators() {}

  static EstimatorFactory production() {
    return TemporaryStrataFactory.INSTANCE; // TEMPORARY until StrataEstimatorFactory lands on main
  }
}
