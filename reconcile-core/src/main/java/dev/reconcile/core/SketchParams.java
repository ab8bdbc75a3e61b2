package dev.reconcile.core;

import dev.reconcile.core.wire.EstimatorParams;
import dev.reconcile.core.wire.SketchParamsProto;

/**
 * Everything two peers must agree on before their sketches can be combined. Compared field by field
 * in the handshake; a mismatch is refused naming both values.
 */
public record SketchParams(
    HashSpec spec,
    int partitionsLog2,
    int ibltHashCount,
    int ibltMaxLog2,
    EstimatorParams estimator) {
  public static final int MAX_PARTITIONS_LOG2 = 16;

  public SketchParams {
    if (partitionsLog2 < 0 || partitionsLog2 > MAX_PARTITIONS_LOG2) {
      throw new IllegalArgumentException(
          "partitions log2 " + partitionsLog2 + " outside [0, " + MAX_PARTITIONS_LOG2 + "]");
    }
    if (ibltMaxLog2 < 2 || ibltMaxLog2 > 22) {
      throw new IllegalArgumentException("iblt max log2 " + ibltMaxLog2 + " outside [2, 22]");
    }
    new IbltShape(ibltHashCount, 1, ibltMaxLog2); // validates the hash count
  }

  public int partitions() {
    return 1 << partitionsLog2;
  }

  /** The largest table: base 1 at {@code ibltMaxLog2}. */
  public IbltShape maxShape() {
    return new IbltShape(ibltHashCount, 1, ibltMaxLog2);
  }

  /** Largest table of the base-3 ladder: {@code 3 * 2^(max-2)}, three quarters of the largest. */
  public IbltShape maxShapeBase3() {
    return new IbltShape(ibltHashCount, 3, ibltMaxLog2 - 2);
  }

  /** The maintained table from which {@code shape} folds. */
  public IbltShape maintainedShapeFor(IbltShape shape) {
    return shape.base() == 1 ? maxShape() : maxShapeBase3();
  }

  /** True when {@code shape} can be folded from a maintained table. */
  public boolean allows(IbltShape shape) {
    return shape.hashCount() == ibltHashCount && shape.log2() <= maintainedShapeFor(shape).log2();
  }

  /**
   * The smallest allowed shape with at least {@code cells} cells, or {@code null} when even the
   * largest table is smaller.
   */
  public IbltShape shapeWithAtLeast(long cells) {
    if (cells > maxShape().cells()) {
      return null;
    }
    IbltShape s = IbltShape.atLeast(ibltHashCount, cells);
    if (!allows(s)) {
      s = maxShape();
    }
    return s;
  }

  public SketchParamsProto toProto() {
    return SketchParamsProto.newBuilder()
        .setHashId(spec.id())
        .setSeedFingerprint(spec.seedFingerprint())
        .setPartitionsLog2(partitionsLog2)
        .setIbltHashCount(ibltHashCount)
        .setIbltMaxLog2(ibltMaxLog2)
        .setEstimator(estimator)
        .build();
  }
}
