package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PrimitiveSortTest {
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 23, 24, 25, 100, 1000, 100_000})
  void sortUnsignedMatchesReference(int n) {
    long seed = 7L * n + 1;
    SplittableRandom r = new SplittableRandom(seed);
    long[] keys = new long[n];
    int[] idx = new int[n];
    for (int i = 0; i < n; i++) {
      // Few distinct values to exercise ties; both signs to exercise the unsigned order.
      keys[i] = r.nextInt(4) == 0 ? r.nextLong() : (r.nextInt(5) - 2) * 0x4000_0000_0000_0000L;
      idx[i] = i;
    }
    Integer[] ref = IntStream.range(0, n).boxed().toArray(Integer[]::new);
    long[] orig = keys.clone();
    Arrays.sort(
        ref,
        Comparator.<Integer>comparingLong(i -> orig[i] ^ Long.MIN_VALUE).thenComparingInt(i -> i));
    PrimitiveSort.sortUnsigned(keys, idx, n);
    for (int i = 0; i < n; i++) {
      assertThat(idx[i]).as("seed %d position %d", seed, i).isEqualTo(ref[i]);
      assertThat(keys[i]).isEqualTo(orig[idx[i]]);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 24, 25, 49, 1000, 50_000})
  void mergeSortIsStable(int n) {
    long seed = 11L * n + 3;
    SplittableRandom r = new SplittableRandom(seed);
    int[] v = new int[n];
    for (int i = 0; i < n; i++) {
      v[i] = r.nextInt(10);
    }
    int[] a = IntStream.range(0, n).toArray();
    PrimitiveSort.mergeSort(a, n, (x, y) -> Integer.compare(v[x], v[y]));
    for (int i = 1; i < n; i++) {
      boolean ordered = v[a[i - 1]] < v[a[i]] || (v[a[i - 1]] == v[a[i]] && a[i - 1] < a[i]);
      assertThat(ordered).as("seed %d position %d", seed, i).isTrue();
    }
    assertThat(Arrays.stream(a).sorted().toArray()).isEqualTo(IntStream.range(0, n).toArray());
  }
}
