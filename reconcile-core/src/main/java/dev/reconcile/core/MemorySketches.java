package dev.reconcile.core;

import java.util.Arrays;

/**
 * {@link PartitionSketches} over element arrays held in memory: the CLI's file and directory sides,
 * replay tests and core tests. Memory is 8 bytes per element plus one estimator per partition; no
 * per-element objects. Tables are built directly at the requested shape (an O(n) pass per attempt),
 * which equals folding a maintained table (see {@code IbltTest#foldEqualsDirect}).
 */
public final class MemorySketches implements PartitionSketches {
  private final SketchParams params;
  private final long[][] flipped; // per partition, element ^ MIN_VALUE, sorted signed
  private final Fingerprint[] fingerprints;
  private final DifferenceEstimator[] estimators;

  private MemorySketches(SketchParams params, long[][] flipped, EstimatorFactory estimators) {
    this.params = params;
    this.flipped = flipped;
    int p = params.partitions();
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
    for (long[] a : flipped) {
      Arrays.sort(a);
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

  @Override
  public Iblt iblt(int partition, IbltShape shape) {
    Iblt t = new Iblt(params.spec(), shape, CellLayout.WIDE);
    for (long f : flipped[partition]) {
      t.insert(f ^ Long.MIN_VALUE);
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
    for (long f : flipped[partition]) {
      s.insert(f ^ Long.MIN_VALUE);
    }
    return s;
  }

  @Override
  public boolean contains(int partition, long element) {
    return Arrays.binarySearch(flipped[partition], element ^ Long.MIN_VALUE) >= 0;
  }

  @Override
  public ElementCursor sortedElements(int partition) {
    return ElementCursor.ofFlipped(flipped[partition]);
  }

  public int size(int partition) {
    return flipped[partition].length;
  }
}
