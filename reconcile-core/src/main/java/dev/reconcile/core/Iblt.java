package dev.reconcile.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Invertible Bloom lookup table over 64-bit elements, for set reconciliation.
 *
 * <h2>Structure</h2>
 *
 * An IBLT [1] of shape {@code (k, base, log2)} has {@code k} hash subtables of {@code s = base *
 * 2^log2} cells. Element {@code x} lives in exactly one cell of each subtable, at
 *
 * <pre>
 *   pos_j(x) = j*s + (hi_j(x) << log2 | (h_j(x) & (2^log2 - 1)))      h_j = cellHash(x, j)
 *   hi_j(x)  = ((h_j(x) >>> 32) * base) >>> 32                          (0 when base = 1)
 *   h_j(x)   = mix13(c + (j + 1) * GAMMA),   c = cellBase(x)            (mod 2^64)
 * </pre>
 *
 * (a multiply-shift range reduction of 32 high bits instead of {@code %}; see {@link HashSpec}: one
 * keyed XXH3 call per element gives {@code c}, which is the element's check hash and seeds the
 * SplitMix64 stream of its {@code k} cell hashes). Each cell keeps
 *
 * <pre>
 *   count    = (#inserted - #deleted)        mod 2^(8*countBytes), sign-extended
 *   keySum   = XOR of the elements            (masked to keyBytes)
 *   checkSum = XOR of checkHash(element)      (masked to checkBytes)
 * </pre>
 *
 * All three are group operations, so a table is linear: {@code T(A) - T(B) = T(A \ B) - T(B \ A)};
 * elements on both sides cancel whatever the set sizes, which is what makes the difference digest
 * of Eppstein, Goodrich, Uyeda and Varghese [2] cost O(d) and not O(n).
 *
 * <h2>Memory layout</h2>
 *
 * Three parallel primitive arrays of {@code k*s} entries ({@code int[] counts}, {@code long[]
 * keySums}, {@code int[] checkSums}; 16 bytes per cell in memory), subtable-major. Insert touches
 * {@code k} cells and computes one XXH3 hash plus {@code k} 64-bit mixes; nothing on the hot path
 * allocates or boxes.
 *
 * <h2>Peeling</h2>
 *
 * A cell is <em>pure</em> when {@code count = +-1}, {@code checkSum = checkHash(keySum)} and the
 * cell is where {@code keySum} would be placed ({@code pos_j(keySum) = i}): three independent
 * tests, so a cell holding several elements passes with probability about {@code 2^-(8*checkBytes)
 * / s}. Peeling repeatedly removes the element of a pure cell from its {@code k} cells (an explicit
 * {@code int[]} stack of candidate cells, as in FastFilter's XOR filters [4]). With {@code k = 3}
 * peeling empties the table w.h.p. while {@code d < 0.818 * cells} [3]; for finite d it needs more
 * room (see {@link Sizing}). A peel that leaves any non-zero cell is a failed decode: its partial
 * lists must not be used, and the caller retries with a larger table. A peel of a table built from
 * hostile bytes stops after at most {@code cells} extractions. Cells are pushed as candidates when
 * their count becomes {@code +-1} (no hashing); the full purity test (one XXH3 call) runs when a
 * candidate is popped, and the same base hash then gives the {@code k} cells to extract from.
 *
 * <h2>Folding</h2>
 *
 * Because {@code pos_j} keeps the low {@code log2} bits of {@code h_j}, cell {@code (j, hi, lo)} of
 * a {@code log2} table lands on cell {@code (j, hi, lo mod 2^log2')} of a {@code log2' < log2}
 * table. Summing those cells ({@link #fold}) yields exactly the table built directly at the smaller
 * size, so an agent maintains one table of the largest size per ladder and derives every smaller
 * one without reading its data.
 *
 * <h2>Incremental doubling</h2>
 *
 * Within one ladder the table of {@code log2} is the fold of the table of {@code log2 + 1}: its
 * cell {@code (j, hi, lo)} is the sum of the pair {@code (j, hi, lo)} and {@code (j, hi, lo +
 * 2^log2)} of the larger table. So a receiver that kept the difference {@code D_m = R_m - L_m} of a
 * failed table (a copy taken before peeling) needs only one cell of each pair of the sender's
 * doubled table to rebuild the doubled difference:
 *
 * <pre>
 *   D_2m(j, hi, lo + 2^log2) = E(j, hi, lo) - L_2m(j, hi, lo + 2^log2)     E = extension (sent)
 *   D_2m(j, hi, lo)          = D_m(j, hi, lo) - D_2m(j, hi, lo + 2^log2)
 * </pre>
 *
 * ({@code -} is the cell group operation: counts modulo the layout width, XOR for the sums). The
 * <em>extension</em> {@code E} of a table over its fold ({@link #writeExtension}) is its upper cell
 * of each pair, packed like {@link #writeCells} in the order of the smaller table's cells: {@code
 * m} cells, so a retry after a failed table of {@code m} cells costs {@code m} more cells, not
 * {@code 2m}, and the cells sent until a decode always add up to the size of the table that
 * decoded. {@link #unfold} is the receiver's side.
 *
 * <p>References: [1] M. T. Goodrich, M. Mitzenmacher, "Invertible Bloom Lookup Tables", Allerton
 * 2011. [2] D. Eppstein, M. T. Goodrich, F. Uyeda, G. Varghese, "What's the Difference? Efficient
 * Set Reconciliation without Prior Context", SIGCOMM 2011. [3] M. Molloy, "Cores in random
 * hypergraphs and Boolean formulas", Random Struct. Algorithms 2005 (peeling thresholds). [4] T. M.
 * Graf, D. Lemire, "Xor Filters", JEA 2020.
 *
 * <p>Not thread-safe; callers that share a table guard it.
 */
public final class Iblt {
  private final HashSpec spec;
  private final IbltShape shape;
  private final CellLayout layout;
  private final int k;
  private final int sub;
  private final int log2;
  private final int base;
  private final int lowMask;
  private final long keyMask;
  private final int checkMask;
  private final int countShift;
  private final int[] counts;
  private final long[] keySums;
  private final int[] checkSums;

  public Iblt(HashSpec spec, IbltShape shape, CellLayout layout) {
    this.spec = spec;
    this.shape = shape;
    this.layout = layout;
    this.k = shape.hashCount();
    this.sub = shape.subtableCells();
    this.log2 = shape.log2();
    this.base = shape.base();
    this.lowMask = (1 << log2) - 1;
    this.keyMask = layout.keyMask();
    this.checkMask = layout.checkMask();
    this.countShift = 32 - 8 * layout.countBytes();
    long cells = shape.cells();
    if (cells > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("table of " + cells + " cells is too large");
    }
    this.counts = new int[(int) cells];
    this.keySums = new long[(int) cells];
    this.checkSums = new int[(int) cells];
  }

  /**
   * A table over cell arrays already filled (by {@link IbltLadder#fold}); counts are normalised.
   */
  Iblt(
      HashSpec spec,
      IbltShape shape,
      CellLayout layout,
      int[] counts,
      long[] keySums,
      int[] checkSums) {
    this.spec = spec;
    this.shape = shape;
    this.layout = layout;
    this.k = shape.hashCount();
    this.sub = shape.subtableCells();
    this.log2 = shape.log2();
    this.base = shape.base();
    this.lowMask = (1 << log2) - 1;
    this.keyMask = layout.keyMask();
    this.checkMask = layout.checkMask();
    this.countShift = 32 - 8 * layout.countBytes();
    if (counts.length != shape.cells()
        || keySums.length != counts.length
        || checkSums.length != counts.length) {
      throw new IllegalArgumentException("cell arrays do not match shape " + shape);
    }
    for (int i = 0; i < counts.length; i++) {
      counts[i] = layout.normalizeCount(counts[i]);
      keySums[i] &= keyMask;
      checkSums[i] &= checkMask;
    }
    this.counts = counts;
    this.keySums = keySums;
    this.checkSums = checkSums;
  }

  public HashSpec spec() {
    return spec;
  }

  public IbltShape shape() {
    return shape;
  }

  public CellLayout layout() {
    return layout;
  }

  public int cells() {
    return counts.length;
  }

  /** Bytes of the packed cells on the wire. */
  public long wireBytes() {
    return (long) cells() * layout.cellBytes();
  }

  public void insert(long element) {
    update(element, 1);
  }

  public void delete(long element) {
    update(element, -1);
  }

  /** Adds {@code delta} copies of {@code element} (negative removes). */
  public void update(long element, int delta) {
    long x = element & keyMask;
    long c = spec.cellBase(x);
    int chk = (int) c & checkMask;
    int[] counts = this.counts;
    long[] keySums = this.keySums;
    int[] checkSums = this.checkSums;
    long s = c;
    for (int off = 0, end = k * sub; off < end; off += sub) {
      s += HashSpec.GAMMA;
      int i = off + slot(HashSpec.mix13(s));
      counts[i] += delta;
      keySums[i] ^= x;
      checkSums[i] ^= chk;
    }
  }

  /** {@code this -= other}, cell by cell. Both tables must have the same spec, shape and layout. */
  public void subtract(Iblt other) {
    requireCompatible(other);
    for (int i = 0; i < counts.length; i++) {
      counts[i] = layout.normalizeCount(counts[i] - other.counts[i]);
      keySums[i] ^= other.keySums[i];
      checkSums[i] ^= other.checkSums[i];
    }
  }

  /** {@code this += other}, cell by cell. */
  public void add(Iblt other) {
    requireCompatible(other);
    for (int i = 0; i < counts.length; i++) {
      counts[i] = layout.normalizeCount(counts[i] + other.counts[i]);
      keySums[i] ^= other.keySums[i];
      checkSums[i] ^= other.checkSums[i];
    }
  }

  /**
   * The table of the smaller shape {@code target} (same hash count and base, {@code target.log2 <=
   * log2}) that direct insertion of the same elements would have built.
   */
  public Iblt fold(IbltShape target) {
    if (target.hashCount() != k || target.base() != base || target.log2() > log2) {
      throw new IllegalArgumentException("cannot fold " + shape + " to " + target);
    }
    Iblt out = new Iblt(spec, target, layout);
    foldInto(out);
    return out;
  }

  /**
   * Writes {@code out}'s cells as the fold of this table (same spec, layout, hash count and base;
   * {@code out.log2 <= log2}): {@link #fold} into an existing table, for loops that must not
   * allocate.
   */
  void foldInto(Iblt out) {
    IbltShape target = out.shape;
    if (target.hashCount() != k
        || target.base() != base
        || target.log2() > log2
        || !layout.equals(out.layout)
        || !spec.equals(out.spec)) {
      throw new IllegalArgumentException("cannot fold " + this + " into " + out);
    }
    out.clear();
    int tSub = target.subtableCells();
    int tLowMask = (1 << target.log2()) - 1;
    int tLog2 = target.log2();
    for (int j = 0; j < k; j++) {
      int from = j * sub;
      int to = j * tSub;
      for (int c = 0; c < sub; c++) {
        int t = to + (((c >>> log2) << tLog2) | (c & lowMask & tLowMask));
        int f = from + c;
        out.counts[t] += counts[f];
        out.keySums[t] ^= keySums[f];
        out.checkSums[t] ^= checkSums[f];
      }
    }
    for (int i = 0; i < out.counts.length; i++) {
      out.counts[i] = layout.normalizeCount(out.counts[i]);
    }
  }

  /** Overwrites {@code out}'s cells with this table's (same shape and layout). */
  void copyInto(Iblt out) {
    requireCompatible(out);
    System.arraycopy(counts, 0, out.counts, 0, counts.length);
    System.arraycopy(keySums, 0, out.keySums, 0, keySums.length);
    System.arraycopy(checkSums, 0, out.checkSums, 0, checkSums.length);
  }

  /** Cells of {@link #writeExtension}: half of this table's. */
  public int extensionCells() {
    requireExtensible();
    return counts.length / 2;
  }

  /** Bytes of {@link #writeExtension}. */
  public long extensionBytes() {
    return (long) extensionCells() * layout.cellBytes();
  }

  /**
   * Writes the extension of this table over its fold to {@code log2 - 1}: for every folding pair
   * its upper cell {@code (j, hi, lo + 2^(log2-1))}, in the order {@code (j, hi, lo)} of the
   * smaller table's cells, each packed as {@link #writeCells} packs a cell. With the smaller
   * table's difference the receiver rebuilds this table's difference ({@link #unfold}).
   *
   * @throws IllegalStateException when {@code log2 = 0} (no smaller table folds from this one)
   */
  public void writeExtension(ByteBuffer out) {
    requireExtensible();
    ByteBuffer b = out.order(ByteOrder.LITTLE_ENDIAN);
    int half = 1 << (log2 - 1);
    for (int j = 0; j < k; j++) {
      for (int hi = 0; hi < base; hi++) {
        int from = j * sub + (hi << log2) + half;
        for (int lo = 0; lo < half; lo++) {
          writeCell(b, from + lo);
        }
      }
    }
  }

  /** The extension ({@link #writeExtension}) as a new array of {@link #extensionBytes()} bytes. */
  public byte[] packExtension() {
    byte[] out = new byte[Math.toIntExact(extensionBytes())];
    writeExtension(ByteBuffer.wrap(out));
    return out;
  }

  /**
   * The receiver's side of incremental doubling: the difference {@code remote - local} at twice the
   * size of {@code half}.
   *
   * @param half the difference {@code remote - local} of the failed table, shape {@code (k, base,
   *     log2)}, as it was before peeling (peeling changes it: keep a {@link #copy})
   * @param remoteExtension the sender's {@link #writeExtension} of its {@code (k, base, log2 + 1)}
   *     table; exactly {@code half.cells() * cellBytes} bytes must remain, which are consumed
   * @param localDoubled the receiver's own table of shape {@code (k, base, log2 + 1)}
   * @return a new table equal, cell by cell, to the sender's doubled table minus {@code
   *     localDoubled}
   * @throws FormatException when the extension has another length than the one {@code half}'s shape
   *     and layout give (nothing is allocated then)
   * @throws IllegalArgumentException when the tables' spec, layout or shapes do not fit together
   */
  public static Iblt unfold(Iblt half, ByteBuffer remoteExtension, Iblt localDoubled)
      throws FormatException {
    if (!half.spec.equals(localDoubled.spec)) {
      throw new IllegalArgumentException(
          "hash spec mismatch: " + half.spec + " vs " + localDoubled.spec);
    }
    if (!half.layout.equals(localDoubled.layout)
        || half.shape.log2() >= IbltShape.MAX_LOG2
        || !localDoubled.shape.equals(half.shape.doubled())) {
      throw new IllegalArgumentException(
          "cannot unfold "
              + half
              + " with a local table "
              + localDoubled
              + ": it must be the same ladder one step up, same layout");
    }
    long want = (long) half.counts.length * half.layout.cellBytes();
    if (remoteExtension.remaining() != want) {
      throw new FormatException(
          "extension of shape "
              + half.shape
              + " to "
              + localDoubled.shape
              + " needs "
              + want
              + " bytes, got "
              + remoteExtension.remaining());
    }
    ByteBuffer b = remoteExtension.order(ByteOrder.LITTLE_ENDIAN);
    Iblt out = new Iblt(half.spec, localDoubled.shape, half.layout);
    CellLayout layout = half.layout;
    int cw = layout.countBytes();
    int kw = layout.keyBytes();
    int hw = layout.checkBytes();
    int hLog2 = half.log2;
    int hSub = half.sub;
    int dSub = localDoubled.sub;
    int top = 1 << hLog2;
    for (int i = 0; i < half.counts.length; i++) {
      int j = i / hSub;
      int c = i - j * hSub;
      int lower = j * dSub + (((c >>> hLog2) << (hLog2 + 1)) | (c & (top - 1)));
      int upper = lower + top;
      int count = cw == 1 ? b.get() : cw == 2 ? b.getShort() : b.getInt();
      long key = kw == 8 ? b.getLong() : (b.getInt() & 0xFFFF_FFFFL);
      int check = hw == 4 ? b.getInt() : (b.getShort() & 0xFFFF);
      int uc = layout.normalizeCount(count - localDoubled.counts[upper]);
      long uk = key ^ localDoubled.keySums[upper];
      int uh = check ^ localDoubled.checkSums[upper];
      out.counts[upper] = uc;
      out.keySums[upper] = uk;
      out.checkSums[upper] = uh;
      out.counts[lower] = layout.normalizeCount(half.counts[i] - uc);
      out.keySums[lower] = half.keySums[i] ^ uk;
      out.checkSums[lower] = half.checkSums[i] ^ uh;
    }
    return out;
  }

  private void requireExtensible() {
    if (log2 == 0) {
      throw new IllegalStateException(
          "table " + shape + " has log2 0: no smaller table folds from it, so it has no extension");
    }
  }

  public Iblt copy() {
    Iblt out = new Iblt(spec, shape, layout);
    System.arraycopy(counts, 0, out.counts, 0, counts.length);
    System.arraycopy(keySums, 0, out.keySums, 0, keySums.length);
    System.arraycopy(checkSums, 0, out.checkSums, 0, checkSums.length);
    return out;
  }

  public void clear() {
    Arrays.fill(counts, 0);
    Arrays.fill(keySums, 0);
    Arrays.fill(checkSums, 0);
  }

  /** True when every cell is zero. */
  public boolean isEmpty() {
    for (int i = 0; i < counts.length; i++) {
      if ((layout.normalizeCount(counts[i]) | checkSums[i]) != 0 || keySums[i] != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * Peels this table in place. Elements with count +1 (present here, absent there after {@code
   * here.subtract(there)}) go to {@link PeelResult#onlyHere()}, count -1 to {@link
   * PeelResult#onlyThere()}. {@link PeelResult#complete()} is true only when every cell returned to
   * zero; otherwise the lists are partial and must not be acted on.
   */
  public PeelResult peel() {
    int n = counts.length;
    int[] counts = this.counts;
    long[] keySums = this.keySums;
    int[] checkSums = this.checkSums;
    int shift = countShift;
    IntStack stack = new IntStack(Math.min(n, 1024));
    for (int i = 0; i < n; i++) {
      int c = (counts[i] << shift) >> shift;
      if (c == 1 || c == -1) {
        stack.push(i);
      }
    }
    LongList here = new LongList(16);
    LongList there = new LongList(16);
    int extracted = 0;
    boolean exhausted = false;
    int end = k * sub;
    while (stack.size() > 0) {
      int i = stack.pop();
      int sign = (counts[i] << shift) >> shift;
      if (sign != 1 && sign != -1) {
        continue;
      }
      long x = keySums[i];
      long c0 = spec.cellBase(x);
      int chk = (int) c0 & checkMask;
      if (checkSums[i] != chk) {
        continue;
      }
      int j = i / sub;
      int off = j * sub;
      if (off + slot(HashSpec.mix13(c0 + (j + 1) * HashSpec.GAMMA)) != i) {
        continue; // the key sum of a mixed cell that happens to pass the count and check tests
      }
      if (++extracted > n) {
        exhausted = true; // more elements than cells: hostile or corrupt input
        break;
      }
      (sign > 0 ? here : there).add(x);
      long s = c0;
      for (off = 0; off < end; off += sub) {
        s += HashSpec.GAMMA;
        int c = off + slot(HashSpec.mix13(s));
        int left = ((counts[c] - sign) << shift) >> shift;
        counts[c] = left;
        keySums[c] ^= x;
        checkSums[c] ^= chk;
        if (left == 1 || left == -1) {
          stack.push(c);
        }
      }
    }
    boolean complete = !exhausted && isEmpty();
    return new PeelResult(complete, here.toArray(), there.toArray());
  }

  /** Writes the packed cells: per cell count, key sum, check sum, little-endian, layout widths. */
  public void writeCells(ByteBuffer out) {
    ByteBuffer b = out.order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < counts.length; i++) {
      writeCell(b, i);
    }
  }

  /** Packs cell {@code i} (little-endian, layout widths). */
  private void writeCell(ByteBuffer b, int i) {
    int c = counts[i];
    int cw = layout.countBytes();
    if (cw == 1) {
      b.put((byte) c);
    } else if (cw == 2) {
      b.putShort((short) c);
    } else {
      b.putInt(c);
    }
    if (layout.keyBytes() == 8) {
      b.putLong(keySums[i]);
    } else {
      b.putInt((int) keySums[i]);
    }
    if (layout.checkBytes() == 4) {
      b.putInt(checkSums[i]);
    } else {
      b.putShort((short) checkSums[i]);
    }
  }

  /** Packed cells as a new array of exactly {@link #wireBytes()} bytes. */
  public byte[] packCells() {
    byte[] out = new byte[Math.toIntExact(wireBytes())];
    writeCells(ByteBuffer.wrap(out));
    return out;
  }

  /**
   * Reads packed cells written by {@link #writeCells} into a new table. The caller has checked the
   * shape against its caps; this checks that exactly {@code cells * cellBytes} bytes remain.
   */
  public static Iblt readCells(HashSpec spec, IbltShape shape, CellLayout layout, ByteBuffer in)
      throws FormatException {
    long want = shape.cells() * layout.cellBytes();
    if (in.remaining() != want) {
      throw new FormatException(
          "packed cells of shape " + shape + " need " + want + " bytes, got " + in.remaining());
    }
    Iblt t = new Iblt(spec, shape, layout);
    ByteBuffer b = in.order(ByteOrder.LITTLE_ENDIAN);
    int cw = layout.countBytes();
    int kw = layout.keyBytes();
    int hw = layout.checkBytes();
    for (int i = 0; i < t.counts.length; i++) {
      t.counts[i] = cw == 1 ? b.get() : cw == 2 ? b.getShort() : b.getInt();
      t.keySums[i] = kw == 8 ? b.getLong() : (b.getInt() & 0xFFFF_FFFFL);
      t.checkSums[i] = hw == 4 ? b.getInt() : (b.getShort() & 0xFFFF);
    }
    return t;
  }

  int count(int cell) {
    return counts[cell];
  }

  long keySum(int cell) {
    return keySums[cell];
  }

  int checkSum(int cell) {
    return checkSums[cell];
  }

  /** True when both tables hold identical cells (counts compared modulo the layout width). */
  public boolean sameCells(Iblt o) {
    if (!shape.equals(o.shape) || !layout.equals(o.layout)) {
      return false;
    }
    for (int i = 0; i < counts.length; i++) {
      if (layout.normalizeCount(counts[i]) != layout.normalizeCount(o.counts[i])
          || keySums[i] != o.keySums[i]
          || checkSums[i] != o.checkSums[i]) {
        return false;
      }
    }
    return true;
  }

  /** Cell of cell hash {@code h} within its subtable; {@code hi} is 0 when {@code base = 1}. */
  private int slot(long h) {
    int hi = (int) (((h >>> 32) * base) >>> 32);
    return (hi << log2) | ((int) h & lowMask);
  }

  private void requireCompatible(Iblt other) {
    if (!shape.equals(other.shape) || !layout.equals(other.layout)) {
      throw new IllegalArgumentException(
          "shape/layout mismatch: "
              + shape
              + "/"
              + layout
              + " vs "
              + other.shape
              + "/"
              + other.layout);
    }
    if (!spec.equals(other.spec)) {
      throw new IllegalArgumentException("hash spec mismatch: " + spec + " vs " + other.spec);
    }
  }

  @Override
  public String toString() {
    return "Iblt{" + shape + ", " + layout.cellBytes() + " B/cell}";
  }
}
