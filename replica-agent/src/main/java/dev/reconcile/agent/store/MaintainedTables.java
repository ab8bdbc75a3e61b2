package dev.reconcile.agent.store;

import dev.reconcile.core.CellLayout;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.SketchParams;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The two maintained IBLTs of a partition (the largest table of each size ladder, {@code
 * params.maxShape()} and {@code params.maxShapeBase3()}), laid out for the write path.
 *
 * <h2>Why not two {@link Iblt}s</h2>
 *
 * The cells, cell positions and fold are exactly those of {@link Iblt} (same {@code pos_j(x)}, same
 * count / key-sum / check-sum group operations; see its class comment), but:
 *
 * <ul>
 *   <li>the layout is interleaved: cell {@code i} is {@code long[2i] = keySum} and {@code
 *       long[2i+1] = count << 32 | checkSum}, so an update touches one 16-byte cell (one cache
 *       line) instead of three parallel arrays. Tables of 1-6 MB per partition do not stay in
 *       cache, and the write path was bound by these misses (about 1.8 us per overwrite with three
 *       arrays and two tables at {@code max = 14});
 *   <li>both ladders use the same {@code cellHash(x, j)} and {@code checkHash(x)}, computed once
 *       per element for both tables ({@code k + 1} hashes instead of {@code 2k + 2}).
 * </ul>
 *
 * Counts are kept exactly (32 bits); {@link #fold} reduces them to the {@link CellLayout#WIDE}
 * width and hands the cells to {@link Iblt#readCells}, so sessions get ordinary tables. Tests
 * compare every folded shape cell by cell with tables built by direct insertion ({@code
 * MemorySketches}). Not thread-safe: {@link PartitionState} guards it.
 */
final class MaintainedTables {
  private final HashSpec spec;
  private final int k;
  private final IbltShape shape1;
  private final IbltShape shape3;
  private final int sub1;
  private final int sub3;
  private final int log1;
  private final int log3;
  private final int mask1;
  private final int mask3;
  private final long[] t1;
  private final long[] t3;

  MaintainedTables(SketchParams params) {
    this(params.spec(), params.maxShape(), params.maxShapeBase3());
  }

  private MaintainedTables(HashSpec spec, IbltShape shape1, IbltShape shape3) {
    if (shape1.base() != 1 || shape3.base() != 3 || shape1.hashCount() != shape3.hashCount()) {
      throw new IllegalArgumentException(
          "need a base-1 and a base-3 shape: " + shape1 + ", " + shape3);
    }
    this.spec = spec;
    this.k = shape1.hashCount();
    this.shape1 = shape1;
    this.shape3 = shape3;
    this.sub1 = shape1.subtableCells();
    this.sub3 = shape3.subtableCells();
    this.log1 = shape1.log2();
    this.log3 = shape3.log2();
    this.mask1 = (1 << log1) - 1;
    this.mask3 = (1 << log3) - 1;
    this.t1 = new long[2 * k * sub1];
    this.t3 = new long[2 * k * sub3];
  }

  void insert(long x) {
    update(x, 1L << 32);
  }

  void delete(long x) {
    update(x, -1L << 32);
  }

  private void update(long x, long countDelta) {
    long chk = spec.checkHash(x) & 0xFFFF_FFFFL;
    for (int j = 0; j < k; j++) {
      long h = spec.cellHash(x, j);
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
  Iblt fold(IbltShape target) {
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
      for (int c = 0; c < sub; c++) {
        int t = toBase + (((c >>> log2) << tLog2) | (c & lowMask & tLowMask));
        int f = (fromBase + c) << 1;
        keys[t] ^= src[f];
        long cc = src[f + 1];
        counts[t] += (int) (cc >> 32);
        checks[t] ^= (int) cc;
      }
    }
    CellLayout wide = CellLayout.WIDE;
    ByteBuffer buf =
        ByteBuffer.allocate(Math.toIntExact(target.cells() * wide.cellBytes()))
            .order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < counts.length; i++) {
      buf.putShort((short) counts[i]).putLong(keys[i]).putInt(checks[i]);
    }
    buf.flip();
    try {
      return Iblt.readCells(spec, target, wide, buf);
    } catch (FormatException e) {
      throw new IllegalStateException("packed " + target + " cells rejected: " + e.getMessage(), e);
    }
  }

  MaintainedTables copy() {
    MaintainedTables m = new MaintainedTables(spec, shape1, shape3);
    System.arraycopy(t1, 0, m.t1, 0, t1.length);
    System.arraycopy(t3, 0, m.t3, 0, t3.length);
    return m;
  }

  /** Exact equality of both tables (counts unreduced). */
  boolean sameCells(MaintainedTables o) {
    return shape1.equals(o.shape1)
        && shape3.equals(o.shape3)
        && Arrays.equals(t1, o.t1)
        && Arrays.equals(t3, o.t3);
  }

  IbltShape shape1() {
    return shape1;
  }

  IbltShape shape3() {
    return shape3;
  }
}
