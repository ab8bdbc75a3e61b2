package dev.reconcile.agent;

import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.Estimate;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;

/**
 * Test hook {@link AgentTestHooks#estimatorScale()} (docs/replay.md): multiplies every difference
 * estimate of this agent by a factor, so that scenarios can force too-small first tables
 * (doublings) or the fallback against the production estimator. The sketches and the wire form are
 * unchanged; only the number the session sizes its first table from is scaled. Scale 1 (the
 * default) returns the factory untouched.
 */
final class ScaledEstimators {
  private ScaledEstimators() {}

  static EstimatorFactory wrap(EstimatorFactory f, double scale) {
    if (scale == 1.0) {
      return f;
    }
    return new EstimatorFactory() {
      @Override
      public EstimatorParams params() {
        return f.params();
      }

      @Override
      public DifferenceEstimator create(HashSpec spec) {
        return new Scaled(f.create(spec), scale);
      }
    };
  }

  private static final class Scaled implements DifferenceEstimator {
    private final DifferenceEstimator d;
    private final double scale;

    Scaled(DifferenceEstimator d, double scale) {
      this.d = d;
      this.scale = scale;
    }

    @Override
    public void add(long element) {
      d.add(element);
    }

    @Override
    public void remove(long element) {
      d.remove(element);
    }

    @Override
    public void merge(DifferenceEstimator other) {
      d.merge(other instanceof Scaled s ? s.d : other);
    }

    @Override
    public Estimator toProto() {
      return d.toProto();
    }

    @Override
    public Estimate estimate(Estimator remote) throws FormatException {
      Estimate e = d.estimate(remote);
      long v = e.value();
      // scaled, an estimate is no longer a count
      return v <= 0 ? e : Estimate.approximate(Math.max(1, Math.round(v * scale)));
    }

    @Override
    public double sizingFactor() {
      return d.sizingFactor();
    }

    @Override
    public DifferenceEstimator copy() {
      return new Scaled(d.copy(), scale);
    }

    @Override
    public long wireBytes() {
      return d.wireBytes();
    }
  }
}
