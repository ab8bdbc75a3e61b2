package dev.reconcile.core;

/**
 * Forward cursor over a partition's elements in unsigned ascending order (duplicates allowed). May
 * hold native resources: close it.
 */
public interface ElementCursor extends AutoCloseable {
  /** Advances; false at the end. */
  boolean next();

  /** The current element, valid after {@link #next()} returned true. */
  long element();

  @Override
  void close();

  /**
   * A cursor over {@code flipped}: elements XOR {@link Long#MIN_VALUE}, sorted as signed numbers
   * (the unsigned order of the elements, which {@link java.util.Arrays#sort(long[])} and binary
   * search give on the flipped values).
   */
  static ElementCursor ofFlipped(long[] flipped) {
    return new ElementCursor() {
      private int i = -1;

      @Override
      public boolean next() {
        return ++i < flipped.length;
      }

      @Override
      public long element() {
        return flipped[i] ^ Long.MIN_VALUE;
      }

      @Override
      public void close() {}
    };
  }

  /** A cursor over a sorted array. */
  static ElementCursor of(long[] sorted) {
    return new ElementCursor() {
      private int i = -1;

      @Override
      public boolean next() {
        return ++i < sorted.length;
      }

      @Override
      public long element() {
        return sorted[i];
      }

      @Override
      public void close() {}
    };
  }
}
