package dev.reconcile.cli;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.estimator.EstimatorKinds;

/**
 * The one place that chooses the production difference estimator: the tug-of-war estimator ({@link
 * EstimatorKinds#defaults()}, 4 059 bytes on the wire); the strata estimator stays readable and
 * selectable in the bench ({@code --modes strata}).
 */
final class Estimators {
  private Estimators() {}

  static EstimatorFactory production() {
    return EstimatorKinds.defaults();
  }
}
