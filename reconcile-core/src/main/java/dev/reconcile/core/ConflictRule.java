package dev.reconcile.core;

import java.util.Comparator;

/**
 * Last writer wins under one total order, the same on every replica.
 *
 * <p>Two records of the same key compare by the tuple
 *
 * <pre>
 *   (version, origin, valueHash(value), tombstone ? 1 : 0)
 * </pre>
 *
 * lexicographically, every field as an <em>unsigned</em> 64-bit number; the larger tuple wins.
 * Equal tuples are the same write (a duplicate; values that differ with equal 64-bit value hashes
 * are treated as the same write, probability 2^-64 per pair). Because this is a total order on the
 * tuple, the winner of a set of records does not depend on the order they arrive in, and applying a
 * record twice changes nothing. {@code valueHash} is the cluster's keyed {@link
 * HashSpec#valueHash}; the tombstone flag only decides between a tombstone and an empty value
 * written with the same version by the same origin, where the tombstone wins.
 */
public final class ConflictRule {
  private ConflictRule() {}

  /**
   * True when {@code incoming} strictly beats {@code current} ({@code current == null}: absent).
   */
  public static boolean wins(ReplicaRecord incoming, ReplicaRecord current, HashSpec spec) {
    return current == null || compare(incoming, current, spec) > 0;
  }

  /** Sign of {@code a - b} in the conflict order (0: the same write). */
  public static int compare(ReplicaRecord a, ReplicaRecord b, HashSpec spec) {
    return compare(
        a.version(),
        a.origin(),
        spec.valueHash(a.value()),
        a.tombstone(),
        b.version(),
        b.origin(),
        spec.valueHash(b.value()),
        b.tombstone());
  }

  /** The conflict order as a comparator: the maximum is the winner. */
  public static Comparator<ReplicaRecord> comparator(HashSpec spec) {
    return (a, b) -> compare(a, b, spec);
  }

  /** The conflict order on precomputed fields (no hashing). */
  public static int compare(
      long versionA,
      long originA,
      long valueHashA,
      boolean tombA,
      long versionB,
      long originB,
      long valueHashB,
      boolean tombB) {
    int c = Long.compareUnsigned(versionA, versionB);
    if (c != 0) {
      return c;
    }
    c = Long.compareUnsigned(originA, originB);
    if (c != 0) {
      return c;
    }
    c = Long.compareUnsigned(valueHashA, valueHashB);
    if (c != 0) {
      return c;
    }
    return Boolean.compare(tombA, tombB);
  }
}
