package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store's key filter holds every key each write path stores: a local put or delete, a repair
 * batch (records or checked rows, sliced), a client's bulk load, a partition ingested as table
 * files, and the rebuild at open. Shown the way it matters: an older version of each such key,
 * applied afterwards, loses to the stored record (a key the filter denied would be taken as absent
 * and overwritten), and the self-check, which checks the filter against the records, passes.
 */
final class KeyFilterStoreTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 8);
  private static final long NOW = 1_700_000_000_000L;
  private static final long OLD = HybridClock.version(NOW - 60_000, 0);

  @TempDir Path tmp;

  private ReplicaStore open(Path dir, AtomicLong millis) {
    return ReplicaStore.open(
        Fixtures.options(dir, "receiver", PARAMS, millis).applySliceKeys(64).build());
  }

  private static List<ReplicaRecord> records(String prefix, int n, long version) {
    List<ReplicaRecord> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(ReplicaRecord.of(bytes(prefix + i), bytes("v-" + prefix + i), version, 7));
    }
    return out;
  }

  /** Each record of {@code stored} at an older version, with another value. */
  private static List<ReplicaRecord> older(List<ReplicaRecord> stored) {
    List<ReplicaRecord> out = new ArrayList<>();
    for (ReplicaRecord r : stored) {
      out.add(ReplicaRecord.of(r.key(), bytes("stale"), OLD, 9));
    }
    return out;
  }

  /** Older versions of {@code keys}' records all lose, and the stored values stay. */
  private static void olderVersionsLose(ReplicaStore s, List<byte[]> keys) {
    List<ReplicaRecord> stored = new ArrayList<>();
    for (byte[] k : keys) {
      assertThat(s.surelyLacks(k)).as("surely lacks stored %s", ReplicaRecord.hex(k, 32)).isFalse();
      stored.add(
          s.get(k).orElseThrow(() -> new AssertionError("missing " + ReplicaRecord.hex(k, 32))));
    }
    ApplyOutcome out = s.apply(older(stored));
    assertThat(out.applied()).as("older versions applied over stored keys").isZero();
    assertThat(out.stale()).isEqualTo(keys.size());
    for (ReplicaRecord r : stored) {
      assertThat(s.get(r.key())).contains(r);
    }
    assertThat(s.selfCheck().ok()).as("%s", s.selfCheck()).isTrue();
  }

  private static List<byte[]> keysOf(List<ReplicaRecord> records) {
    return records.stream().map(ReplicaRecord::key).toList();
  }

  @Test
  void everyWritePathAddsItsKeysAndTheRebuildFindsThem() {
    Path dir = tmp.resolve("store");
    AtomicLong millis = Fixtures.manualMillis(NOW);
    long recent = HybridClock.version(NOW - 1_000, 0);
    List<byte[]> all = new ArrayList<>();
    try (ReplicaStore s = open(dir, millis)) {
      // a local put and a local delete (a tombstone is a stored key too)
      List<byte[]> local = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        local.add(bytes("local-" + i));
        s.put(local.get(i), bytes("value-" + i));
      }
      s.delete(local.get(0));
      // keys longer than the rebuild's first buffer (256 bytes) and than its doubling
      for (int len : new int[] {300, 5_000, 65_536}) {
        byte[] longKey = new byte[len];
        Arrays.fill(longKey, (byte) ('a' + len % 26));
        local.add(longKey);
        s.put(longKey, bytes("long"));
      }
      // a repair batch as records, sliced (more than 64 keys), and one as checked rows
      List<ReplicaRecord> repaired = records("repair-", 300, recent);
      assertThat(s.apply(repaired).applied()).isEqualTo(300);
      List<ReplicaRecord> rows = Fixtures.partitionRecords(PARAMS, "rows-", 1, 200, recent);
      assertThat(s.applyRows(PartitionIngestTest.rows(rows)).applied()).isEqualTo(200);
      // a client's bulk load
      List<ReplicaRecord> loaded = records("load-", 300, recent);
      assertThat(s.putAll(loaded)).isEqualTo(300);
      // a partition ingested as table files
      List<ReplicaRecord> ingested = Fixtures.partitionRecords(PARAMS, "ingest-", 2, 3_000, recent);
      try (RecordStore.PartitionLoad load = s.load(2, PartitionIngest.CHUNK_RECORDS, 0)) {
        load.add(ingested);
        load.finish();
      }
      assertThat(s.stats().ingestedRecords()).isEqualTo(3_000);
      for (List<byte[]> keys :
          List.of(local, keysOf(repaired), keysOf(rows), keysOf(loaded), keysOf(ingested))) {
        olderVersionsLose(s, keys);
        all.addAll(keys);
      }
      // keys never written: the filter denies nearly all of them (about 0.03 % false positives
      // in a segment at half its capacity), and a store that keeps none or is closed says nothing
      int denied = 0;
      long deniedReads = s.stats().keyFilterDeniedReads();
      for (int i = 0; i < 1_000; i++) {
        if (s.surelyLacks(bytes("never-" + i))) {
          denied++;
          assertThat(s.get(bytes("never-" + i))).isEmpty();
        }
      }
      assertThat(denied).isGreaterThan(980);
      // each denied key counted twice (surelyLacks, then get), a stored key's read not at all
      assertThat(s.get(local.get(1))).isPresent();
      assertThat(s.stats().keyFilterDeniedReads() - deniedReads).isEqualTo(2L * denied);
      // new keys skip the read: none of them is stored
      long skipped = s.stats().keyFilterSkippedReads();
      s.apply(records("fresh-", 100, recent));
      assertThat(s.stats().keyFilterSkippedReads() - skipped).isGreaterThan(90);
      assertThat(s.stats().keyFilterBytes()).isEqualTo(KeyFilter.MIN_BLOCKS * 64L);
    }
    ReplicaStore closed;
    try (ReplicaStore s = open(dir, millis)) { // rebuilt from the digest index
      olderVersionsLose(s, all);
      assertThat(s.stats().keyFilterFalsePositives()).isZero();
      assertThat(s.surelyLacks(bytes("never-0"))).isTrue();
      closed = s;
    }
    assertThat(closed.surelyLacks(bytes("never-0"))).as("a closed store").isFalse();
    try (ReplicaStore ro =
        ReplicaStore.open(Fixtures.options(dir, null, PARAMS, millis).readOnly(true).build())) {
      assertThat(ro.surelyLacks(bytes("never-0"))).as("a read-only store").isFalse();
      assertThat(ro.get(all.get(0))).isPresent();
    }
  }

  /**
   * A purged tombstone's key stays in the filter until the next open: its read is let through and
   * counted as a false positive, and the key is rightly treated as absent.
   */
  @Test
  void aPurgedKeyIsAFalsePositiveUntilTheNextOpen() {
    Path dir = tmp.resolve("purge");
    AtomicLong millis = Fixtures.manualMillis(NOW);
    byte[] key = bytes("gone");
    try (ReplicaStore s = open(dir, millis)) {
      s.put(key, bytes("v"));
      s.delete(key);
      millis.addAndGet(s.options().tombstoneGrace().toMillis() + 1_000);
      assertThat(s.purgeTombstones(millis.get())).isEqualTo(1);
      long back = HybridClock.version(millis.get() - 10, 0);
      assertThat(s.apply(List.of(ReplicaRecord.of(key, bytes("w"), back, 3))).applied())
          .isEqualTo(1);
      assertThat(s.stats().keyFilterFalsePositives()).isEqualTo(1);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  @Test
  void aReadOnlyStoreKeepsNoFilter() {
    Path dir = tmp.resolve("ro");
    AtomicLong millis = Fixtures.manualMillis(NOW);
    try (ReplicaStore s = open(dir, millis)) {
      s.put(bytes("k"), bytes("v"));
    }
    try (ReplicaStore s =
        ReplicaStore.open(
            StoreOptions.builder(dir, PARAMS, Fixtures.ESTIMATORS)
                .readOnly(true)
                .clock(new HybridClock(millis::get))
                .build())) {
      assertThat(s.stats().keyFilterBytes()).isZero();
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }
}
