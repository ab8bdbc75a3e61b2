package dev.reconcile.cli.bench;

import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.Estimate;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.util.Arrays;

/**
 * Benchmark-only "estimator" that knows the exact difference: it ships its whole element list and
 * counts the symmetric difference. The benchmark subtracts its bytes ({@code
 * SessionStats.estimatorBytes()}), which turns the session into "IBLT + doubling with the total
 * difference known": the cost of the tables alone, the lower bound the estimator mode approaches.
 * Elements are assumed distinct within one side (true of the benchmark's sets).
 */
final class OracleEstimator implements DifferenceEstimator {
  static final int KIND = 98;
  private static final EstimatorParams PARAMS = EstimatorParams.newBuilder().setKind(KIND).build();

  static final EstimatorFactory FACTORY =
      new EstimatorFactory() {
        @Override
        public EstimatorParams params() {
          return PARAMS;
        }

        @Override
        public DifferenceEstimator create(HashSpec spec) {
          return new OracleEstimator(new long[16], 0);
        }
      };

  private long[] elements;
  private int size;

  private OracleEstimator(long[] elements, int size) {
    this.elements = elements;
    this.size = size;
  }

  @Override
  public void add(long element) {
    if (size == elements.length) {
      elements = Arrays.copyOf(elements, elements.length * 2);
    }
    elements[size++] = element;
  }

  @Override
  public void remove(long element) {
    throw new UnsupportedOperationException("the benchmark oracle only adds");
  }

  @Override
  public void merge(DifferenceEstimator other) {
    OracleEstimator o = (OracleEstimator) other;
    if (size + o.size > elements.length) {
      elements = Arrays.copyOf(elements, size + o.size);
    }
    System.arraycopy(o.elements, 0, elements, size, o.size);
    size += o.size;
  }

  @Override
  public Estimator toProto() {
    long[] sorted = Arrays.copyOf(elements, size);
    Arrays.sort(sorted);
    return Estimator.newBuilder()
        .setFormatVersion(1)
        .setParams(PARAMS)
        .setCells(Wire.packLongs(sorted, 0, sorted.length))
        .build();
  }

  @Override
  public Estimate estimate(Estimator remote) throws FormatException {
    if (remote.getParams().getKind() != KIND) {
      throw new FormatException(
          "not a benchmark oracle estimator (kind " + remote.getParams().getKind() + ")");
    }
    long[] theirs = Wire.unpackLongsUnchecked(remote.getCells());
    long[] mine = Arrays.copyOf(elements, size);
    Arrays.sort(mine);
    long common = 0;
    int i = 0;
    int j = 0;
    while (i < mine.length && j < theirs.length) {
      if (mine[i] == theirs[j]) {
        common++;
        i++;
        j++;
      } else if (mine[i] < theirs[j]) {
        i++;
      } else {
        j++;
      }
    }
    return Estimate.exact(mine.length + theirs.length - 2 * common);
  }

  @Override
  public double sizingFactor() {
    return 1.0;
  }

  @Override
  public DifferenceEstimator copy() {
    return new OracleEstimator(Arrays.copyOf(elements, Math.max(16, size)), size);
  }

  /** Not counted: the benchmark removes the oracle's bytes from the totals. */
  @Override
  public long wireBytes() {
    return 0;
  }
}
