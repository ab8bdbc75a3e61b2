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
 * maxShapeBase3.cells) = 16 x 1.75 x k x 2^max} bytes. Counts are kept exactly (32 bits); {@link
 * #fold} reduces them to the wire width while writing straight into the new table's arrays.
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
  }

  public void insert(long x) {
    update(x, spec.cellBase(x), 1);
  }

  public void delete(long x) {
    update(x, spec.cellBase(x), -1);
  }

  /** Adds {@code delta} copies of {@code x}, whose {@link HashSpec#cellBase} is {@code c}. */
  public void update(long x, long c, int delta) {
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

  /** A new {@link CellLayout#WIDE} table of {@code target}, folded from the table of its ladder. */
  public Iblt fold(IbltShape target) {
    boolean base1 = target.base() == 1;
    IbltShape from = base1 ? shape1 : shape3;
    if (target.hashCount() != k || target.log2() > from.log2()) {
      throw new IllegalArgumentException("cannot fold " + from + " to " + target);
    }
    long[] src = base1 ? t1 : t3;
    int sub = from.subtableCells();
    int log2 = from.log2();
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
    return m;
  }

  /** Exact equality of both tables (counts unreduced). */
  public boolean sameCells(IbltLadder o) {
    return shape1.equals(o.shape1)
        && shape3.equals(o.shape3)
        && Arrays.equals(t1, o.t1)
        && Arrays.equals(t3, o.t3);
  }

  /** The two maintained shapes, e.g. {@code 3x32768 / 3x24576 (3*2^13)}. */
  public String shapes() {
    return shape1 + " / " + shape3;
  }

  /** Bytes of memory the two tables take. */
  public long memoryBytes() {
    return 8L * (t1.length + t3.length);
  }
}
