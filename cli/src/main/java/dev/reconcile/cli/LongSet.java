package dev.reconcile.cli;

/**
 * A fixed set of {@code long}s for membership tests: open addressing with linear probing in a
 * {@code long[]} of at least twice the size (a power of two), 0 kept aside. The members are hash
 * outputs (elements); one multiply-shift gives the slot (top bits).
 *
 * <p>For scans that ask about many more non-members than members (at least 8 lookups per member
 * expected), the table sits behind a bitmap of at least 64 bits per member, indexed by the same
 * bits as the slot and five more: most lookups then end at one bit test of a small bitmap, whose
 * branch is rarely mispredicted, instead of a probe of a table up to half full. 16 to 32 bytes per
 * member, 24 to 48 with the bitmap.
 */
final class LongSet {
  private final long[] table;
  private final int bits;
  private final int mask;
  private final long[] filter;
  private final int filterBits;
  private final boolean hasZero;

  LongSet(long[] members) {
    this(members, 0);
  }

  /** A set for about {@code lookups} lookups (a bitmap is put in front when they are many). */
  LongSet(long[] members, long lookups) {
    int b = 65 - Long.numberOfLeadingZeros(Math.max(4, members.length)); // >= 2 x members
    if (b > 30) {
      throw new CliException("more than 2^29 differing elements on one side");
    }
    bits = b;
    table = new long[1 << b];
    mask = (1 << b) - 1;
    filterBits = b + 5;
    filter = lookups >= 8L * members.length ? new long[1 << (b - 1)] : null;
    boolean zero = false;
    for (long x : members) {
      if (x == 0) {
        zero = true;
        continue;
      }
      if (filter != null) {
        int h = hash(x, filterBits);
        filter[h >>> 6] |= 1L << h;
      }
      int i = hash(x, bits);
      while (table[i] != 0 && table[i] != x) {
        i = (i + 1) & mask;
      }
      table[i] = x;
    }
    hasZero = zero;
  }

  private static int hash(long x, int bits) {
    return (int) ((x * 0x9E37_79B9_7F4A_7C15L) >>> (64 - bits));
  }

  boolean contains(long x) {
    if (x == 0) {
      return hasZero;
    }
    int h = hash(x, filterBits);
    if (filter != null && (filter[h >>> 6] & (1L << h)) == 0) {
      return false;
    }
    int i = h >>> 5;
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
