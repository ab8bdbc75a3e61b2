package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rocksdb.RocksDBException;

/**
 * A repair batch of more than {@link StoreOptions#applySliceKeys} keys is applied in slices, each
 * one atomic write batch under the writer lock: the outcome is the batch's, a client's write gets
 * the lock between two slices, and a failed slice keeps the slices before it.
 */
class ApplySliceTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 6);
  private static final int SLICE = StoreOptions.DEFAULT_APPLY_SLICE_KEYS;

  @TempDir Path dir;

  private static ReplicaStore open(Path d, AtomicLong ms, StoreHooks hooks) {
    return open(d, ms, hooks, SLICE);
  }

  private static ReplicaStore open(Path d, AtomicLong ms, StoreHooks hooks, int sliceKeys) {
    return ReplicaStore.open(
        Fixtures.options(d, "node-a", PARAMS, ms)
            .tombstoneGrace(Duration.ofMillis(50))
            .applySliceKeys(sliceKeys)
            .build(),
        hooks);
  }

  /**
   * A batch of about four slices with keys repeated within it (in different orders), stored records
   * again, newer and older versions and tombstones within and past the grace period: the store ends
   * as it ends when each key's entries are applied as a batch of their own (keys are independent
   * under the conflict rule, and a key's entries all fall in one slice), with the same counts. With
   * the default slices and with slices of 5 keys (hundreds of slices a batch).
   */
  @ParameterizedTest
  @CsvSource({"41, 256", "42, 256", "43, 5"})
  void aBatchOfManySlicesLeavesTheStoreAsItsKeysAppliedOneByOneDo(long seed, int sliceKeys) {
    AtomicLong ms = Fixtures.manualMillis(10_000);
    try (ReplicaStore sliced = open(dir.resolve("sliced"), ms, StoreHooks.DEFAULT, sliceKeys);
        ReplicaStore byKey = open(dir.resolve("by-key"), ms, StoreHooks.DEFAULT)) {
      Random r = new Random(seed);
      int keys = 3 * SLICE + 100;
      // Both stores start with the same records for a third of the keys.
      List<ReplicaRecord> stored = new ArrayList<>();
      for (int k = 0; k < keys; k += 3) {
        stored.add(record(r, k, ms.get()));
      }
      sliced.putAll(stored);
      byKey.putAll(stored);
      for (int round = 0; round < 3; round++) {
        List<ReplicaRecord> batch = new ArrayList<>();
        int n = 4 * SLICE + r.nextInt(SLICE);
        while (batch.size() < n) {
          int k = r.nextInt(keys);
          int kind = r.nextInt(10);
          if (kind < 2) {
            // Some within the grace period, some past it.
            long at = ms.get() - (r.nextBoolean() ? 10 : 5_000);
            batch.add(ReplicaRecord.tombstone(key(k), HybridClock.version(at, 0), r.nextInt(4)));
          } else if (kind < 3) {
            sliced.get(key(k)).ifPresent(batch::add); // the stored record again
          } else if (kind < 4 && !batch.isEmpty()) {
            batch.add(batch.get(r.nextInt(batch.size()))); // twice in the batch
          } else {
            batch.add(record(r, k, ms.get()));
          }
        }
        Map<ByteBuffer, List<ReplicaRecord>> groups = new LinkedHashMap<>();
        for (ReplicaRecord rec : batch) {
          groups.computeIfAbsent(ByteBuffer.wrap(rec.key()), x -> new ArrayList<>()).add(rec);
        }
        assertThat(groups.size()).as("distinct keys").isGreaterThan(2 * SLICE);
        ApplyOutcome expected = ApplyOutcome.EMPTY;
        for (List<ReplicaRecord> g : groups.values()) {
          expected = expected.plus(byKey.apply(g));
        }
        assertThat(sliced.apply(batch)).as("seed %d, round %d", seed, round).isEqualTo(expected);
        ms.addAndGet(100);
      }
      List<ReplicaRecord> a = new ArrayList<>();
      List<ReplicaRecord> b = new ArrayList<>();
      sliced.forEachRecord(a::add);
      byKey.forEachRecord(b::add);
      assertThat(a).as("seed %d", seed).isNotEmpty().isEqualTo(b);
      assertThat(sliced.recordCount()).isEqualTo(byKey.recordCount());
      for (int p = 0; p < PARAMS.partitions(); p++) {
        assertThat(sliced.sketches().fingerprint(p)).isEqualTo(byKey.sketches().fingerprint(p));
      }
      assertThat(sliced.selfCheck().ok()).as("seed %d", seed).isTrue();
      ReplicaStoreTest.assertEqualsMemorySketches(sliced, "seed " + seed);
      ReplicaStoreTest.assertIndexAgreesWithRecords(sliced, "seed " + seed);
    }
  }

  /**
   * A client's write that comes while a batch of three slices holds the lock is committed right
   * after the first slice, before the second (the lock is fair and released between slices); the
   * store reports how long it waited (here at least the 30 ms the first slice is held up).
   */
  @Test
  void aClientWriteGoesInBetweenTheSlicesOfALargeBatch() throws Exception {
    List<String> commits = new CopyOnWriteArrayList<>();
    Thread[] client = new Thread[1];
    ReplicaStore[] store = new ReplicaStore[1];
    StoreHooks hooks =
        new StoreHooks() {
          @Override
          void beforeCommit() {
            commits.add(Thread.currentThread().getName());
            if (commits.size() == 1) {
              // First slice, under the writer lock: a client writes now and must wait for it.
              client[0] =
                  startWaiting(
                      new Thread(() -> store[0].put(bytes("client"), bytes("v")), "client-write"));
            }
          }
        };
    AtomicLong ms = Fixtures.manualMillis(10_000);
    try (ReplicaStore s = open(dir, ms, hooks)) {
      store[0] = s;
      List<Long> waits = new CopyOnWriteArrayList<>();
      s.onLocalWriteLockWait(waits::add);
      Random r = new Random(7);
      List<ReplicaRecord> batch = new ArrayList<>();
      for (int k = 0; k < 3 * SLICE; k++) {
        batch.add(record(r, k, ms.get()));
      }
      String self = Thread.currentThread().getName();
      assertThat(s.apply(batch).applied()).isEqualTo(3 * SLICE);
      client[0].join();
      assertThat(commits).containsExactly(self, "client-write", self, self);
      assertThat(waits).hasSize(1);
      assertThat(waits.get(0)).isBetween(30_000_000L, 30_000_000_000L);
      assertThat(s.get(bytes("client"))).isPresent();
      assertThat(s.recordCount()).isEqualTo(3 * SLICE + 1);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  /**
   * A client's bulk load ({@link ReplicaStore#putAll}) is a client's write too: each of its slices
   * reports its wait for the writer lock, here the first one at least the 30 ms another client's
   * put holds the lock while the load waits for it.
   */
  @Test
  void aBulkLoadReportsEachSlicesWaitForTheLock() throws Exception {
    Thread[] load = new Thread[1];
    ReplicaStore[] store = new ReplicaStore[1];
    AtomicLong ms = Fixtures.manualMillis(10_000);
    Random r = new Random(11);
    List<ReplicaRecord> batch = new ArrayList<>();
    for (int k = 0; k < 3 * SLICE; k++) {
      batch.add(record(r, k, ms.get()));
    }
    long[] loaded = new long[1];
    AtomicInteger commits = new AtomicInteger();
    StoreHooks hooks =
        new StoreHooks() {
          @Override
          void beforeCommit() {
            if (commits.incrementAndGet() == 1) {
              // The put's commit, under the writer lock: the load starts now and must wait.
              load[0] =
                  startWaiting(new Thread(() -> loaded[0] = store[0].putAll(batch), "bulk-load"));
            }
          }
        };
    try (ReplicaStore s = open(dir, ms, hooks)) {
      store[0] = s;
      List<Long> waits = new CopyOnWriteArrayList<>();
      s.onLocalWriteLockWait(waits::add);
      s.put(bytes("holder"), bytes("v"));
      load[0].join();
      assertThat(loaded[0]).isEqualTo(3 * SLICE);
      // One report for the put, one for each of the load's three slices.
      assertThat(waits).hasSize(4);
      assertThat(waits.stream().filter(w -> w >= 30_000_000L))
          .as("waits %s", waits)
          .hasSize(1)
          .allMatch(w -> w < 30_000_000_000L);
      assertThat(commits.get()).isEqualTo(4);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  /**
   * The second slice's write fails (a full disk): the error says so and how much of the batch went
   * before; the first slice's keys are stored with their index and sketches, nothing of the rest;
   * the same batch applied again takes the rest and counts the first slice as duplicates.
   */
  @Test
  void aFailedSliceKeepsTheSlicesBeforeItAndSaysSo() {
    AtomicInteger commits = new AtomicInteger();
    boolean[] fail = {true};
    StoreHooks hooks =
        new StoreHooks() {
          @Override
          void beforeCommit() throws RocksDBException {
            if (commits.incrementAndGet() == 2 && fail[0]) {
              throw new RocksDBException("injected: IO error: No space left on device");
            }
          }
        };
    AtomicLong ms = Fixtures.manualMillis(10_000);
    try (ReplicaStore s = open(dir, ms, hooks)) {
      Random r = new Random(9);
      int n = 3 * SLICE - 5;
      List<ReplicaRecord> batch = new ArrayList<>();
      for (int k = 0; k < n; k++) {
        batch.add(record(r, k, ms.get()));
      }
      assertThatThrownBy(() -> s.apply(batch))
          .isInstanceOf(StoreException.class)
          .hasMessageContaining("No space left on device")
          .hasMessageContaining("store and sketches unchanged")
          .hasMessageContaining(
              "the batch's first "
                  + SLICE
                  + " of "
                  + n
                  + " keys (in row order) were applied by the write batches before");
      assertThat(s.recordCount()).isEqualTo(SLICE);
      List<ReplicaRecord> kept = new ArrayList<>();
      s.forEachRecord(kept::add);
      assertThat(kept).hasSize(SLICE).allMatch(batch::contains);
      assertThat(s.selfCheck().ok()).isTrue();
      ReplicaStoreTest.assertEqualsMemorySketches(s, "after the failed slice");
      ReplicaStoreTest.assertIndexAgreesWithRecords(s, "after the failed slice");

      fail[0] = false;
      assertThat(s.apply(batch)).isEqualTo(new ApplyOutcome(n - SLICE, 0, SLICE));
      List<ReplicaRecord> all = new ArrayList<>();
      s.forEachRecord(all::add);
      assertThat(all).hasSize(n).allMatch(batch::contains);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  /**
   * With {@code sync-writes} the slices are written unsynced and the WAL synced once at the end,
   * also when the last slice writes nothing (its keys are all stored already); a batch of one slice
   * is one synced write, and a batch that changes nothing syncs nothing.
   */
  @Test
  void withSyncWritesASlicedBatchSyncsTheWalOnceAtItsEnd() {
    AtomicInteger syncs = new AtomicInteger();
    StoreHooks hooks =
        new StoreHooks() {
          @Override
          void walSynced() {
            syncs.incrementAndGet();
          }
        };
    AtomicLong ms = Fixtures.manualMillis(10_000);
    try (ReplicaStore s =
        ReplicaStore.open(
            Fixtures.options(dir, "node-a", PARAMS, ms)
                .tombstoneGrace(Duration.ofMillis(50))
                .syncWrites(true)
                .build(),
            hooks)) {
      Random r = new Random(11);
      int n = 3 * SLICE;
      List<ReplicaRecord> batch = new ArrayList<>();
      for (int k = 0; k < n; k++) {
        batch.add(record(r, k, ms.get()));
      }
      // The keys whose rows sort last are stored already, so the last slice changes nothing.
      List<ReplicaRecord> stored = new ArrayList<>(batch);
      stored.sort((x, y) -> Arrays.compareUnsigned(row(x.key()), row(y.key())));
      s.apply(stored.subList(2 * SLICE, 2 * SLICE + SLICE / 2));
      s.apply(stored.subList(2 * SLICE + SLICE / 2, n));
      assertThat(syncs.get()).as("batches of one slice").isZero();
      assertThat(s.apply(batch)).isEqualTo(new ApplyOutcome(2 * SLICE, 0, SLICE));
      assertThat(syncs.get()).isEqualTo(1);
      assertThat(s.apply(batch)).isEqualTo(new ApplyOutcome(0, 0, n));
      assertThat(syncs.get()).as("nothing written, nothing synced").isEqualTo(1);
      List<ReplicaRecord> all = new ArrayList<>();
      s.forEachRecord(all::add);
      assertThat(all).hasSize(n).allMatch(batch::contains);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  /**
   * A stored record of the second slice is corrupt: the apply stops there with a {@link
   * StoreException.Corrupt} that names the slice applied before it, which is stored.
   */
  @Test
  void aCorruptRecordInALaterSliceIsReportedAsCorrupt() throws Exception {
    AtomicLong ms = Fixtures.manualMillis(10_000);
    int n = 20;
    List<ReplicaRecord> old = new ArrayList<>();
    Random r = new Random(13);
    for (int k = 0; k < n; k++) {
      old.add(record(r, k, ms.get() - 5_000));
    }
    try (ReplicaStore s = open(dir, ms, StoreHooks.DEFAULT, 5)) {
      s.putAll(old);
    }
    List<byte[]> rows = new ArrayList<>();
    for (ReplicaRecord rec : old) {
      rows.add(row(rec.key()));
    }
    rows.sort(Arrays::compareUnsigned);
    ReplicaStoreTest.rawUpdate(
        dir,
        "records_by_partition",
        rows.get(7), // the second slice of 5
        v -> {
          v[v.length - 1] ^= 0x01;
          return v;
        });
    List<ReplicaRecord> newer = new ArrayList<>();
    for (ReplicaRecord rec : old) {
      newer.add(ReplicaRecord.of(rec.key(), bytes("new"), HybridClock.version(ms.get(), 0), 1));
    }
    try (ReplicaStore s = open(dir, ms, StoreHooks.DEFAULT, 5)) {
      assertThatThrownBy(() -> s.apply(newer))
          .isInstanceOf(StoreException.Corrupt.class)
          .hasMessageContaining("CRC32C mismatch")
          .hasMessageContaining("the batch's first 5 of 20 keys (in row order) were applied");
      int renewed = 0;
      for (ReplicaRecord rec : old) {
        if (!Arrays.equals(row(rec.key()), rows.get(7))
            && Arrays.equals(s.get(rec.key()).orElseThrow().value(), bytes("new"))) {
          renewed++;
        }
      }
      assertThat(renewed).isEqualTo(5);
    }
  }

  /** The key's row in the records column family. */
  private static byte[] row(byte[] key) {
    return RecordKeys.of(
        HashSpec.partition(PARAMS.spec().keyHash(key), PARAMS.partitionsLog2()), key);
  }

  /**
   * Starts {@code writer}, which must block on the writer lock the caller holds, and holds the lock
   * 30 ms more once it waits; returns it.
   */
  private static Thread startWaiting(Thread writer) {
    Fixtures.startUntilWaiting(writer);
    try {
      Thread.sleep(30);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return writer;
  }

  private static byte[] key(int k) {
    return bytes("k" + k);
  }

  private static ReplicaRecord record(Random r, int k, long nowMillis) {
    byte[] value = new byte[r.nextInt(40)];
    r.nextBytes(value);
    return ReplicaRecord.of(
        key(k),
        value,
        HybridClock.version(nowMillis - r.nextInt(1000), r.nextInt(4)),
        r.nextInt(4));
  }
}
