package dev.reconcile.core;

/**
 * Geometry of an {@link Iblt}: {@code hashCount} subtables of {@code base << log2} cells each.
 *
 * <p>Two ladders of sizes: base 1 gives power-of-two subtables, base 3 gives {@code 3 * 2^j};
 * together (1, 1.5, 2, 3, 4, 6, ...) they round a wanted size up by at most 50 % (and by 1.33x at
 * most every other step) instead of 100 %. Within one ladder a table folds to any smaller {@code
 * log2} (see {@link Iblt#fold}).
 */
public record IbltShape(int hashCount, int base, int log2) {
  public static final int MIN_HASHES = 2;
  public static final int MAX_HASHES = 8;
  public static final int MAX_LOG2 = 26;

  public IbltShape {
    if (hashCount < MIN_HASHES || hashCount > MAX_HASHES) {
      throw new IllegalArgumentException(
          "hash count " + hashCount + " outside [" + MIN_HASHES + ", " + MAX_HASHES + "]");
    }
    if (base != 1 && base != 3) {
      throw new IllegalArgumentException("base " + base + " is not 1 or 3");
    }
    if (log2 < 0 || log2 > MAX_LOG2) {
      throw new IllegalArgumentException("log2 " + log2 + " outside [0, " + MAX_LOG2 + "]");
    }
  }

  /** Cells in one hash subtable. */
  public int subtableCells() {
    return base << log2;
  }

  /** Cells in the whole table. */
  public long cells() {
    return (long) hashCount * subtableCells();
  }

  /** The same ladder one step up (twice the cells). */
  public IbltShape doubled() {
    return new IbltShape(hashCount, base, log2 + 1);
  }

  public IbltShape withLog2(int newLog2) {
    return new IbltShape(hashCount, base, newLog2);
  }

  /**
   * The smallest shape of either ladder, with {@code hashCount} hashes, whose total cells are at
   * least {@code wantedCells} and at least one cell per subtable.
   */
  public static IbltShape atLeast(int hashCount, long wantedCells) {
    long perSubtable = Math.max(1, (wantedCells + hashCount - 1) / hashCount);
    int p2 = 64 - Long.numberOfLeadingZeros(perSubtable - 1); // ceil log2
    IbltShape pow2 = new IbltShape(hashCount, 1, Math.min(p2, MAX_LOG2));
    // 3 * 2^j >= perSubtable
    int j = 0;
    while ((3L << j) < perSubtable && j < MAX_LOG2) {
      j++;
    }
    IbltShape three = new IbltShape(hashCount, 3, j);
    return three.cells() < pow2.cells() ? three : pow2;
  }

  @Override
  public String toString() {
    return hashCount + "x" + subtableCells() + (base == 1 ? "" : " (3*2^" + log2 + ")");
  }
}
