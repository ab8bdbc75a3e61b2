package dev.reconcile.agent.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.SketchParams;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * {@link IndexWalk} against a model of the index: digest rows written directly (several keys per
 * element, elements at both ends of the unsigned order, rows of the neighbouring partitions), then
 * walked in both modes with dense, sparse and repeated element lists, in memtables and in table
 * files.
 */
class IndexWalkTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 12);
  private static final int PARTITION = 2;

  @TempDir Path dir;

  /** Rows of one partition: element (unsigned order) to its keys. */
  private final TreeMap<Long, List<byte[]>> model = new TreeMap<>(Long::compareUnsigned);

  @Test
  void denseAndSparseWalksFindExactlyTheModelsKeysInMemtableAndFiles() throws Exception {
    long seed = 0x1d3a_0001L;
    StoreDb s =
        StoreDb.open(
            Fixtures.options(dir, "n", PARAMS, Fixtures.manualMillis(1)).build(),
            StoreHooks.DEFAULT);
    try {
      SplittableRandom rnd = new SplittableRandom(seed);
      write(s, rnd, 20_000);
      checkWalks(s, new SplittableRandom(seed + 1), seed, "memtable");
      s.db.flush(new org.rocksdb.FlushOptions().setWaitForFlush(true), s.digests);
      write(s, rnd, 5_000); // a second layer: a memtable over a table file
      checkWalks(s, new SplittableRandom(seed + 2), seed, "memtable over a file");
    } finally {
      s.closeNatives();
    }
  }

  @Test
  void aDenseWalkMostlyStepsAndSeeksOnlyPastFarElements() throws Exception {
    StoreDb s =
        StoreDb.open(
            Fixtures.options(dir, "n", PARAMS, Fixtures.manualMillis(1)).build(),
            StoreHooks.DEFAULT);
    try {
      write(s, new SplittableRandom(7), 10_000);
      long[] all = model.keySet().stream().mapToLong(Long::longValue).toArray();
      long[] half = new long[all.length / 2];
      for (int i = 0; i < half.length; i++) {
        half[i] = all[2 * i];
      }
      try (IndexWalk walk = new IndexWalk(s, PARTITION, null, true)) {
        for (long e : half) {
          assertThat(walk.moveTo(e)).isTrue();
        }
        // every other element: a step or two each, one seek to start
        assertThat(walk.seeks()).isEqualTo(1);
      }
      try (IndexWalk walk = new IndexWalk(s, PARTITION, null, false)) {
        for (long e : half) {
          assertThat(walk.moveTo(e)).isTrue();
        }
        assertThat(walk.seeks())
            .as("sparse mode: one filtered seek an element")
            .isEqualTo(half.length);
      }
      long[] sparse = new long[50];
      for (int i = 0; i < sparse.length; i++) {
        sparse[i] = all[i * (all.length / sparse.length)];
      }
      try (IndexWalk walk = new IndexWalk(s, PARTITION, null, true)) {
        for (long e : sparse) {
          assertThat(walk.moveTo(e)).isTrue();
        }
        assertThat(walk.seeks()).isBetween(1L, (long) sparse.length);
        assertThat(walk.seeks()).isGreaterThan(sparse.length / 2);
      }
    } finally {
      s.closeNatives();
    }
  }

  /** Model rows of PARTITION, and rows of its neighbours that a walk must never return. */
  private void write(StoreDb s, SplittableRandom rnd, int elements) throws Exception {
    try (WriteBatch b = new WriteBatch();
        WriteOptions wo = new WriteOptions()) {
      for (int i = 0; i < elements; i++) {
        long e = i < 4 ? new long[] {0, -1, Long.MIN_VALUE, Long.MAX_VALUE}[i] : rnd.nextLong();
        int keys = rnd.nextInt(10) == 0 ? 2 + rnd.nextInt(3) : 1;
        for (int k = 0; k < keys; k++) {
          byte[] key = new byte[1 + rnd.nextInt(40)];
          rnd.nextBytes(key);
          b.put(s.digests, DigestKeys.of(PARTITION, e, key), StoreDb.EMPTY);
          model.computeIfAbsent(e, x -> new ArrayList<>()).add(key);
          b.put(s.digests, DigestKeys.of(PARTITION - 1, e, key), StoreDb.EMPTY);
          b.put(s.digests, DigestKeys.of(PARTITION + 1, e, key), StoreDb.EMPTY);
        }
      }
      s.db.write(wo, b);
    }
  }

  private void checkWalks(StoreDb s, SplittableRandom rnd, long seed, String where)
      throws Exception {
    for (boolean dense : new boolean[] {true, false}) {
      checkWalks(s, rnd, seed, where + (dense ? ", dense" : ", sparse"), dense);
    }
  }

  private void checkWalks(StoreDb s, SplittableRandom rnd, long seed, String where, boolean dense)
      throws Exception {
    long[] present = model.keySet().stream().mapToLong(Long::longValue).toArray();
    for (double density : new double[] {1.0, 0.5, 0.05, 0.001}) {
      List<Long> list = new ArrayList<>();
      for (long e : present) {
        if (rnd.nextDouble() < density) {
          list.add(e);
          if (rnd.nextInt(20) == 0) {
            list.add(e); // repeated: found once
          }
        }
      }
      for (int i = 0; i < 100; i++) {
        list.add(rnd.nextLong()); // absent (a 64-bit collision with the model is not expected)
      }
      long[] elements = list.stream().mapToLong(Long::longValue).toArray();
      shuffle(elements, rnd);
      int[] order = DigestKeys.orderByElement(elements);
      List<String> got = new ArrayList<>();
      List<String> want = new ArrayList<>();
      try (IndexWalk walk = new IndexWalk(s, PARTITION, null, dense)) {
        long previous = 0;
        for (int j = 0; j < order.length; j++) {
          long e = elements[order[j]];
          if (j > 0) {
            assertThat(Long.compareUnsigned(previous, e)).isLessThanOrEqualTo(0);
          }
          boolean found = walk.moveTo(e);
          boolean repeat = j > 0 && e == previous;
          assertThat(found)
              .as("seed %d, %s, density %s, element %d", seed, where, density, e)
              .isEqualTo(!repeat && model.containsKey(e));
          while (walk.at(e)) {
            got.add(e + ":" + Arrays.toString(walk.takeKey()));
          }
          if (!repeat && model.containsKey(e)) {
            for (byte[] k : model.get(e)) {
              want.add(e + ":" + Arrays.toString(k));
            }
          }
          previous = e;
        }
        walk.status();
      }
      assertThat(got)
          .as("seed %d, %s, density %s", seed, where, density)
          .containsExactlyInAnyOrderElementsOf(want);
    }
  }

  private static void shuffle(long[] a, SplittableRandom rnd) {
    for (int i = a.length - 1; i > 0; i--) {
      int j = rnd.nextInt(i + 1);
      long t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
  }
}
