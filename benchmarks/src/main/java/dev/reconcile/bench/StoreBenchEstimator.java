package dev.reconcile.bench;

import com.google.protobuf.ByteString;
import dev.reconcile.core.CellLayout;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.nio.ByteBuffer;

/**
 * Stand-in for the production strata estimator in store benchmarks, with the same per-element write
 * cost: 32 strata of NARROW IBLTs of 3 x 24 cells, the stratum chosen by the trailing zeros of
 * {@code stratumHash}. It does not estimate (the store benchmarks never call it).
 */
final class StoreBenchEstimator implements DifferenceEstimator {
  static final int STRATA = 32;
  static final IbltShape SHAPE = new IbltShape(3, 3, 3);
  private final HashSpec spec;
  private final Iblt[] strata = new Iblt[STRATA];

  StoreBenchEstimator(HashSpec spec) {
    this.spec = spec;
    for (int i = 0; i < STRATA; i++) {
      strata[i] = new Iblt(spec, SHAPE, CellLayout.NARROW);
    }
  }

  static EstimatorFactory factory() {
    EstimatorParams p =
        EstimatorParams.newBuilder()
            .setKind(97)
            .setStrata(STRATA)
            .setCellsPerStratum((int) SHAPE.cells())
            .setHashCount(SHAPE.hashCount())
            .build();
    return new EstimatorFactory() {
      @Override
      public EstimatorParams params() {
        return p;
      }

      @Override
      public DifferenceEstimator create(HashSpec spec) {
        return new StoreBenchEstimator(spec);
      }
    };
  }

  private int stratum(long x) {
    return Math.min(STRATA - 1, Long.numberOfTrailingZeros(spec.stratumHash(x)));
  }

  @Override
  public void add(long element) {
    strata[stratum(element)].insert(element);
  }

  @Override
  public void remove(long element) {
    strata[stratum(element)].delete(element);
  }

  @Override
  public Estimator toProto() {
    ByteBuffer b = ByteBuffer.allocate((int) (STRATA * SHAPE.cells() * CellLayout.NARROW.cellBytes()));
    for (Iblt t : strata) {
      t.writeCells(b);
    }
    b.flip();
    return Estimator.newBuilder().setFormatVersion(1).setCells(ByteString.copyFrom(b)).build();
  }

  @Override
  public long estimate(Estimator remote) throws FormatException {
    throw new FormatException("benchmark stand-in does not estimate");
  }

  @Override
  public double sizingFactor() {
    return 1.0;
  }

  @Override
  public DifferenceEstimator copy() {
    StoreBenchEstimator e = new StoreBenchEstimator(spec);
    for (int i = 0; i < STRATA; i++) {
      e.strata[i] = strata[i].copy();
    }
    return e;
  }
}
