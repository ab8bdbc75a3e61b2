package dev.reconcile.cli;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.estimator.StrataEstimatorFactory;

/** The one place that chooses the production difference estimator. */
final class Estimators {
  private Estimators() {}

  static EstimatorFactory production() {
    return StrataEstimatorFactory.defaults();
  }
}
