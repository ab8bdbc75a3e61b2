package dev.reconcile.core;

import java.util.Arrays;

/** Partitions reconciled with one table, the sum of their tables (tables are linear). */
final class TableGroup {
  final int[] partitions;
  final String key;
  int attempts;
  IbltShape lastShape;
  IbltShape requested;
  long estimate;

  TableGroup(int[] partitions) {
    this.partitions = partitions;
    this.key = Arrays.toString(partitions);
  }
}
