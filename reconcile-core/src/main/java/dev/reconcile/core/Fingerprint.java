package dev.reconcile.core;

/**
 * Order-independent fingerprint of a partition's element multiset: the count and two sums modulo
 * 2^64, of the elements and of an independent hash of them. Equal fingerprints skip a partition at
 * O(1) cost; two different multisets collide with probability about 2^-128 (for elements that are
 * keyed hashes an outsider cannot choose).
 */
public record Fingerprint(long count, long sum, long sum2) {
  public static final Fingerprint EMPTY = new Fingerprint(0, 0, 0);

  /** Bytes of one fingerprint in a packed {@code FingerprintSet}. */
  public static final int WIRE_BYTES = 24;

  /** Mutable accumulator for the write path. */
  public static final class Accumulator {
    private final HashSpec spec;
    private long count;
    private long sum;
    private long sum2;

    public Accumulator(HashSpec spec) {
      this.spec = spec;
    }

    public void add(long element) {
      count++;
      sum += element;
      sum2 += spec.fingerprintHash(element);
    }

    public void remove(long element) {
      count--;
      sum -= element;
      sum2 -= spec.fingerprintHash(element);
    }

    public Fingerprint snapshot() {
      return new Fingerprint(count, sum, sum2);
    }

    /** Continues from {@code f}. */
    public void set(Fingerprint f) {
      count = f.count();
      sum = f.sum();
      sum2 = f.sum2();
    }

    public void reset() {
      count = 0;
      sum = 0;
      sum2 = 0;
    }
  }
}
