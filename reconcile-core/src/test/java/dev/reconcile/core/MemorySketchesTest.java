package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link MemorySketches} keeps partitions unsorted until an order is needed: lookups (one at a
 * time, and many at once by a scan) agree with a hash set before and after the lazy sort, and the
 * sorted cursor lists every element of the partition in unsigned order.
 */
class MemorySketchesTest {
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void lookupsAgreeWithAHashSetBeforeAndAfterSorting(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int log2 = 2;
    SketchParams params =
        new SketchParams(HashSpec.xxh3(seed), log2, 3, 10, ExactEstimator.factory(1.0).params());
    int n = 20_000;
    long[] elements = new long[n];
    int[] part = new int[n];
    for (int i = 0; i < n; i++) {
      // Edge values too: 0, MIN_VALUE, -1, which the flipped layout and the tables must handle.
      long e = i < 3 ? new long[] {0, Long.MIN_VALUE, -1}[i] : r.nextLong();
      elements[i] = e;
      part[i] = HashSpec.partitionOfElement(e, log2);
    }
    MemorySketches m = MemorySketches.of(params, ExactEstimator.factory(1.0), part, elements);
    List<Set<Long>> truth = new ArrayList<>();
    for (int p = 0; p < 1 << log2; p++) {
      truth.add(new HashSet<>());
    }
    for (int i = 0; i < n; i++) {
      truth.get(part[i]).add(elements[i]);
    }
    for (int p = 0; p < truth.size(); p++) {
      // Queries: members, non-members, duplicates, elements of other partitions.
      long[] q = new long[300];
      for (int i = 0; i < q.length; i++) {
        int kind = r.nextInt(4);
        q[i] =
            kind == 0
                ? elements[r.nextInt(n)]
                : kind == 1 ? r.nextLong() : kind == 2 && i > 0 ? q[i - 1] : elements[i % 3];
      }
      boolean[] scanned = m.containsAll(p, q); // unsorted: the scan
      for (int i = 0; i < q.length; i++) {
        assertThat(scanned[i])
            .as("seed %d partition %d query %d", seed, p, q[i])
            .isEqualTo(truth.get(p).contains(q[i]));
      }
      // A single lookup sorts the partition; both lookups still agree afterwards.
      for (long x : q) {
        assertThat(m.contains(p, x)).as("seed %d", seed).isEqualTo(truth.get(p).contains(x));
      }
      assertThat(m.containsAll(p, q)).isEqualTo(scanned);
      long[] listed = new long[m.size(p)];
      int c = 0;
      try (ElementCursor cur = m.sortedElements(p)) {
        while (cur.next()) {
          listed[c++] = cur.element();
        }
      }
      long[] want = truth.get(p).stream().mapToLong(Long::longValue).toArray();
      for (int i = 0; i < want.length; i++) {
        want[i] ^= Long.MIN_VALUE;
      }
      Arrays.sort(want);
      for (int i = 0; i < want.length; i++) {
        want[i] ^= Long.MIN_VALUE;
      }
      assertThat(listed).as("seed %d partition %d", seed, p).isEqualTo(want);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 100_000})
  void manyQueriesSortThePartitionAndStillAgree(int extra) {
    long seed = 9L + extra;
    SplittableRandom r = new SplittableRandom(seed);
    SketchParams params =
        new SketchParams(HashSpec.xxh3(1), 0, 3, 10, ExactEstimator.factory(1.0).params());
    long[] elements = r.longs(1000).toArray();
    MemorySketches m =
        MemorySketches.ofSinglePartition(params, ExactEstimator.factory(1.0), elements);
    long[] q = new long[70_000 + extra];
    for (int i = 0; i < q.length; i++) {
      q[i] = i % 2 == 0 ? elements[r.nextInt(elements.length)] : r.nextLong();
    }
    Set<Long> truth = new HashSet<>();
    for (long e : elements) {
      truth.add(e);
    }
    boolean[] got = m.containsAll(0, q);
    for (int i = 0; i < q.length; i++) {
      assertThat(got[i]).as("seed %d query %d", seed, i).isEqualTo(truth.contains(q[i]));
    }
  }

  /** A large partition's table, built in two halves on two threads, is the table of all. */
  @ParameterizedTest
  @ValueSource(ints = {MemorySketches.PARALLEL_TABLE_ELEMENTS - 1, 200_001})
  void largePartitionTableEqualsOneThreadInsertion(int n) {
    long seed = 40L + n;
    SplittableRandom r = new SplittableRandom(seed);
    SketchParams params =
        new SketchParams(HashSpec.xxh3(seed), 0, 3, 16, ExactEstimator.factory(1.0).params());
    long[] elements = r.longs(n).toArray();
    MemorySketches m =
        MemorySketches.ofSinglePartition(params, ExactEstimator.factory(1.0), elements);
    IbltShape shape = params.maxShape();
    Iblt want = new Iblt(params.spec(), shape, CellLayout.WIDE);
    for (long e : elements) {
      want.insert(e);
    }
    Iblt got = m.iblt(0, shape);
    assertThat(Wire.toProto(got)).as("seed %d", seed).isEqualTo(Wire.toProto(want));
    got.subtract(want);
    assertThat(got.isEmpty()).isTrue();
  }

  /**
   * The second half's insertion runs on the common pool's threads, not on a new thread per table:
   * {@code CompletableFuture.supplyAsync(task, commonPool())} started one per task where the pool's
   * parallelism is 1 (2-core machines, such as CI's).
   */
  @Test
  void largePartitionTablesStartNoThreadPerTable() {
    long seed = 77;
    SketchParams params =
        new SketchParams(HashSpec.xxh3(seed), 0, 3, 10, ExactEstimator.factory(1.0).params());
    long[] elements =
        new SplittableRandom(seed).longs(MemorySketches.PARALLEL_TABLE_ELEMENTS).toArray();
    MemorySketches m =
        MemorySketches.ofSinglePartition(params, ExactEstimator.factory(1.0), elements);
    IbltShape shape = IbltShape.atLeast(3, 64);
    Iblt first = m.iblt(0, shape); // the pool's workers start here if they have not yet
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long before = threads.getTotalStartedThreadCount();
    int tables = 40;
    for (int i = 0; i < tables; i++) {
      Iblt t = m.iblt(0, shape);
      t.subtract(first);
      assertThat(t.isEmpty()).as("table %d", i).isTrue();
    }
    assertThat(threads.getTotalStartedThreadCount() - before)
        .as("threads started for %d tables", tables)
        .isLessThan(tables / 4);
  }
}
