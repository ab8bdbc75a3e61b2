package dev.reconcile.agent.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DigestKeysTest {
  /**
   * {@link DigestKeys#order} lists the rows as RocksDB's bytewise order does: the rows it orders,
   * built with {@link DigestKeys#of}, equal the same rows sorted with {@code
   * Arrays.compareUnsigned}. Elements are drawn from a pool of {@code distinct} values, so that
   * small pools give runs of equal elements whose keys decide the order; keys have 0-20 bytes.
   */
  @ParameterizedTest(name = "seed {0}, {1} rows, {2} distinct elements")
  @CsvSource({
    "1, 0, 1",
    "2, 1, 1",
    "3, 2, 1",
    "4, 1000, 1000000",
    "5, 5000, 40",
    "6, 20000, 3",
    "7, 70000, 1000000"
  })
  void ordersRowsAsTheColumnFamilyDoes(long seed, int n, int distinct) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] pool = new long[distinct];
    for (int i = 0; i < distinct; i++) {
      pool[i] = r.nextLong(); // half of them with the top bit set: unsigned order matters
    }
    long[] elements = new long[n + 3]; // longer than n: the rest must be ignored
    byte[][] keys = new byte[n + 3][];
    for (int i = 0; i < elements.length; i++) {
      elements[i] = pool[r.nextInt(distinct)];
      keys[i] = new byte[r.nextInt(21)];
      r.nextBytes(keys[i]);
    }
    int partition = 0xABCD;
    byte[][] expected = new byte[n][];
    for (int i = 0; i < n; i++) {
      expected[i] = DigestKeys.of(partition, elements[i], keys[i]);
    }
    Arrays.sort(expected, Arrays::compareUnsigned);

    int[] order = DigestKeys.order(elements, keys, n);

    byte[][] actual = new byte[order.length][];
    for (int i = 0; i < order.length; i++) {
      actual[i] = DigestKeys.of(partition, elements[order[i]], keys[order[i]]);
    }
    assertThat(actual).as("seed %d", seed).isDeepEqualTo(expected);
    assertThat(Arrays.stream(order).sorted().toArray())
        .as("seed %d: each row once", seed)
        .containsExactly(java.util.stream.IntStream.range(0, n).toArray());
  }
}
