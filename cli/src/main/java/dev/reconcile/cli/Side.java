package dev.reconcile.cli;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.SketchParams;

/**
 * One replica compared by {@code diff} or {@code estimate}: it provides the local half of a
 * reconciliation session ({@link PartitionSketches}) and maps the elements the protocol reports
 * back to keys. Made by {@link SideSpec#open}.
 */
interface Side extends AutoCloseable {
  /** The side as the user wrote it, e.g. {@code file:/data/a.tsv}. */
  String label();

  /** Sketches of this side under {@code params}; may read the whole input. */
  PartitionSketches sketches(SketchParams params, EstimatorFactory estimators);

  /** Keys of the records whose elements are in {@code sortedElements} (ascending, signed order). */
  KeyList keysOf(long[] sortedElements);

  /** One line for the summary: how many records, duplicates dropped, and so on. */
  String describe();

  @Override
  void close();
}
