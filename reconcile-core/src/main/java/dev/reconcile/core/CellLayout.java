package dev.reconcile.core;

/**
 * Width of each cell field on the wire: count, key sum and check sum, in bytes.
 *
 * <p>In memory every cell holds an {@code int} count, a {@code long} key sum and an {@code int}
 * check sum; a narrow layout masks keys and checks at insert time and keeps counts modulo {@code
 * 2^(8*countBytes)}, so the wire form loses nothing the table holds. Counts are reduced modulo that
 * width because a subtracted table only needs {@code count in [-2^(b-1), 2^(b-1))} per cell: the
 * sender's absolute counts (which grow with n) are never needed.
 *
 * <ul>
 *   <li>{@link #WIDE}: 2 + 8 + 4 = 14 bytes per cell, for the reconciliation IBLT.
 *   <li>{@link #NARROW}: 1 + 4 + 2 = 7 bytes per cell, for estimator strata, where a rare false
 *       decode only perturbs a count.
 * </ul>
 */
public record CellLayout(int countBytes, int keyBytes, int checkBytes) {
  public static final CellLayout WIDE = new CellLayout(2, 8, 4);
  public static final CellLayout NARROW = new CellLayout(1, 4, 2);

  public CellLayout {
    if (countBytes != 1 && countBytes != 2 && countBytes != 4) {
      throw new IllegalArgumentException("count width " + countBytes + " is not 1, 2 or 4 bytes");
    }
    if (keyBytes != 4 && keyBytes != 8) {
      throw new IllegalArgumentException("key width " + keyBytes + " is not 4 or 8 bytes");
    }
    if (checkBytes != 2 && checkBytes != 4) {
      throw new IllegalArgumentException("check width " + checkBytes + " is not 2 or 4 bytes");
    }
  }

  public int cellBytes() {
    return countBytes + keyBytes + checkBytes;
  }

  long keyMask() {
    return keyBytes == 8 ? -1L : 0xFFFF_FFFFL;
  }

  int checkMask() {
    return checkBytes == 4 ? -1 : 0xFFFF;
  }

  /** Sign-extends the low {@code 8*countBytes} bits of {@code c}. */
  int normalizeCount(int c) {
    int shift = 32 - 8 * countBytes;
    return (c << shift) >> shift;
  }
}
