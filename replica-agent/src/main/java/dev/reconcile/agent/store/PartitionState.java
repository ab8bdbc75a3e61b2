package dev.reconcile.agent.store;

import dev.reconcile.core.CodedSymbols;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PartitionSketch;
import dev.reconcile.core.SketchParams;

/**
 * A partition's {@link PartitionSketch} behind its own monitor: the single writer updates it after
 * each committed batch; readers copy or fold under the same monitor.
 */
final class PartitionState {
  private final PartitionSketch sketch;

  PartitionState(SketchParams params, EstimatorFactory estimators) {
    this.sketch = new PartitionSketch(params, estimators);
  }

  /** Unsynchronized add, for the rebuild at open (one thread per partition, before publication). */
  void addUnsynchronized(long element) {
    sketch.add(element);
  }

  synchronized void add(long element) {
    sketch.add(element);
  }

  synchronized void remove(long element) {
    sketch.remove(element);
  }

  /** Replaces {@code old} (when {@code hadOld}) by {@code neu}. */
  synchronized void replace(boolean hadOld, long old, long neu) {
    sketch.replace(hadOld, old, neu);
  }

  synchronized Fingerprint fingerprint() {
    return sketch.fingerprint();
  }

  synchronized DifferenceEstimator estimatorCopy() {
    return sketch.estimatorCopy();
  }

  /** A copy of the coded symbols (null without a rateless prefix). */
  synchronized CodedSymbols symbolsCopy() {
    return sketch.symbolsCopy();
  }

  /** Adds the coded symbols to {@code sum}, atomically with respect to writes. */
  synchronized void addSymbolsTo(CodedSymbols sum) {
    sketch.addSymbolsTo(sum);
  }

  /** A new table of {@code shape} folded from the maintained table of its ladder. */
  synchronized Iblt fold(IbltShape shape) {
    return sketch.fold(shape);
  }

  /** A copy of everything, taken atomically (for the self-check). */
  synchronized PartitionSketch copy() {
    return sketch.copy();
  }

  /** The sketch itself, for a state that is not yet shared (a rebuild in progress). */
  PartitionSketch unsharedSketch() {
    return sketch;
  }
}
