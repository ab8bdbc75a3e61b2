package dev.reconcile.core;

import java.util.Arrays;

/**
 * The two largest tables an agent maintains per partition, one of each size ladder ({@link
 * SketchParams#maxShape()}, base 1, and {@link SketchParams#maxShapeBase3()}, base 3), from which
 * every smaller {@link CellLayout#WIDE} table is {@link #fold folded}: choosing a table's size, and
 * doubling it after a failed decode, reads no data.
 *
 * <h2>Cells</h2>
 *
 * The cell arithmetic is {@link Iblt}'s, not a copy of it in other words: the same positions {@code
 * pos_j(x)} from the element's one keyed hash {@code c = cellBase(x)} (see {@link HashSpec}), the
 * same count / key-sum / check-sum group operations, the same fold. An update computes {@code c}
 * once for both tables ({@link #update(long, long, int)} takes it precomputed, so that a caller
 * maintaining other sketches of the same element hashes it once): one XXH3 call and {@code k} mixes
 * per write, where the agent's first tables made {@code k + 1} XXH3 calls.
 *
 * <h2>Memory layout</h2>
 *
 * Interleaved, unlike {@link Iblt}'s parallel arrays: cell {@code i} is {@code long[2i] = keySum}
 * and {@code long[2i+1] = count << 32 | checkSum}, so an update touches one 16-byte cell (one cache
 * line) per subtable instead of three arrays. Tables of 1-6 MB per partition do not stay in cache,
 * and the write path is bound by these misses. Memory: {@code 16 B x (maxShape.cells +
 * maxShapeBase3.cells) = 16 x 1.75 x k x 2^max} bytes, plus the small tables (below). Counts are
 * kept exactly (32 bits); {@link #fold} reduces them to the wire width while writing straight into
 * the new table's arrays.
 *
 * <h2>Small tables</h2>
 *
 * A fold reads every cell of the table it folds: a round's first table of a few thousand cells,
 * folded from {@code 3 x 2^15} cells, read 1.5 MiB per partition, 24 MiB a side for 16 partitions,
 * which was nearly all of an estimator-path round at d = 1 000 (docs/benchmarks.md, section 2,
 * "stop 35"). So each ladder also keeps its table folded to a small shape: {@code k x 2^10} and
 * {@code k x 3 x 2^9} cells (or the large shape, if smaller), 48 and 72 KiB at {@code k = 3}, which
 * hold the tables the sizing picks up to about d = 1 000 (1 536, 3 072 and 4 608 cells,
 * docs/sizing.md). They are updated apart from the large ones ({@link #updateSmallAll}: {@code 2k}
 * more cell updates per write, which the agent defers with the coded symbols, off the write path).
 * A table up to that size is folded from the small one: 1/32 or 1/16 of the reads at {@code 2^max =
 * 2^15}. Folding is linear, so a small cell is exactly the sum of the large cells that fold onto
 * it, and {@link #sameCells} compares both.
 *
 * <p>Not thread-safe: the agent guards each partition's ladder with the partition's monitor.
 */
public final class IbltLadder {
  private final HashSpec spec;
  private final int k;
  private final IbltShape shape1;
  private final IbltShape shape3;
  private final int sub1;
  private final int sub3;
  private final int log3;
  private final int mask1;
  private final int mask3;
  private final long[] t1;
  private final long[] t3;

  /** {@code log2} of the small tables, base 1 and base 3: at most these (see the class comment). */
  static final int SMALL_LOG2 = 10;

  static final int SMALL_LOG2_BASE3 = 9;

  private final int small1Log2;
  private final int small3Log2;
  private final int smallSub1;
  private final int smallSub3;
  private final int smallMask1;
  private final int smallMask3;
  private final long[] s1;
  private final long[] s3;

  public IbltLadder(SketchParams params) {
    this(params.spec(), params.maxShape(), params.maxShapeBase3());
  }

  private IbltLadder(HashSpec spec, IbltShape shape1, IbltShape shape3) {
    this.spec = spec;
    this.k = shape1.hashCount();
    this.shape1 = shape1;
    this.shape3 = shape3;
    this.sub1 = shape1.subtableCells();
    this.sub3 = shape3.subtableCells();
    this.log3 = shape3.log2();
    this.mask1 = (1 << shape1.log2()) - 1;
    this.mask3 = (1 << log3) - 1;
    this.t1 = new long[2 * k * sub1];
    this.t3 = new long[2 * k * sub3];
    this.small1Log2 = Math.min(SMALL_LOG2, shape1.log2());
    this.small3Log2 = Math.min(SMALL_LOG2_BASE3, log3);
    this.smallSub1 = 1 << small1Log2;
    this.smallSub3 = 3 << small3Log2;
    this.smallMask1 = smallSub1 - 1;
    this.smallMask3 = (1 << small3Log2) - 1;
    this.s1 = new long[2 * k * smallSub1];
    this.s3 = new long[2 * k * smallSub3];
  }

  public void insert(long x) {
    update(x, spec.cellBase(x), 1);
  }

  public void delete(long x) {
    update(x, spec.cellBase(x), -1);
  }

  /** Adds {@code delta} copies of {@code x}, whose {@link HashSpec#cellBase} is {@code c}. */
  public void update(long x, long c, int delta) {
    updateLarge(x, c, delta);
    updateSmall(x, c, delta);
  }

  /**
   * {@link #update} of the largest tables only: the caller owes {@link #updateSmallAll} the same
   * update before the small tables are folded (the agent defers it with the coded symbols).
   */
  public void updateLarge(long x, long c, int delta) {
    long countDelta = (long) delta << 32;
    long chk = c & 0xFFFF_FFFFL;
    long[] t1 = this.t1;
    long[] t3 = this.t3;
    long s = c;
    for (int j = 0; j < k; j++) {
      s += HashSpec.GAMMA;
      long h = HashSpec.mix13(s);
      int lo = (int) h;
      int i1 = (j * sub1 + (lo & mask1)) << 1;
      t1[i1] ^= x;
      t1[i1 + 1] = (t1[i1 + 1] + countDelta) ^ chk;
      int hi = (int) (((h >>> 32) * 3) >>> 32);
      int i3 = (j * sub3 + ((hi << log3) | (lo & mask3))) << 1;
      t3[i3] ^= x;
      t3[i3 + 1] = (t3[i3 + 1] + countDelta) ^ chk;
    }
  }

  /** {@link #update} of the small tables only (see {@link #updateLarge}). */
  public void updateSmall(long x, long c, int delta) {
    long countDelta = (long) delta << 32;
    long chk = c & 0xFFFF_FFFFL;
    long[] s1 = this.s1;
    long[] s3 = this.s3;
    long s = c;
    for (int j = 0; j < k; j++) {
      s += HashSpec.GAMMA;
      long h = HashSpec.mix13(s);
      int lo = (int) h;
      // The large tables' cells folded to the small shapes (the fold's index, see fold).
      int f1 = (j * smallSub1 + (lo & smallMask1)) << 1;
      s1[f1] ^= x;
      s1[f1 + 1] = (s1[f1 + 1] + countDelta) ^ chk;
      int hi = (int) (((h >>> 32) * 3) >>> 32);
      int f3 = (j * smallSub3 + ((hi << small3Log2) | (lo & smallMask3))) << 1;
      s3[f3] ^= x;
      s3[f3 + 1] = (s3[f3 + 1] + countDelta) ^ chk;
    }
  }

  /** {@link #updateSmall} of {@code xs[i]}, check hash {@code cs[i]}, delta {@code ds[i]}. */
  public void updateSmallAll(long[] xs, long[] cs, byte[] ds, int n) {
    for (int i = 0; i < n; i++) {
      updateSmall(xs[i], cs[i], ds[i]);
    }
  }

  /** A new {@link CellLayout#WIDE} table of {@code target}, folded from the table of its ladder. */
  public Iblt fold(IbltShape target) {
    boolean base1 = target.base() == 1;
    IbltShape from = base1 ? shape1 : shape3;
    if (target.hashCount() != k || target.log2() > from.log2()) {
      throw new IllegalArgumentException("cannot fold " + from + " to " + target);
    }
    long[] src;
    int sub;
    int log2;
    int smallLog2 = base1 ? small1Log2 : small3Log2;
    if (target.log2() <= smallLog2) {
      src = base1 ? s1 : s3; // a small table: the large one already folded to 2^smallLog2
      sub = base1 ? smallSub1 : smallSub3;
      log2 = smallLog2;
    } else {
      src = base1 ? t1 : t3;
      sub = from.subtableCells();
      log2 = from.log2();
    }
    int lowMask = (1 << log2) - 1;
    int tSub = target.subtableCells();
    int tLog2 = target.log2();
    int tLowMask = (1 << tLog2) - 1;
    int[] counts = new int[k * tSub];
    long[] keys = new long[k * tSub];
    int[] checks = new int[k * tSub];
    for (int j = 0; j < k; j++) {
      int fromBase = j * sub;
      int toBase = j * tSub;
      for (int cell = 0; cell < sub; cell++) {
        int t = toBase + (((cell >>> log2) << tLog2) | (cell & lowMask & tLowMask));
        int f = (fromBase + cell) << 1;
        keys[t] ^= src[f];
        long cc = src[f + 1];
        counts[t] += (int) (cc >> 32);
        checks[t] ^= (int) cc;
      }
    }
    return new Iblt(spec, target, CellLayout.WIDE, counts, keys, checks);
  }

  public IbltLadder copy() {
    IbltLadder m = new IbltLadder(spec, shape1, shape3);
    System.arraycopy(t1, 0, m.t1, 0, t1.length);
    System.arraycopy(t3, 0, m.t3, 0, t3.length);
    System.arraycopy(s1, 0, m.s1, 0, s1.length);
    System.arraycopy(s3, 0, m.s3, 0, s3.length);
    return m;
  }

  /** Exact equality of both tables (counts unreduced). */
  public boolean sameCells(IbltLadder o) {
    return shape1.equals(o.shape1)
        && shape3.equals(o.shape3)
        && Arrays.equals(t1, o.t1)
        && Arrays.equals(t3, o.t3)
        && Arrays.equals(s1, o.s1)
        && Arrays.equals(s3, o.s3);
  }

  /** The two maintained shapes, e.g. {@code 3x32768 / 3x24576 (3*2^13)}. */
  public String shapes() {
    return shape1 + " / " + shape3;
  }

  /** Bytes of memory the two tables take. */
  public long memoryBytes() {
    return 8L * (t1.length + t3.length + s1.length + s3.length);
  }
}
