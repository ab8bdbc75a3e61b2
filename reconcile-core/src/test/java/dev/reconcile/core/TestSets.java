package dev.reconcile.core;

import dev.reconcile.core.wire.EstimatorParams;
import java.util.SplittableRandom;

/** Seeded random element sets with a known symmetric difference, for tests. */
public final class TestSets {
  public final long[] a;
  public final long[] b;
  public final long[] onlyA;
  public final long[] onlyB;

  private TestSets(long[] a, long[] b, long[] onlyA, long[] onlyB) {
    this.a = a;
    this.b = b;
    this.onlyA = onlyA;
    this.onlyB = onlyB;
  }

  /** {@code common} shared elements, {@code da} only in A, {@code db} only in B; all distinct. */
  public static TestSets random(long seed, int common, int da, int db) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] a = new long[common + da];
    long[] b = new long[common + db];
    long[] onlyA = new long[da];
    long[] onlyB = new long[db];
    for (int i = 0; i < common; i++) {
      long x = r.nextLong();
      a[i] = x;
      b[i] = x;
    }
    for (int i = 0; i < da; i++) {
      onlyA[i] = r.nextLong();
      a[common + i] = onlyA[i];
    }
    for (int i = 0; i < db; i++) {
      onlyB[i] = r.nextLong();
      b[common + i] = onlyB[i];
    }
    return new TestSets(a, b, onlyA, onlyB);
  }

  /** Partition of an element for tests: its top bits. */
  public static int[] partitionsOf(long[] elements, int log2) {
    int[] p = new int[elements.length];
    for (int i = 0; i < elements.length; i++) {
      p[i] = HashSpec.partition(elements[i], log2);
    }
    return p;
  }

  public static SketchParams params(
      long seed, int partitionsLog2, int maxLog2, EstimatorParams est) {
    return new SketchParams(HashSpec.xxh3(seed), partitionsLog2, 3, maxLog2, est);
  }
}
