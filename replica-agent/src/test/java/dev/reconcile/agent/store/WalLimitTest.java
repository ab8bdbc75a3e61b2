package dev.reconcile.agent.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.SketchParams;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDBException;

/**
 * {@link StoreOptions#maxWalBytes} bounds the live WAL files (RocksDB's {@code
 * max_total_wal_size}): past it RocksDB flushes the families that hold the oldest file, and the
 * file goes. Without a bound a store kept every WAL file alive, up to four times its memtables, and
 * replayed them all at a restart (docs/storage.md, "How much WAL a store keeps").
 */
class WalLimitTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 6);
  private static final long LIMIT = 4L << 20;
  private static final int BATCHES = 60; // of 100 records of 4 KiB: 24 MiB through the WAL

  @TempDir Path dir;

  private static StoreOptions.Builder options(Path d) {
    return Fixtures.options(d, "node-b", PARAMS, Fixtures.manualMillis(1_000_000));
  }

  /** Writes {@link #BATCHES} repair batches; returns the largest live WAL seen after a batch. */
  private static long fill(ReplicaStore store, Path d) throws IOException, InterruptedException {
    long most = 0;
    for (int b = 0; b < BATCHES; b++) {
      assertThat(store.apply(UnloggedRepairTest.records(b * 100, 100, b)).applied()).isEqualTo(100);
      settle(store);
      most = Math.max(most, Fixtures.walBytes(d));
    }
    return most;
  }

  /** Waits (up to 30 s) until no family has a flush pending or running. */
  private static void settle(ReplicaStore store) throws InterruptedException {
    long until = System.nanoTime() + 30_000_000_000L;
    while (System.nanoTime() < until) {
      boolean busy = store.rocksProperty("records", "rocksdb.num-running-flushes") > 0;
      for (String family : List.of("records", "digests", "meta")) {
        busy |= store.rocksProperty(family, "rocksdb.mem-table-flush-pending") > 0;
      }
      if (!busy) {
        return;
      }
      // Sleep, not spin: on two cores a spinning thread takes the CPU the flush needs.
      Thread.sleep(1);
    }
    throw new AssertionError("flushes still pending after 30 s");
  }

  @Test
  void theLiveWalStaysNearItsBoundAndNothingIsLost() throws IOException, InterruptedException {
    Path bounded = dir.resolve("bounded");
    Path unbounded = dir.resolve("default");
    long mostBounded;
    long mostDefault;
    try (ReplicaStore store = ReplicaStore.open(options(bounded).maxWalBytes(LIMIT).build())) {
      mostBounded = fill(store, bounded);
      assertThat(store.recordCount()).isEqualTo(BATCHES * 100L);
      // What the metric reports (reconcile_store_wal_bytes) is the files' bytes.
      assertThat(store.walBytes()).isPositive().isEqualTo(Fixtures.walBytes(bounded));
    }
    // The default bound (256 MiB) is far above 24 MiB: one WAL file holds every batch.
    try (ReplicaStore store = ReplicaStore.open(options(unbounded).build())) {
      mostDefault = fill(store, unbounded);
    }
    assertThat(mostDefault).as("the default's WAL").isGreaterThan(BATCHES * 100L * 4096);
    // RocksDB checks the bound at a write and lets the oldest file go when the flush it asked for
    // is done; measured once the flushes are done, the live WAL is the bound and a batch (400 KiB)
    // at most. (Batches that go on during the flushes take it further: up to 9.3 MiB here without
    // the wait.)
    assertThat(mostBounded).as("the bounded WAL, at most").isLessThan(LIMIT + (1L << 20));
    try (ReplicaStore store = ReplicaStore.open(options(bounded).maxWalBytes(LIMIT).build())) {
      assertThat(store.recordCount()).isEqualTo(BATCHES * 100L);
      assertThat(store.selfCheck().ok()).isTrue();
    }
  }

  @Test
  void theBoundReachesRocksDbAndIsValidated() throws RocksDBException {
    Path d = dir.resolve("options");
    try (ReplicaStore store = ReplicaStore.open(options(d).build())) {
      assertThat(store.recordCount()).isZero();
    }
    assertThat(Fixtures.latestDbOptions(d, DBOptions::maxTotalWalSize)).isEqualTo(256L << 20);
    assertThatThrownBy(() -> options(d).maxWalBytes(0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("max WAL bytes 0 < 1");
  }
}
