package dev.reconcile.core;

/**
 * How many cells an IBLT needs to decode a difference of {@code d} elements with probability at
 * least 99.9 % per attempt (hash count 3). PROVISIONAL formula until the simulated table lands.
 */
public final class Sizing {
  public static final int HASH_COUNT = 3;

  private Sizing() {}

  /** Total cells for a difference of {@code d} elements. */
  public static long cellsFor(long d) {
    if (d <= 1) {
      return HASH_COUNT;
    }
    return (long) Math.ceil(d * 1.35) + 40;
  }
}
