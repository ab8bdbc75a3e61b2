package dev.reconcile.core;

import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;

/**
 * {@link PartitionSketches} over element arrays held in memory: the CLI's file and directory sides,
 * replay tests and core tests. Memory is 8 bytes per element plus one estimator per partition; no
 * per-element objects. Tables are built directly at the requested shape (an O(n) pass per attempt),
 * which equals folding a maintained table (see {@code IbltTest#foldEqualsDirect}).
 *
 * <p>A partition's elements are kept in the order given and sorted only when something needs the
 * order: {@link #sortedElements} (the digest-list fallback) and single {@link #contains} lookups.
 * Fingerprints, estimators and tables do not depend on the order, and {@link #containsAll} (the
 * session's verification of a decoded difference) scans the partition once against a small hash set
 * of the queried elements: O(n + q) instead of sorting all n. A sort works on a copy that then
 * replaces the partition's array, so concurrent readers always see every element.
 */
public final class MemorySketches implements PartitionSketches {
  private final SketchParams params;
  private final long[][]
      flipped; // per partition, element ^ MIN_VALUE; sorted signed once sorted[p]
  private final boolean[] sorted;
  private final Fingerprint[] fingerprints;
  private final DifferenceEstimator[] estimators;

  private MemorySketches(SketchParams params, long[][] flipped, EstimatorFactory estimators) {
    this.params = params;
    this.flipped = flipped;
    int p = params.partitions();
    this.sorted = new boolean[p];
    this.fingerprints = new Fingerprint[p];
    this.estimators = new DifferenceEstimator[p];
    for (int i = 0; i < p; i++) {
      Fingerprint.Accumulator acc = new Fingerprint.Accumulator(params.spec());
      DifferenceEstimator est = estimators.create(params.spec());
      for (long f : flipped[i]) {
        long e = f ^ Long.MIN_VALUE;
        acc.add(e);
        est.add(e);
      }
      fingerprints[i] = acc.snapshot();
      this.estimators[i] = est;
    }
  }

  /**
   * Sketches of the given (partition, element) pairs; {@code partitionOf[i]} is element i's
   * partition.
   */
  public static MemorySketches of(
      SketchParams params, EstimatorFactory estimators, int[] partitionOf, long[] elements) {
    int p = params.partitions();
    int[] sizes = new int[p];
    for (int q : partitionOf) {
      if (q < 0 || q >= p) {
        throw new IllegalArgumentException("partition " + q + " outside [0, " + p + ")");
      }
      sizes[q]++;
    }
    long[][] flipped = new long[p][];
    for (int i = 0; i < p; i++) {
      flipped[i] = new long[sizes[i]];
    }
    int[] fill = new int[p];
    for (int i = 0; i < elements.length; i++) {
      int q = partitionOf[i];
      flipped[q][fill[q]++] = elements[i] ^ Long.MIN_VALUE;
    }
    return new MemorySketches(params, flipped, estimators);
  }

  /** Sketches of elements all in partition 0 (requires {@code partitionsLog2 == 0}). */
  public static MemorySketches ofSinglePartition(
      SketchParams params, EstimatorFactory estimators, long[] elements) {
    return of(params, estimators, new int[elements.length], elements);
  }

  @Override
  public SketchParams params() {
    return params;
  }

  @Override
  public Fingerprint fingerprint(int partition) {
    return fingerprints[partition];
  }

  @Override
  public DifferenceEstimator estimator(int partition) {
    return estimators[partition].copy();
  }

  /**
   * Inserts the partition's elements into a new table. A large partition is split in two halves
   * inserted at once into two tables, one on a thread of the common pool, which are then added
   * (tables are linear, so the sum equals the table of all elements): the session asks for tables
   * on its one thread, and this halves the wait on a machine with a core to spare. The half is a
   * task of the pool itself: {@code CompletableFuture.supplyAsync(task, commonPool())} starts a new
   * thread per task instead when the pool's parallelism is 1 (a 2-core machine), 32 threads a
   * one-shot diff of 16 partitions.
   */
  @Override
  public Iblt iblt(int partition, IbltShape shape) {
    long[] a = current(partition);
    if (a.length < PARALLEL_TABLE_ELEMENTS || Runtime.getRuntime().availableProcessors() < 2) {
      return insertAll(shape, a, 0, a.length);
    }
    int half = a.length >>> 1;
    ForkJoinTask<Iblt> upper =
        ForkJoinPool.commonPool().submit(() -> insertAll(shape, a, half, a.length));
    Iblt t = insertAll(shape, a, 0, half);
    t.add(upper.join());
    return t;
  }

  /** Partitions at least this large get their tables built on two threads. */
  static final int PARALLEL_TABLE_ELEMENTS = 1 << 14;

  private Iblt insertAll(IbltShape shape, long[] flippedElements, int from, int to) {
    Iblt t = new Iblt(params.spec(), shape, CellLayout.WIDE);
    for (int i = from; i < to; i++) {
      t.insert(flippedElements[i] ^ Long.MIN_VALUE);
    }
    return t;
  }

  @Override
  public boolean hasSymbols() {
    return params.rateless();
  }

  /** Built from the partition's elements when asked for (an O(n log M) pass), like the tables. */
  @Override
  public CodedSymbols symbols(int partition) {
    if (!params.rateless()) {
      return null;
    }
    CodedSymbols s = new CodedSymbols(params.spec(), params.ratelessLog2());
    for (long f : current(partition)) {
      s.insert(f ^ Long.MIN_VALUE);
    }
    return s;
  }

  @Override
  public boolean contains(int partition, long element) {
    return Arrays.binarySearch(sorted(partition), element ^ Long.MIN_VALUE) >= 0;
  }

  /**
   * One scan of the partition against an open-addressing table of the queried elements (linear
   * probing in a power-of-two {@code long[]} at most half full, a multiply-shift slot, and a bitmap
   * in front), unless the partition is already sorted or the queries are many (more than {@code
   * max(2^16, n / 8)}), when each query is a binary search in the sorted partition.
   */
  @Override
  public boolean[] containsAll(int partition, long[] elements) {
    boolean[] out = new boolean[elements.length];
    if (elements.length == 0) {
      return out;
    }
    long[] a = current(partition);
    if (isSorted(partition)
        || elements.length > Math.min(1 << 24, Math.max(1 << 16, a.length >>> 3))) {
      a = sorted(partition);
      for (int i = 0; i < elements.length; i++) {
        out[i] = Arrays.binarySearch(a, elements[i] ^ Long.MIN_VALUE) >= 0;
      }
      return out;
    }
    int bits = 65 - Long.numberOfLeadingZeros(elements.length); // capacity >= 2 x queries
    int mask = (1 << bits) - 1;
    long[] keys = new long[1 << bits];
    boolean[] used = new boolean[1 << bits];
    boolean[] found = new boolean[1 << bits];
    // A bitmap of at least 64 bits per query, indexed by the slot hash's next bits: most elements
    // of the partition are not queried and are turned away by one bit test that rarely mispredicts.
    int filterBits = bits + 5;
    long[] filter = new long[1 << (filterBits - 6)];
    for (long x : elements) {
      long f = x ^ Long.MIN_VALUE;
      int i = slot(f, bits);
      int h = slot(f, filterBits);
      filter[h >>> 6] |= 1L << h;
      while (used[i] && keys[i] != f) {
        i = (i + 1) & mask;
      }
      used[i] = true;
      keys[i] = f;
    }
    for (long f : a) {
      int h = slot(f, filterBits);
      if ((filter[h >>> 6] & (1L << h)) == 0) {
        continue;
      }
      int i = slot(f, bits);
      while (used[i]) {
        if (keys[i] == f) {
          found[i] = true;
          break;
        }
        i = (i + 1) & mask;
      }
    }
    for (int j = 0; j < elements.length; j++) {
      long f = elements[j] ^ Long.MIN_VALUE;
      int i = slot(f, bits);
      while (!used[i] || keys[i] != f) {
        i = (i + 1) & mask;
      }
      out[j] = found[i];
    }
    return out;
  }

  private static int slot(long f, int bits) {
    return (int) ((f * 0x9E37_79B9_7F4A_7C15L) >>> (64 - bits));
  }

  @Override
  public ElementCursor sortedElements(int partition) {
    return ElementCursor.ofFlipped(sorted(partition));
  }

  private synchronized long[] current(int partition) {
    return flipped[partition];
  }

  private synchronized boolean isSorted(int partition) {
    return sorted[partition];
  }

  /** The partition's array in order, sorted (as a copy that replaces it) on the first call. */
  private synchronized long[] sorted(int partition) {
    if (!sorted[partition]) {
      long[] a = flipped[partition].clone();
      Arrays.sort(a);
      flipped[partition] = a;
      sorted[partition] = true;
    }
    return flipped[partition];
  }

  public int size(int partition) {
    return current(partition).length;
  }
}
