package dev.reconcile.core;

import java.util.Arrays;

/** Partitions reconciled with one table, the sum of their tables (tables are linear). */
final class TableGroup {
  final int[] partitions;
  final String key;
  int attempts;
  IbltShape lastShape;
  IbltShape requested;

  /** The outstanding request asks for the extension of the last table, not a whole table. */
  boolean requestedExtension;

  /**
   * Responder: a copy of the last table's difference taken before peeling, kept while its extension
   * may be asked for ({@link Iblt#unfold}); null otherwise.
   */
  Iblt kept;

  /** The first table was sized from the fingerprints' count difference, with no estimator. */
  boolean blind;

  long estimate;

  TableGroup(int[] partitions) {
    this.partitions = partitions;
    this.key = Arrays.toString(partitions);
  }
}
