package dev.reconcile.core;

import dev.reconcile.core.wire.EstimatorParams;
import dev.reconcile.core.wire.SketchParamsProto;

/**
 * Everything two peers must agree on before their sketches can be combined. Compared field by field
 * in the handshake; a mismatch is refused naming both values.
 *
 * @param ratelessLog2 coded symbols maintained per partition for the rateless mode, {@code
 *     2^ratelessLog2}; 0 when none are (the rateless mode is then not offered)
 */
public record SketchParams(
    HashSpec spec,
    int partitionsLog2,
    int ibltHashCount,
    int ibltMaxLog2,
    EstimatorParams estimator,
    int ratelessLog2) {
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
    if (ratelessLog2 < 0 || ratelessLog2 > CodedSymbols.MAX_LOG2) {
      throw new IllegalArgumentException(
          "rateless log2 " + ratelessLog2 + " outside [0, " + CodedSymbols.MAX_LOG2 + "]");
    }
  }

  /** Parameters without a maintained rateless prefix. */
  public SketchParams(
      HashSpec spec,
      int partitionsLog2,
      int ibltHashCount,
      int ibltMaxLog2,
      EstimatorParams estimator) {
    this(spec, partitionsLog2, ibltHashCount, ibltMaxLog2, estimator, 0);
  }

  /** The same parameters with {@code log2} rateless symbols per partition (0: none). */
  public SketchParams withRatelessLog2(int log2) {
    return new SketchParams(spec, partitionsLog2, ibltHashCount, ibltMaxLog2, estimator, log2);
  }

  /** True when each partition maintains a prefix of coded symbols. */
  public boolean rateless() {
    return ratelessLog2 > 0;
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
        .setRatelessLog2(ratelessLog2)
        .build();
  }
}
