package dev.reconcile.cli;

/**
 * A fixed set of {@code long}s for membership tests: open addressing with linear probing in a
 * {@code long[]} of at least twice the size (a power of two), 0 kept aside. The members are hash
 * outputs (elements), so their low bits index the table directly after one multiply-mix. One or two
 * cache misses per lookup, against ~log2(d) for a binary search.
 */
final class LongSet {
  private final long[] table;
  private final int mask;
  private final boolean hasZero;

  LongSet(long[] members) {
    int cap = Integer.highestOneBit(Math.max(4, members.length) * 2 - 1) << 1;
    table = new long[cap];
    mask = cap - 1;
    boolean zero = false;
    for (long x : members) {
      if (x == 0) {
        zero = true;
        continue;
      }
      int i = slot(x);
      while (table[i] != 0 && table[i] != x) {
        i = (i + 1) & mask;
      }
      table[i] = x;
    }
    hasZero = zero;
  }

  private int slot(long x) {
    return (int) ((x * 0x9E37_79B9_7F4A_7C15L) >>> 32) & mask;
  }

  boolean contains(long x) {
    if (x == 0) {
      return hasZero;
    }
    int i = slot(x);
    long t;
    while ((t = table[i]) != 0) {
      if (t == x) {
        return true;
      }
      i = (i + 1) & mask;
    }
    return false;
  }
}
