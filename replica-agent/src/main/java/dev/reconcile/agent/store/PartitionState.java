package dev.reconcile.agent.store;

import dev.reconcile.core.CellLayout;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.SketchParams;

/**
 * The sketches of one partition, kept equal to the partition's element multiset: fingerprint,
 * difference estimator, and the two maintained IBLTs (largest table of each size ladder, {@link
 * CellLayout#WIDE}) from which every smaller table is folded. All are linear, so an overwrite is
 * {@code remove(old); add(new)} and the state does not depend on the order of operations.
 *
 * <p>Memory: {@code 16 B x (maxShape.cells + maxShapeBase3.cells) = 16 x 1.75 x k x 2^max} bytes per
 * partition plus the estimator. Guarded by its own monitor: the single writer updates it after each
 * committed batch; readers copy or fold under the same monitor.
 */
final class PartitionState {
  private final Fingerprint.Accumulator fingerprint;
  private final DifferenceEstimator estimator;
  private final Iblt big;
  private final Iblt big3;

  PartitionState(SketchParams params, dev.reconcile.core.EstimatorFactory estimators) {
    this.fingerprint = new Fingerprint.Accumulator(params.spec());
    this.estimator = estimators.create(params.spec());
    this.big = new Iblt(params.spec(), params.maxShape(), CellLayout.WIDE);
    this.big3 = new Iblt(params.spec(), params.maxShapeBase3(), CellLayout.WIDE);
  }

  /** Unsynchronized add, for the rebuild at open (one thread per partition, before publication). */
  void addUnsynchronized(long element) {
    fingerprint.add(element);
    estimator.add(element);
    big.insert(element);
    big3.insert(element);
  }

  synchronized void add(long element) {
    addUnsynchronized(element);
  }

  synchronized void remove(long element) {
    fingerprint.remove(element);
    estimator.remove(element);
    big.delete(element);
    big3.delete(element);
  }

  /** Replaces {@code old} (when {@code hadOld}) by {@code neu}. */
  synchronized void replace(boolean hadOld, long old, long neu) {
    if (hadOld) {
      remove(old);
    }
    addUnsynchronized(neu);
  }

  synchronized Fingerprint fingerprint() {
    return fingerprint.snapshot();
  }

  synchronized DifferenceEstimator estimatorCopy() {
    return estimator.copy();
  }

  /** A new table of {@code shape} folded from the maintained table of its ladder. */
  synchronized Iblt fold(IbltShape shape) {
    Iblt from = shape.base() == 1 ? big : big3;
    return from.fold(shape);
  }

  /** Copies of everything, taken atomically (for the self-check). */
  synchronized Copy copy() {
    return new Copy(fingerprint.snapshot(), estimator.toProto().toByteArray(), big.copy(), big3.copy());
  }

  record Copy(Fingerprint fingerprint, byte[] estimatorBytes, Iblt big, Iblt big3) {}
}
