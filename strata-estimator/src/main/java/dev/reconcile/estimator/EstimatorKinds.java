package dev.reconcile.estimator;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.wire.EstimatorParams;

/**
 * The estimator kinds this module reads, by {@code EstimatorParams.kind}: 1 = {@link
 * StrataEstimator} (the former default, still readable), 2 = {@link TugOfWarEstimator} (the
 * default). Peers negotiate the parameters in the handshake; an agent configured with either kind
 * makes its factory here.
 */
public final class EstimatorKinds {
  private EstimatorKinds() {}

  /** The production estimator: {@link TugOfWarEstimatorFactory#defaults()} (4 059 bytes). */
  public static EstimatorFactory defaults() {
    return TugOfWarEstimatorFactory.defaults();
  }

  /**
   * The factory of {@code params}, validated by its kind.
   *
   * @throws IllegalArgumentException for an unknown kind or invalid parameters, naming the value
   */
  public static EstimatorFactory of(EstimatorParams params) {
    return switch (params.getKind()) {
      case StrataEstimator.KIND -> StrataEstimatorFactory.of(params);
      case TugOfWarEstimator.KIND -> TugOfWarEstimatorFactory.of(params);
      default ->
          throw new IllegalArgumentException(
              "estimator kind "
                  + Integer.toUnsignedString(params.getKind())
                  + " is unknown (this build reads 1 = strata, 2 = tug-of-war)");
    };
  }
}
