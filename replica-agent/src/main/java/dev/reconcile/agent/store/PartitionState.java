package dev.reconcile.agent.store;

import dev.reconcile.core.CellLayout;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.SketchParams;

/**
 * The sketches of one partition, kept equal to the partition's element multiset: fingerprint,
 * difference estimator, and the two maintained IBLTs ({@link MaintainedTables}: the largest table
 * of each size ladder) from which every smaller {@link CellLayout#WIDE} table is folded. All are
 * linear, so an overwrite is {@code remove(old); add(new)} and the state does not depend on the
 * order of operations.
 *
 * <p>Memory: {@code 16 B x (maxShape.cells + maxShapeBase3.cells) = 16 x 1.75 x k x 2^max} bytes
 * per partition plus the estimator. Guarded by its own monitor: the single writer updates it after
 * each committed batch; readers copy or fold under the same monitor.
 */
final class PartitionState {
  private final Fingerprint.Accumulator fingerprint;
  private final DifferenceEstimator estimator;
  private final MaintainedTables tables;

  PartitionState(SketchParams params, dev.reconcile.core.EstimatorFactory estimators) {
    this.fingerprint = new Fingerprint.Accumulator(params.spec());
    this.estimator = estimators.create(params.spec());
    this.tables = new MaintainedTables(params);
  }

  /** Unsynchronized add, for the rebuild at open (one thread per partition, before publication). */
  void addUnsynchronized(long element) {
    fingerprint.add(element);
    estimator.add(element);
    tables.insert(element);
  }

  synchronized void add(long element) {
    addUnsynchronized(element);
  }

  synchronized void remove(long element) {
    fingerprint.remove(element);
    estimator.remove(element);
    tables.delete(element);
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
    return tables.fold(shape);
  }

  /** Copies of everything, taken atomically (for the self-check). */
  synchronized Copy copy() {
    return new Copy(fingerprint.snapshot(), estimator.toProto().toByteArray(), tables.copy());
  }

  record Copy(Fingerprint fingerprint, byte[] estimatorBytes, MaintainedTables tables) {}
}
