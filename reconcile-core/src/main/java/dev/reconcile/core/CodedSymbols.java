package dev.reconcile.core;

import java.util.Arrays;

/**
 * The first {@code M} coded symbols of a set of 64-bit elements: the maintained state of the
 * rateless mode (rateless IBLT, Yang, Gilad and Alizadeh [1]).
 *
 * <h2>Structure</h2>
 *
 * A coded symbol holds the same three sums as an IBLT cell ({@link Iblt}): the XOR of the elements
 * mapped to it, the XOR of their 32-bit check hashes and their count. Element {@code x} is mapped
 * to symbol 0 and then to the increasing index sequence {@code ratelessIndices/v1} of {@link
 * HashSpec}, in which index {@code j} appears with probability {@code rho(j) = 2 / (j + 2)}. The
 * sequence is infinite (up to {@code 2^31 - 1}); a prefix of {@code M = 2^log2} symbols keeps the
 * indices below {@code M}:
 *
 * <pre>
 *   sum_i   = XOR of x                 over the elements x whose sequence contains i
 *   check_i = XOR of (int) checkHash(x)   (the low 32 bits of c = cellBase(x))
 *   count_i = #inserted - #deleted      (int, exact in memory; 16 bits on the wire)
 * </pre>
 *
 * All three are group operations, so prefixes are linear like IBLT cells: the symbols of {@code A}
 * minus those of {@code B} are the symbols of {@code A \ B} minus those of {@code B \ A}, and the
 * prefix of a group of partitions is the sum ({@link #add}) of theirs. Unlike an IBLT the prefix is
 * rateless: a peer holding the first {@code N} symbols of the other side can decode a difference of
 * about {@code N / 1.35} elements whatever {@code N} is, so the table need not be sized in advance
 * ({@link RatelessDecoder}; symbols per difference measured in {@code RatelessStatisticsTest}).
 *
 * <h2>Cost</h2>
 *
 * An element has on average {@code sum_(j<M) rho(j) = 1 + 2 (H(M+1) - 1.5)}, about {@code 2 ln M -
 * 0.85}, indices below {@code M} ({@code H} the harmonic numbers): 15.8 at {@code M = 2^12}, 18.6
 * at {@code 2^14}, 21.3 at {@code 2^16}. An update walks them with one SplitMix64 step, one square
 * root and one division each, and no keyed hash beyond {@code c}: the caller that already computed
 * {@code c = spec.checkHash(x)} for its IBLTs passes it to {@link #update(long, long, int)}, so the
 * write path costs one keyed hash in all. Each octave {@code [2^k, 2^(k+1))} of the prefix receives
 * about 1.4 of the indices, so only the top octaves of a large prefix miss the cache.
 *
 * <h2>Memory layout</h2>
 *
 * One interleaved {@code long[2M]}: {@code [2i] = sum_i}, {@code [2i+1] = count_i << 32 | check_i},
 * 16 bytes per symbol (1 MiB at {@code M = 2^16}), so the update of a symbol touches one 16-byte
 * slot (one cache line) instead of three parallel arrays; the same layout as the agent's maintained
 * IBLTs. {@code RatelessBenchmark.update} measures it against three parallel arrays.
 *
 * <p>[1] L. Yang, Y. Gilad, M. Alizadeh, "Practical Rateless Set Reconciliation", ACM SIGCOMM 2024.
 *
 * <p>Not thread-safe; callers that share a prefix guard it. A peer streams or decodes against a
 * stable {@link #copy()}, never against a prefix that writes are still changing.
 */
public final class CodedSymbols {
  /** Largest {@code log2} of a prefix: {@code 2^24} symbols, 256 MiB. */
  public static final int MAX_LOG2 = 24;

  static final long CHECK_MASK = 0xFFFF_FFFFL;
  static final long COUNT_MASK = ~CHECK_MASK;

  private final HashSpec spec;
  private final int log2;
  private final int size;
  private final long[] w;

  /** An empty prefix of {@code 2^log2} symbols. */
  public CodedSymbols(HashSpec spec, int log2) {
    if (log2 < 0 || log2 > MAX_LOG2) {
      throw new IllegalArgumentException(
          "prefix log2 " + log2 + " is outside [0, " + MAX_LOG2 + "]");
    }
    this.spec = spec;
    this.log2 = log2;
    this.size = 1 << log2;
    this.w = new long[2 * size];
  }

  /** The prefix of {@code 2^log2} symbols of {@code elements} (each inserted once). */
  public static CodedSymbols of(HashSpec spec, int log2, long[] elements) {
    CodedSymbols s = new CodedSymbols(spec, log2);
    for (long x : elements) {
      s.update(x, 1);
    }
    return s;
  }

  public HashSpec spec() {
    return spec;
  }

  /** {@code M}, the number of symbols. */
  public int size() {
    return size;
  }

  public int log2() {
    return log2;
  }

  /** Bytes of memory of the symbols ({@code 16 M}). */
  public long memoryBytes() {
    return 8L * w.length;
  }

  public void insert(long x) {
    update(x, 1);
  }

  public void delete(long x) {
    update(x, -1);
  }

  /**
   * Adds {@code delta} copies of {@code x} (negative removes): counts change by {@code delta}, the
   * XOR sums by {@code x} when {@code delta} is odd.
   */
  public void update(long x, int delta) {
    update(x, spec.cellBase(x), delta);
  }

  /**
   * Adds {@code delta} copies of {@code x} whose check hash {@code spec().checkHash(x)} the caller
   * has already computed (for its IBLTs): no keyed hash is computed here. A wrong {@code checkHash}
   * corrupts the prefix.
   */
  public void update(long x, long checkHash, int delta) {
    long[] w = this.w;
    int m = size;
    long odd = -(long) (delta & 1); // copies cancel in pairs in the XOR sums
    long xs = x & odd;
    long chk = checkHash & CHECK_MASK & odd;
    long dc = (long) delta << 32;
    long s = HashSpec.ratelessStart(checkHash);
    int i = 0;
    do {
      int k = i << 1;
      w[k] ^= xs;
      w[k + 1] = (w[k + 1] + dc) ^ chk;
      s += HashSpec.RATELESS_GAMMA;
      i = HashSpec.nextRatelessIndex(i, HashSpec.mix13(s));
    } while (i < m);
  }

  /**
   * {@link #update(long, long, int)} of {@code n} elements {@code xs[i]} with check hashes {@code
   * cs[i]} and deltas {@code ds[i]}: the same symbols as the calls one by one (the sums are
   * linear), computed faster.
   *
   * <p>One element's walk is a serial chain (each index needs the one before it: a product, a
   * square root and a floor, some 40 cycles), so a loop of single updates leaves most of the core
   * idle. This walks four elements side by side, each lane refilled with the next element as its
   * walk ends, so that the core overlaps four independent chains. The lanes update the symbols one
   * after another within an iteration (symbol 0 is in every walk), in program order.
   */
  public void updateAll(long[] xs, long[] cs, byte[] ds, int n) {
    if (n < 0 || n > xs.length || n > cs.length || n > ds.length) {
      throw new IndexOutOfBoundsException("n " + n + " outside the arrays");
    }
    long[] w = this.w;
    int m = size;
    int next = 0;
    // lane state: element (masked by odd delta), check (masked), count step, stream, index;
    // index m marks an idle lane
    long x0 = 0, k0 = 0, d0 = 0, s0 = 0;
    long x1 = 0, k1 = 0, d1 = 0, s1 = 0;
    long x2 = 0, k2 = 0, d2 = 0, s2 = 0;
    long x3 = 0, k3 = 0, d3 = 0, s3 = 0;
    int i0 = m, i1 = m, i2 = m, i3 = m;
    while (true) {
      if (i0 >= m && next < n) {
        long odd = -(long) (ds[next] & 1);
        x0 = xs[next] & odd;
        k0 = cs[next] & CHECK_MASK & odd;
        d0 = (long) ds[next] << 32;
        s0 = HashSpec.ratelessStart(cs[next]);
        i0 = 0;
        next++;
      }
      if (i1 >= m && next < n) {
        long odd = -(long) (ds[next] & 1);
        x1 = xs[next] & odd;
        k1 = cs[next] & CHECK_MASK & odd;
        d1 = (long) ds[next] << 32;
        s1 = HashSpec.ratelessStart(cs[next]);
        i1 = 0;
        next++;
      }
      if (i2 >= m && next < n) {
        long odd = -(long) (ds[next] & 1);
        x2 = xs[next] & odd;
        k2 = cs[next] & CHECK_MASK & odd;
        d2 = (long) ds[next] << 32;
        s2 = HashSpec.ratelessStart(cs[next]);
        i2 = 0;
        next++;
      }
      if (i3 >= m && next < n) {
        long odd = -(long) (ds[next] & 1);
        x3 = xs[next] & odd;
        k3 = cs[next] & CHECK_MASK & odd;
        d3 = (long) ds[next] << 32;
        s3 = HashSpec.ratelessStart(cs[next]);
        i3 = 0;
        next++;
      }
      if (i0 >= m && i1 >= m && i2 >= m && i3 >= m) {
        return; // every lane idle and nothing left to start
      }
      if (i0 < m) {
        int k = i0 << 1;
        w[k] ^= x0;
        w[k + 1] = (w[k + 1] + d0) ^ k0;
        s0 += HashSpec.RATELESS_GAMMA;
        i0 = HashSpec.nextRatelessIndex(i0, HashSpec.mix13(s0));
      }
      if (i1 < m) {
        int k = i1 << 1;
        w[k] ^= x1;
        w[k + 1] = (w[k + 1] + d1) ^ k1;
        s1 += HashSpec.RATELESS_GAMMA;
        i1 = HashSpec.nextRatelessIndex(i1, HashSpec.mix13(s1));
      }
      if (i2 < m) {
        int k = i2 << 1;
        w[k] ^= x2;
        w[k + 1] = (w[k + 1] + d2) ^ k2;
        s2 += HashSpec.RATELESS_GAMMA;
        i2 = HashSpec.nextRatelessIndex(i2, HashSpec.mix13(s2));
      }
      if (i3 < m) {
        int k = i3 << 1;
        w[k] ^= x3;
        w[k + 1] = (w[k + 1] + d3) ^ k3;
        s3 += HashSpec.RATELESS_GAMMA;
        i3 = HashSpec.nextRatelessIndex(i3, HashSpec.mix13(s3));
      }
    }
  }

  /** {@code this += other}, symbol by symbol; same spec and size. */
  public void add(CodedSymbols other) {
    addRange(other, 0, size);
  }

  /** {@code this += other} for symbols {@code [from, to)} only; same spec and size. */
  public void addRange(CodedSymbols other, int from, int to) {
    requireCompatible(other);
    if (from < 0 || from > to || to > size) {
      throw new IndexOutOfBoundsException(
          "symbols [" + from + ", " + to + ") of a prefix of " + size);
    }
    long[] a = w;
    long[] b = other.w;
    for (int k = from << 1, end = to << 1; k < end; k += 2) {
      a[k] ^= b[k];
      long x = a[k + 1];
      long y = b[k + 1];
      a[k + 1] = ((x & COUNT_MASK) + (y & COUNT_MASK)) | ((x ^ y) & CHECK_MASK);
    }
  }

  /** {@code this -= other}, symbol by symbol; same spec and size. */
  public void subtract(CodedSymbols other) {
    requireCompatible(other);
    long[] a = w;
    long[] b = other.w;
    for (int k = 0; k < a.length; k += 2) {
      a[k] ^= b[k];
      long x = a[k + 1];
      long y = b[k + 1];
      a[k + 1] = ((x & COUNT_MASK) - (y & COUNT_MASK)) | ((x ^ y) & CHECK_MASK);
    }
  }

  public CodedSymbols copy() {
    CodedSymbols c = new CodedSymbols(spec, log2);
    System.arraycopy(w, 0, c.w, 0, w.length);
    return c;
  }

  public void clear() {
    Arrays.fill(w, 0L);
  }

  /** True when every symbol is zero in all three sums. */
  public boolean isEmpty() {
    for (long v : w) {
      if (v != 0) {
        return false;
      }
    }
    return true;
  }

  /** True when both prefixes have the same spec, size and symbols (counts compared exactly). */
  public boolean sameSymbols(CodedSymbols o) {
    return spec.equals(o.spec) && size == o.size && Arrays.equals(w, o.w);
  }

  /** XOR of the elements of symbol {@code i}. */
  public long elementSum(int i) {
    return w[i << 1];
  }

  /** XOR of the 32-bit check hashes of symbol {@code i}. */
  public int checkSum(int i) {
    return (int) w[(i << 1) + 1];
  }

  /** Count of symbol {@code i} (exact, modulo 2^32). */
  public int count(int i) {
    return (int) (w[(i << 1) + 1] >> 32);
  }

  /** The interleaved symbols, read by {@link PackedSymbols} and {@link RatelessDecoder}. */
  long[] words() {
    return w;
  }

  private void requireCompatible(CodedSymbols other) {
    if (size != other.size) {
      throw new IllegalArgumentException(
          "prefix size mismatch: " + size + " vs " + other.size + " symbols");
    }
    if (!spec.equals(other.spec)) {
      throw new IllegalArgumentException("hash spec mismatch: " + spec + " vs " + other.spec);
    }
  }

  @Override
  public String toString() {
    return "CodedSymbols{M=" + size + ", " + memoryBytes() + " B}";
  }
}
