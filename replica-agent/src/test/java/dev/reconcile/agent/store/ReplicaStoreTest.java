package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static dev.reconcile.agent.store.Fixtures.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.CodedSymbols;
import dev.reconcile.core.ElementCursor;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.MemorySketches;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RowBatches;
import dev.reconcile.core.SketchParams;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

class ReplicaStoreTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 6);
  private static final int SCALE = Integer.getInteger("reconcile.trials.scale", 1);

  @TempDir Path dir;

  private ReplicaStore open(AtomicLong ms) {
    return ReplicaStore.open(
        Fixtures.options(dir, "node-a", PARAMS, ms).tombstoneGrace(Duration.ofMillis(50)).build());
  }

  /**
   * The listed-read rule scans from the crossings measured for it (benchmarks.md, section 3, "stop
   * 43"): 1/16 of the partition for stored records up to 128 bytes, about 1/10 for 1 093 (where a
   * whole stream crossed), 1/8 for 1 536, never past 1 536 (at 2 139 a scan no longer paid) nor
   * when the size is unknown.
   */
  @Test
  void listedRecordsAreScannedFromTheMeasuredCrossings() {
    long n = 168_000;
    assertThat(ReplicaStore.listedByScan(n / 16, n, 100)).isTrue();
    assertThat(ReplicaStore.listedByScan(n / 16 - 1, n, 100)).isFalse();
    assertThat(ReplicaStore.listedByScan(n / 15, n, 136)).isTrue();
    assertThat(ReplicaStore.listedByScan(n / 17, n, 136)).isFalse();
    assertThat(ReplicaStore.listedByScan(n / 9, n, 1093)).isTrue();
    assertThat(ReplicaStore.listedByScan(n / 11, n, 1093)).isFalse();
    assertThat(ReplicaStore.listedByScan(n / 8, n, ReplicaStore.SCAN_RECORD_BYTES)).isTrue();
    assertThat(ReplicaStore.listedByScan(n / 9, n, ReplicaStore.SCAN_RECORD_BYTES)).isFalse();
    assertThat(ReplicaStore.listedByScan(n, n, ReplicaStore.SCAN_RECORD_BYTES + 1)).isFalse();
    assertThat(ReplicaStore.listedByScan(n / 2, n, 2139)).isFalse();
    assertThat(ReplicaStore.listedByScan(n, n, Long.MAX_VALUE)).isFalse();
    // An empty partition: nothing to skip.
    assertThat(ReplicaStore.listedByScan(1, 0, 100)).isTrue();
  }

  /**
   * The listed-read rule's average stored record is the records' bytes, whether they are still in
   * the memtable or flushed to table files: not the memory the memtable took, which made a fresh
   * store of 1 000 records of 100 B average 2 392 bytes until stop 44 and read even half of a
   * partition by lookups. So such a store reads a dense list by one scan, and one of 16 KiB values
   * by lookups.
   */
  @Test
  void theAverageRecordIsItsBytesInTheMemtableAndInTableFiles() {
    for (int valueBytes : new int[] {100, 2000, 16384}) {
      Path d = dir.resolve("values-" + valueBytes);
      long stored = 2L + "key-0000".length() + 30 + valueBytes; // row key, header, value, CRC
      Random rnd = new Random(valueBytes);
      for (boolean reopened : new boolean[] {false, true}) {
        try (ReplicaStore s =
            ReplicaStore.open(
                Fixtures.options(d, "node-a", PARAMS, Fixtures.manualMillis(1_000)).build())) {
          if (!reopened) {
            for (int k = 0; k < 1_000; k++) {
              byte[] v = new byte[valueBytes];
              rnd.nextBytes(v);
              s.put(bytes(String.format("key-%04d", k)), v);
            }
          }
          // Reopening replays the write-ahead log into level-0 table files.
          assertThat(s.rocksProperty("records", "rocksdb.num-entries-active-mem-table"))
              .as("values of %d B, reopened %s", valueBytes, reopened)
              .isEqualTo(reopened ? 0 : 1_000);
          assertThat(s.averageRecordBytes())
              .as("values of %d B (stored %d B), reopened %s", valueBytes, stored, reopened)
              .isBetween(stored * 9 / 10, stored * 5 / 4 + 16);
          int p = 1;
          long[] elements = drain(s.sketches().sortedElements(p));
          long[] half = new long[elements.length / 2];
          for (int i = 0; i < half.length; i++) {
            half[i] = elements[2 * i];
          }
          try (RecordStore.PartitionScan scan = s.scanListed(p, half)) {
            assertThat(scan.ranged())
                .as("values of %d B, reopened %s", valueBytes, reopened)
                .isEqualTo(valueBytes <= 1000);
            assertThat(scan.storedRows()).isEqualTo(valueBytes == 2000);
          }
        }
      }
    }
  }

  /**
   * A partition scan is one range of the records column family: exactly the partition's records,
   * each once, in key order, at the snapshot of its opening, in batches within the limits.
   */
  @Test
  void aPartitionScanListsItsPartitionsRecordsInKeyOrderAtOneSnapshot() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    HashSpec spec = PARAMS.spec();
    try (ReplicaStore s = open(ms)) {
      for (int k = 0; k < 600; k++) {
        s.put(bytes("key-" + k), new byte[k % 3 == 0 ? 2000 : 10]);
      }
      for (int k = 0; k < 600; k += 7) {
        s.delete(bytes("key-" + k));
      }
      Map<Integer, List<ReplicaRecord>> expected = new HashMap<>();
      s.forEachRecord(
          r ->
              expected
                  .computeIfAbsent(
                      HashSpec.partition(spec.keyHash(r.key()), PARAMS.partitionsLog2()),
                      p -> new ArrayList<>())
                  .add(r));
      int total = 0;
      for (int p = 0; p < PARAMS.partitions(); p++) {
        List<ReplicaRecord> scanned = new ArrayList<>();
        try (RecordStore.PartitionScan scan = s.scan(p, null)) {
          // Written into this partition after the scan opened: not in it.
          s.put(keyIn(p, "late-" + p + "-"), bytes("late"));
          List<ReplicaRecord> batch;
          while (!(batch = scan.next(25, 8_000)).isEmpty()) {
            assertThat(batch.size()).isLessThanOrEqualTo(25);
            long bytes = batch.stream().mapToLong(r -> r.key().length + r.value().length).sum();
            ReplicaRecord lastRecord = batch.get(batch.size() - 1);
            long last = (long) lastRecord.key().length + lastRecord.value().length;
            assertThat(bytes - last)
                .as("only the last record passes the byte limit")
                .isLessThan(8_000);
            scanned.addAll(batch);
          }
        }
        List<ReplicaRecord> want = expected.getOrDefault(p, List.of());
        assertThat(want).as("partition %d holds records", p).isNotEmpty();
        assertThat(scanned).as("partition %d", p).containsExactlyElementsOf(want);
        for (int i = 1; i < scanned.size(); i++) {
          assertThat(Arrays.compareUnsigned(scanned.get(i - 1).key(), scanned.get(i).key()))
              .as("key order in partition %d", p)
              .isNegative();
        }
        total += scanned.size();
      }
      assertThat(total).isEqualTo(600);
    }
  }

  @Test
  void putGetDeleteWithIncreasingVersions() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s = open(ms)) {
      long v1 = s.put(bytes("k"), bytes("v1"));
      long v2 = s.put(bytes("k"), bytes("v2"));
      assertThat(v2).isGreaterThan(v1);
      assertThat(s.get(bytes("k")))
          .contains(ReplicaRecord.of(bytes("k"), bytes("v2"), v2, NodeIds.origin("node-a")));
      long v3 = s.delete(bytes("k"));
      assertThat(v3).isGreaterThan(v2);
      assertThat(s.get(bytes("k"))).contains(ReplicaRecord.tombstone(bytes("k"), v3, s.origin()));
      assertThat(s.get(bytes("absent"))).isEmpty();
      assertThat(s.recordCount()).isEqualTo(1);
      assertThat(s.stats().localWrites()).isEqualTo(3);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  @Test
  void localWriteBeatsAnAppliedFutureVersion() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s = open(ms)) {
      long future = HybridClock.version(50_000, 3);
      assertThat(
              s.apply(List.of(ReplicaRecord.of(bytes("k"), bytes("remote"), future, 42))).applied())
          .isEqualTo(1);
      long v = s.put(bytes("k"), bytes("local"));
      assertThat(v).isGreaterThan(future);
      assertThat(s.get(bytes("k")).orElseThrow().value()).isEqualTo(bytes("local"));
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {11, 12, 13})
  void randomWorkloadKeepsSketchesEqualToARebuildAndToMemorySketches(long seed) {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s = open(ms)) {
      workload(s, ms, seed, 1500 * SCALE, 200);
      SelfCheck check = s.selfCheck();
      assertThat(check.ok()).as("seed %d: %s", seed, check).isTrue();
      assertThat(check.records()).isEqualTo(s.recordCount());
      assertThat(check.indexEntries()).isEqualTo(s.recordCount());
      assertThat(check.partitions().stream().mapToLong(SelfCheck.PartitionCheck::elements).sum())
          .isEqualTo(s.recordCount());
      assertEqualsMemorySketches(s, "seed " + seed);
      assertIndexAgreesWithRecords(s, "seed " + seed);
    }
  }

  @Test
  void reopenRebuildsTheSameSketchesAndKeepsTheClockAhead() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    List<Fingerprint> fps = new ArrayList<>();
    List<Iblt> tables = new ArrayList<>();
    List<byte[]> estimators = new ArrayList<>();
    long lastVersion;
    long count;
    try (ReplicaStore s = open(ms)) {
      workload(s, ms, 21, 800, 150);
      snapshot(s.sketches(), fps, tables, estimators);
      lastVersion = s.clock().last();
      count = s.recordCount();
    }
    for (int threads = 1; threads <= 3; threads++) {
      AtomicLong earlier = Fixtures.manualMillis(10); // wall clock went backwards meanwhile
      try (ReplicaStore s =
          ReplicaStore.open(
              Fixtures.options(dir, "node-a", PARAMS, earlier).rebuildThreads(threads).build())) {
        List<Fingerprint> fps2 = new ArrayList<>();
        List<Iblt> tables2 = new ArrayList<>();
        List<byte[]> est2 = new ArrayList<>();
        snapshot(s.sketches(), fps2, tables2, est2);
        assertThat(fps2).isEqualTo(fps);
        for (int i = 0; i < tables.size(); i++) {
          assertThat(tables2.get(i).sameCells(tables.get(i))).as("table %d", i).isTrue();
          assertThat(est2.get(i)).isEqualTo(estimators.get(i));
        }
        assertThat(s.recordCount()).isEqualTo(count);
        assertThat(s.stats().recordCount()).isEqualTo(count);
        assertThat(s.stats().rebuildThreads()).isEqualTo(threads);
        assertThat(s.clock().now()).isGreaterThan(lastVersion);
      }
    }
  }

  /**
   * The rebuild at open adds each partition's elements in batches (the coded symbols walk several
   * at once): the rebuilt prefixes equal the maintained ones, with one and with several scanners.
   */
  @Test
  void reopenRebuildsTheSameCodedSymbols() {
    SketchParams rateless = PARAMS.withRatelessLog2(9);
    AtomicLong ms = Fixtures.manualMillis(1_000);
    List<CodedSymbols> before = new ArrayList<>();
    try (ReplicaStore s =
        ReplicaStore.open(Fixtures.options(dir, "node-a", rateless, ms).build())) {
      workload(s, ms, 22, 12_000, 6_000); // more than one batch of the rebuild per partition
      for (int i = 0; i < rateless.partitions(); i++) {
        before.add(s.sketches().symbols(i));
      }
    }
    for (int threads = 1; threads <= 3; threads += 2) {
      try (ReplicaStore s =
          ReplicaStore.open(
              Fixtures.options(dir, "node-a", rateless, Fixtures.manualMillis(5_000))
                  .rebuildThreads(threads)
                  .build())) {
        for (int i = 0; i < rateless.partitions(); i++) {
          assertThat(s.sketches().symbols(i).sameSymbols(before.get(i)))
              .as("partition %d, %d scanners", i, threads)
              .isTrue();
        }
        assertThat(s.selfCheck().ok()).isTrue();
      }
    }
  }

  @Test
  void reopenWithOtherParametersFailsNamingBothValues() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s = open(ms)) {
      s.put(bytes("k"), bytes("v"));
    }
    SketchParams otherPartitions = Fixtures.params(3, 6);
    assertThatThrownBy(
            () -> ReplicaStore.open(Fixtures.options(dir, "node-a", otherPartitions, ms).build()))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("created with partitions log2 2, opened with 3");
    SketchParams otherSeed =
        new SketchParams(HashSpec.xxh3(999), 2, 3, 6, Fixtures.ESTIMATORS.params());
    assertThatThrownBy(
            () -> ReplicaStore.open(Fixtures.options(dir, "node-a", otherSeed, ms).build()))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining(
            "created with seed fingerprint "
                + HashSpec.hex(PARAMS.spec().seedFingerprint())
                + ", opened with "
                + HashSpec.hex(HashSpec.xxh3(999).seedFingerprint()));
    assertThatThrownBy(() -> ReplicaStore.open(Fixtures.options(dir, "node-b", PARAMS, ms).build()))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("belongs to node id 'node-a', opened as 'node-b'");
    // The IBLT size and estimator are not pinned: they are rebuilt at open.
    try (ReplicaStore s =
        ReplicaStore.open(Fixtures.options(dir, "node-a", Fixtures.params(2, 8), ms).build())) {
      assertThat(s.selfCheck().ok()).isTrue();
      assertThat(s.get(bytes("k"))).isPresent();
    }
  }

  @Test
  void digestIndexKeepsKeysThatShareAnElement() {
    // Contrived element function that ignores the key: equal (version, origin, value) collide.
    StoreHooks collide =
        new StoreHooks() {
          @Override
          long element(HashSpec spec, long kh, long version, long origin, boolean tomb, long vh) {
            return spec.element(0, version, origin, tomb, vh);
          }
        };
    SketchParams single = Fixtures.params(0, 5);
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s =
        ReplicaStore.open(Fixtures.options(dir, "n", single, ms).build(), collide)) {
      long v = s.put(bytes("k1"), bytes("same"));
      s.apply(List.of(ReplicaRecord.of(bytes("k2"), bytes("same"), v, s.origin())));
      long e =
          single.spec().element(0, v, s.origin(), false, single.spec().valueHash(bytes("same")));
      PartitionSketches sk = s.sketches();
      assertThat(drain(sk.sortedElements(0))).containsExactly(e, e);
      assertThat(sk.contains(0, e)).isTrue();
      assertThat(s.recordsFor(0, new long[] {e}))
          .containsExactlyInAnyOrder(
              ReplicaRecord.of(bytes("k1"), bytes("same"), v, s.origin()),
              ReplicaRecord.of(bytes("k2"), bytes("same"), v, s.origin()));
      assertThat(sk.fingerprint(0).count()).isEqualTo(2);
      assertThat(s.selfCheck().ok()).isTrue();
      s.delete(bytes("k1"));
      assertThat(sk.contains(0, e)).isTrue();
      assertThat(s.recordsFor(0, new long[] {e}))
          .containsExactly(ReplicaRecord.of(bytes("k2"), bytes("same"), v, s.origin()));
      assertThat(drain(sk.sortedElements(0))).hasSize(2).containsOnlyOnce(e);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  @Test
  void failedApplyChangesNothingAndTheNextApplySucceeds() {
    boolean[] fail = {false};
    StoreHooks failing =
        new StoreHooks() {
          @Override
          void beforeCommit() throws RocksDBException {
            if (fail[0]) {
              throw new RocksDBException("injected: IO error: No space left on device");
            }
          }
        };
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s =
        ReplicaStore.open(Fixtures.options(dir, "node-a", PARAMS, ms).build(), failing)) {
      workload(s, ms, 31, 300, 60);
      List<ReplicaRecord> before = new ArrayList<>();
      s.forEachRecord(before::add);
      List<Fingerprint> fps = new ArrayList<>();
      List<Iblt> tables = new ArrayList<>();
      List<byte[]> est = new ArrayList<>();
      snapshot(s.sketches(), fps, tables, est);
      long count = s.recordCount();

      List<ReplicaRecord> batch = new ArrayList<>();
      for (int i = 0; i < 40; i++) { // new keys and overwrites of existing ones
        batch.add(
            ReplicaRecord.of(
                bytes("k" + i), bytes("repair" + i), HybridClock.version(90_000, i), 7));
      }
      fail[0] = true;
      assertThatThrownBy(() -> s.apply(batch))
          .isInstanceOf(StoreException.class)
          .hasMessageContaining("injected: IO error: No space left on device")
          .hasMessageContaining("store and sketches unchanged");
      assertThatThrownBy(() -> s.put(bytes("x"), bytes("y"))).isInstanceOf(StoreException.class);

      List<ReplicaRecord> after = new ArrayList<>();
      s.forEachRecord(after::add);
      assertThat(after).isEqualTo(before);
      assertThat(s.recordCount()).isEqualTo(count);
      List<Fingerprint> fps2 = new ArrayList<>();
      List<Iblt> tables2 = new ArrayList<>();
      List<byte[]> est2 = new ArrayList<>();
      snapshot(s.sketches(), fps2, tables2, est2);
      assertThat(fps2).isEqualTo(fps);
      for (int i = 0; i < tables.size(); i++) {
        assertThat(tables2.get(i).sameCells(tables.get(i))).isTrue();
        assertThat(est2.get(i)).isEqualTo(est.get(i));
      }
      assertThat(s.selfCheck().ok()).isTrue();

      fail[0] = false;
      assertThat(s.apply(batch).applied()).isEqualTo(40);
      assertThat(s.get(bytes("k3")).orElseThrow().value()).isEqualTo(bytes("repair3"));
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  @Test
  void corruptRecordIsDetectedNeverServedOrAppliedOver() throws Exception {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s = open(ms)) {
      s.put(bytes("good"), bytes("fine"));
      s.put(bytes("bad"), bytes("soon corrupt"));
    }
    rawUpdate(
        dir,
        "records_by_partition",
        row(bytes("bad")),
        v -> {
          v[RecordCodec.HEADER + 2] ^= 0x01; // one bit of the value
          return v;
        });
    try (ReplicaStore s = open(ms)) {
      assertThat(s.get(bytes("good"))).isPresent();
      assertThatThrownBy(() -> s.get(bytes("bad")))
          .isInstanceOf(StoreException.Corrupt.class)
          .hasMessageContaining("corrupt record for key 0x626164: CRC32C mismatch");
      ReplicaRecord incoming =
          ReplicaRecord.of(bytes("bad"), bytes("repair"), HybridClock.version(9_999, 0), 3);
      assertThatThrownBy(() -> s.apply(List.of(incoming)))
          .isInstanceOf(StoreException.Corrupt.class);
      assertThatThrownBy(() -> s.forEachRecord(r -> {})).isInstanceOf(StoreException.Corrupt.class);
      // Nor sent as a row to a peer catching up.
      assertThatThrownBy(() -> scanRows(s, RecordKeys.partition(row(bytes("bad")))))
          .isInstanceOf(StoreException.Corrupt.class)
          .hasMessageContaining("corrupt record for key 0x626164: CRC32C mismatch");
      SelfCheck check = s.selfCheck();
      assertThat(check.ok()).isFalse();
      assertThat(check.corruptRecords()).isEqualTo(1);
      assertThat(check.problems()).anyMatch(p -> p.contains("CRC32C mismatch"));
    }
    rawUpdate(
        dir,
        "records_by_partition",
        row(bytes("good")),
        v -> {
          v[0] = 7;
          return v;
        });
    try (ReplicaStore s = open(ms)) {
      assertThatThrownBy(() -> s.get(bytes("good")))
          .hasMessageContaining("unknown record format 0x07 (this build reads 0x01)");
    }
  }

  /** A record row under a partition its key does not hash to is corrupt, never served. */
  @Test
  void aRecordFiledUnderAnotherPartitionIsCorrupt() throws Exception {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s = open(ms)) {
      s.put(bytes("moved"), bytes("value"));
    }
    byte[] row = row(bytes("moved"));
    byte[] elsewhere = row.clone();
    elsewhere[1] = (byte) ((RecordKeys.partition(row) + 1) % PARAMS.partitions());
    withRawDb(
        dir,
        (db, names, handles) -> {
          ColumnFamilyHandle records =
              handles.get(names.indexOf(findName(names, "records_by_partition")));
          db.put(records, elsewhere, db.get(records, row));
          db.delete(records, row);
        });
    try (ReplicaStore s = open(ms)) {
      assertThatThrownBy(() -> s.forEachRecord(r -> {}))
          .isInstanceOf(StoreException.Corrupt.class)
          .hasMessageContaining(
              "record for key 0x6d6f766564 is stored under partition "
                  + RecordKeys.partition(elsewhere)
                  + " but its key hashes to partition "
                  + RecordKeys.partition(row));
      assertThat(s.get(bytes("moved"))).isEmpty();
      assertThatThrownBy(() -> scanRows(s, RecordKeys.partition(elsewhere)))
          .isInstanceOf(StoreException.Corrupt.class)
          .hasMessageContaining(
              "corrupt record for key 0x6d6f766564: stored under partition "
                  + RecordKeys.partition(elsewhere)
                  + " but its key hashes to partition "
                  + RecordKeys.partition(row));
      SelfCheck check = s.selfCheck();
      assertThat(check.ok()).isFalse();
      assertThat(check.corruptRecords()).isEqualTo(1);
      assertThat(check.problems()).anyMatch(p -> p.contains("has no record"));
    }
  }

  /** Every row of {@code partition} through the range scan's row path; how many. */
  private static int scanRows(ReplicaStore s, int partition) {
    int n = 0;
    try (RecordStore.PartitionScan scan = s.scan(partition, s.sketches())) {
      int got;
      do {
        got = scan.nextRows(new RowBatches.Builder(PARAMS.spec(), 64), 100, 1 << 20);
        n += got;
      } while (got > 0);
    }
    return n;
  }

  /** The first key {@code prefix + i} that falls in {@code partition} under {@link #PARAMS}. */
  static byte[] keyIn(int partition, String prefix) {
    for (int i = 0; ; i++) {
      byte[] k = bytes(prefix + i);
      if (HashSpec.partition(PARAMS.spec().keyHash(k), PARAMS.partitionsLog2()) == partition) {
        return k;
      }
    }
  }

  /** The row of {@code key} in the records column family under {@link #PARAMS}. */
  static byte[] row(byte[] key) {
    return RecordKeys.of(
        HashSpec.partition(PARAMS.spec().keyHash(key), PARAMS.partitionsLog2()), key);
  }

  static byte[] findName(List<byte[]> names, String name) {
    return names.stream()
        .filter(n -> new String(n, java.nio.charset.StandardCharsets.UTF_8).equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no column family " + name));
  }

  @Test
  void recordsForSortedElementsAndContainsAgreeWithTheRecords() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s = open(ms)) {
      workload(s, ms, 41, 600, 120);
      assertIndexAgreesWithRecords(s, "seed 41");
      // an element overwritten meanwhile is skipped
      ReplicaRecord r =
          s.get(bytes("k1"))
              .orElseGet(
                  () -> {
                    s.put(bytes("k1"), bytes("x"));
                    return s.get(bytes("k1")).orElseThrow();
                  });
      HashSpec spec = PARAMS.spec();
      long kh = spec.keyHash(r.key());
      int p = HashSpec.partition(kh, PARAMS.partitionsLog2());
      long old =
          spec.element(kh, r.version(), r.origin(), r.tombstone(), spec.valueHash(r.value()));
      assertThat(s.recordsFor(p, new long[] {old})).containsExactly(r);
      s.put(bytes("k1"), bytes("newer"));
      assertThat(s.recordsFor(p, new long[] {old})).isEmpty();
      assertThat(s.sketches().contains(p, old)).isFalse();
    }
  }

  @Test
  void readOnlyOpenReadsButNeverWrites() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    List<Fingerprint> fps = new ArrayList<>();
    try (ReplicaStore s = open(ms)) {
      workload(s, ms, 51, 300, 80);
      s.markPartitionDone("peer", 9, 1);
      snapshot(s.sketches(), fps, new ArrayList<>(), new ArrayList<>());
    }
    StoreOptions ro = StoreOptions.builder(dir, PARAMS, Fixtures.ESTIMATORS).readOnly(true).build();
    try (ReplicaStore s = ReplicaStore.open(ro)) {
      List<Fingerprint> fps2 = new ArrayList<>();
      snapshot(s.sketches(), fps2, new ArrayList<>(), new ArrayList<>());
      assertThat(fps2).isEqualTo(fps);
      assertThat(s.selfCheck().ok()).isTrue();
      assertThat(s.partitionsDone("peer", 9)).isEqualTo(bits(1));
      assertThatThrownBy(() -> s.put(bytes("k"), bytes("v")))
          .hasMessageContaining("is open read-only");
      assertThatThrownBy(() -> s.delete(bytes("k"))).hasMessageContaining("is open read-only");
      assertThatThrownBy(() -> s.apply(List.of(ReplicaRecord.of(bytes("k"), bytes("v"), 1, 1))))
          .hasMessageContaining("is open read-only");
      assertThatThrownBy(() -> s.purgeTombstones(Long.MAX_VALUE)).hasMessageContaining("read-only");
      assertThatThrownBy(() -> s.markPartitionDone("peer", 9, 2)).hasMessageContaining("read-only");
    }
    assertThatThrownBy(
            () ->
                ReplicaStore.open(
                    StoreOptions.builder(dir.resolve("nothing"), PARAMS, Fixtures.ESTIMATORS)
                        .readOnly(true)
                        .build()))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("no store at");
  }

  @Test
  void progressIsPersistedPerPeerAndRound() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s = open(ms)) {
      s.markPartitionDone("b", 1, 3);
      s.markPartitionDone("b", 1, 0);
      s.markPartitionDone("peer/with/slashes", 1, 2);
      assertThat(s.partitionsDone("b", 1)).isEqualTo(bits(0, 3));
      assertThat(s.partitionsDone("b", 2)).isEqualTo(bits());
      assertThat(s.partitionsDone("peer/with/slashes", 1)).isEqualTo(bits(2));
    }
    try (ReplicaStore s = open(ms)) {
      assertThat(s.partitionsDone("b", 1)).isEqualTo(bits(0, 3));
      s.markPartitionDone("b", 2, 1); // a new round drops the old one
      assertThat(s.partitionsDone("b", 1)).isEqualTo(bits());
      assertThat(s.partitionsDone("b", 2)).isEqualTo(bits(1));
      s.clearProgress("b");
      assertThat(s.partitionsDone("b", 2)).isEqualTo(bits());
      assertThat(s.partitionsDone("peer/with/slashes", 1)).isEqualTo(bits(2));
      assertThatThrownBy(() -> s.markPartitionDone("b", 2, 4))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void purgeRemovesOnlyTombstonesOlderThanTheGrace() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s = open(ms)) {
      for (int i = 0; i < 30; i++) {
        s.put(bytes("k" + i), bytes("v" + i));
      }
      for (int i = 0; i < 10; i++) {
        s.delete(bytes("k" + i));
      }
      ms.set(1_030);
      s.delete(bytes("k10")); // younger tombstone
      assertThat(s.purgeTombstones(1_040)).isZero(); // all within the 50 ms grace
      assertThat(s.purgeTombstones(1_060)).isEqualTo(10);
      assertThat(s.recordCount()).isEqualTo(20);
      assertThat(s.get(bytes("k0"))).isEmpty();
      assertThat(s.get(bytes("k10")).orElseThrow().tombstone()).isTrue();
      assertThat(s.selfCheck().ok()).isTrue();
      assertThat(s.purgeTombstones(1_100)).isEqualTo(1);
      assertThat(s.stats().purgedTombstones()).isEqualTo(11);
      assertEqualsMemorySketches(s, "purge");
    }
  }

  @Test
  void closeReleasesOpenCursorsAndLaterCallsFailClearly() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    ReplicaStore s = open(ms);
    s.put(bytes("a"), bytes("b"));
    ElementCursor c =
        s.sketches().sortedElements(HashSpec.partition(PARAMS.spec().keyHash(bytes("a")), 2));
    assertThat(c.next()).isTrue();
    s.close();
    assertThatThrownBy(c::next).isInstanceOf(StoreException.class).hasMessageContaining("closed");
    c.close();
    assertThatThrownBy(() -> s.get(bytes("a"))).hasMessageContaining("is closed");
    s.close(); // idempotent
  }

  @Test
  void withoutSketchesTheStoreStillWritesAndCounts() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s =
        ReplicaStore.open(
            Fixtures.options(dir, "node-a", PARAMS, ms).maintainSketches(false).build())) {
      workload(s, ms, 61, 200, 50);
      assertThatThrownBy(s::sketches).isInstanceOf(IllegalStateException.class);
    }
    try (ReplicaStore s = open(ms)) { // the index written meanwhile gives the right sketches
      assertThat(s.selfCheck().ok()).isTrue();
      assertEqualsMemorySketches(s, "after no-sketch writes");
    }
  }

  @Test
  void concurrentReadersDuringWritesSeeConsistentData() throws Exception {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s = open(ms)) {
      workload(s, ms, 71, 200, 100);
      java.util.concurrent.atomic.AtomicReference<Throwable> failure =
          new java.util.concurrent.atomic.AtomicReference<>();
      java.util.concurrent.atomic.AtomicBoolean stop =
          new java.util.concurrent.atomic.AtomicBoolean();
      List<Thread> readers = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        int id = t;
        Thread th =
            new Thread(
                () -> {
                  Random r = new Random(id);
                  try {
                    while (!stop.get()) {
                      int p = r.nextInt(PARAMS.partitions());
                      long[] els = drain(s.sketches().sortedElements(p));
                      for (int i = 1; i < els.length; i++) {
                        assertThat(Long.compareUnsigned(els[i - 1], els[i])).isLessThanOrEqualTo(0);
                      }
                      // records found by a snapshot's elements belong to the partition
                      for (ReplicaRecord rec : s.recordsFor(p, els)) {
                        long kh = s.params().spec().keyHash(rec.key());
                        assertThat(HashSpec.partition(kh, PARAMS.partitionsLog2())).isEqualTo(p);
                      }
                      s.sketches().iblt(p, PARAMS.maxShape());
                      s.sketches().fingerprint(p);
                      s.get(bytes("k" + r.nextInt(100)));
                    }
                  } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                  }
                });
        th.start();
        readers.add(th);
      }
      workload(s, ms, 72, 600, 100);
      stop.set(true);
      for (Thread th : readers) {
        th.join();
      }
      assertThat(failure.get()).as("reader failure").isNull();
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  // --------------------------------------------------------------------------------- helpers

  /**
   * Seeded mix of local puts/deletes, remote applies (older, newer, duplicate), bulk loads, purges.
   */
  static void workload(ReplicaStore s, AtomicLong ms, long seed, int ops, int keys) {
    Random r = new Random(seed);
    for (int i = 0; i < ops; i++) {
      ms.addAndGet(r.nextInt(3));
      byte[] k = bytes("k" + r.nextInt(keys));
      int op = r.nextInt(12);
      if (op < 4) {
        byte[] v = new byte[r.nextInt(20)];
        r.nextBytes(v);
        s.put(k, v);
      } else if (op < 6) {
        s.delete(k);
      } else if (op < 9) {
        List<ReplicaRecord> batch = new ArrayList<>();
        int n = 1 + r.nextInt(20);
        for (int j = 0; j < n; j++) {
          byte[] key = bytes("k" + r.nextInt(keys));
          long version =
              HybridClock.version(Math.max(1, ms.get() + r.nextInt(100) - 60), r.nextInt(4));
          long origin = r.nextInt(4);
          if (r.nextInt(5) == 0) {
            batch.add(ReplicaRecord.tombstone(key, version, origin));
          } else if (r.nextInt(6) == 0) {
            s.get(key).ifPresent(batch::add); // a duplicate of the current record
          } else {
            batch.add(ReplicaRecord.of(key, bytes("r" + r.nextInt(5)), version, origin));
          }
        }
        ApplyOutcome res = r.nextBoolean() ? s.apply(batch) : applyAsRows(s, batch);
        assertThat(res.total()).as("seed %d", seed).isEqualTo(batch.size());
      } else if (op < 10) {
        s.purgeTombstones(ms.get());
      } else if (op < 11) {
        List<ReplicaRecord> bulk = new ArrayList<>();
        for (int j = 0; j < 30; j++) {
          bulk.add(
              ReplicaRecord.of(
                  bytes("k" + r.nextInt(keys)), bytes("bulk" + j), ms.get() << 16 | j, 9));
        }
        s.putAll(bulk);
      } else if (r.nextInt(10) == 0 && s.options().maintainSketches()) {
        assertThat(s.selfCheck().ok()).as("seed %d op %d", seed, i).isTrue();
      }
    }
  }

  /**
   * {@code batch} through {@link ReplicaStore#applyRows}: its records as rows of one checked row
   * batch per partition (a batch holds one partition's), in ascending partition order.
   */
  static ApplyOutcome applyAsRows(ReplicaStore s, List<ReplicaRecord> batch) {
    SketchParams params = s.params();
    HashSpec spec = params.spec();
    Map<Integer, RowBatches.Builder> byPartition = new java.util.TreeMap<>();
    for (ReplicaRecord r : batch) {
      int p = HashSpec.partition(spec.keyHash(r.key()), params.partitionsLog2());
      byPartition.computeIfAbsent(p, q -> new RowBatches.Builder(spec, 64)).add(r);
    }
    ApplyOutcome out = ApplyOutcome.EMPTY;
    for (Map.Entry<Integer, RowBatches.Builder> e : byPartition.entrySet()) {
      out = out.plus(s.applyRows(checkedRows(params, e.getKey(), e.getValue())));
    }
    return out;
  }

  /** The rows of {@code rows}, built as batch 0 of {@code partition} and checked as a peer's. */
  static RowBatches.Rows checkedRows(SketchParams params, int partition, RowBatches.Builder rows) {
    try {
      return RowBatches.read(
          rows.build(partition, 0), 1_000_000, params.spec(), params.partitionsLog2());
    } catch (dev.reconcile.core.ProtocolException e) {
      throw new AssertionError("rows built here were refused: " + e.getMessage(), e);
    }
  }

  /**
   * Rows ({@link ReplicaStore#applyRows}: key and value hashes as checked, each row stored as it
   * came) leave a store as records do ({@link ReplicaStore#apply}): the same outcome for every
   * batch, then the same records, index and sketches. Random batches of one partition's records
   * with duplicates in the batch and of the stored record, stale and newer versions, and tombstones
   * within and past the grace period.
   */
  @ParameterizedTest
  @ValueSource(longs = {21, 22, 23})
  void applyRowsLeavesTheStoreAsApplyDoes(long seed) {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore byRecords =
            ReplicaStore.open(
                Fixtures.options(dir.resolve("records"), "node-a", PARAMS, ms)
                    .tombstoneGrace(Duration.ofMillis(50))
                    .build());
        ReplicaStore byRows =
            ReplicaStore.open(
                Fixtures.options(dir.resolve("rows"), "node-a", PARAMS, ms)
                    .tombstoneGrace(Duration.ofMillis(50))
                    .build())) {
      Random r = new Random(seed);
      HashSpec spec = PARAMS.spec();
      for (int round = 0; round < 400 * SCALE; round++) {
        ms.addAndGet(r.nextInt(3));
        int p = r.nextInt(PARAMS.partitions());
        List<ReplicaRecord> batch = new ArrayList<>();
        int n = 1 + r.nextInt(30);
        while (batch.size() < n) {
          byte[] key = bytes("k" + r.nextInt(150));
          if (HashSpec.partition(spec.keyHash(key), PARAMS.partitionsLog2()) != p) {
            continue;
          }
          long version =
              HybridClock.version(Math.max(1, ms.get() + r.nextInt(100) - 60), r.nextInt(4));
          long origin = r.nextInt(4);
          int kind = r.nextInt(10);
          if (kind < 2) {
            batch.add(ReplicaRecord.tombstone(key, version, origin));
          } else if (kind < 3) {
            byRecords.get(key).ifPresent(batch::add); // the stored record again
          } else if (kind < 4 && !batch.isEmpty()) {
            batch.add(batch.get(r.nextInt(batch.size()))); // twice in the batch
          } else {
            byte[] value = new byte[r.nextInt(40)];
            r.nextBytes(value);
            batch.add(ReplicaRecord.of(key, value, version, origin));
          }
        }
        RowBatches.Builder rows = new RowBatches.Builder(spec, 64);
        batch.forEach(rows::add);
        ApplyOutcome expected = byRecords.apply(batch);
        assertThat(byRows.applyRows(checkedRows(PARAMS, p, rows)))
            .as("seed %d, batch %d", seed, round)
            .isEqualTo(expected);
      }
      List<ReplicaRecord> recordsApplied = new ArrayList<>();
      List<ReplicaRecord> rowsApplied = new ArrayList<>();
      byRecords.forEachRecord(recordsApplied::add);
      byRows.forEachRecord(rowsApplied::add);
      assertThat(rowsApplied).as("seed %d", seed).isNotEmpty().isEqualTo(recordsApplied);
      assertThat(byRows.recordCount()).isEqualTo(byRecords.recordCount());
      for (int p = 0; p < PARAMS.partitions(); p++) {
        assertThat(byRows.sketches().fingerprint(p))
            .as("seed %d, partition %d", seed, p)
            .isEqualTo(byRecords.sketches().fingerprint(p));
      }
      assertThat(byRows.selfCheck().ok()).as("seed %d", seed).isTrue();
      assertEqualsMemorySketches(byRows, "seed " + seed);
      assertIndexAgreesWithRecords(byRows, "seed " + seed);
    }
  }

  static void snapshot(
      PartitionSketches sk, List<Fingerprint> fps, List<Iblt> tables, List<byte[]> est) {
    SketchParams p = sk.params();
    for (int i = 0; i < p.partitions(); i++) {
      fps.add(sk.fingerprint(i));
      tables.add(sk.iblt(i, p.maxShape()));
      tables.add(sk.iblt(i, p.maxShapeBase3()));
      est.add(sk.estimator(i).toProto().toByteArray());
      est.add(sk.estimator(i).toProto().toByteArray());
    }
  }

  /** The store's sketches equal MemorySketches built from the records' elements. */
  static void assertEqualsMemorySketches(ReplicaStore s, String ctx) {
    SketchParams params = s.params();
    HashSpec spec = params.spec();
    List<ReplicaRecord> all = new ArrayList<>();
    s.forEachRecord(all::add);
    int[] parts = new int[all.size()];
    long[] elements = new long[all.size()];
    for (int i = 0; i < all.size(); i++) {
      ReplicaRecord r = all.get(i);
      long kh = spec.keyHash(r.key());
      parts[i] = HashSpec.partition(kh, params.partitionsLog2());
      elements[i] =
          spec.element(kh, r.version(), r.origin(), r.tombstone(), spec.valueHash(r.value()));
    }
    MemorySketches m = MemorySketches.of(params, Fixtures.ESTIMATORS, parts, elements);
    PartitionSketches sk = s.sketches();
    List<IbltShape> shapes =
        List.of(
            params.maxShape(),
            params.maxShapeBase3(),
            new IbltShape(3, 1, 2),
            new IbltShape(3, 3, 1),
            new IbltShape(3, 1, 0));
    for (int p = 0; p < params.partitions(); p++) {
      assertThat(sk.fingerprint(p)).as("%s partition %d", ctx, p).isEqualTo(m.fingerprint(p));
      assertThat(sk.estimator(p).toProto())
          .as("%s partition %d", ctx, p)
          .isEqualTo(m.estimator(p).toProto());
      for (IbltShape shape : shapes) {
        assertThat(sk.iblt(p, shape).sameCells(m.iblt(p, shape)))
            .as("%s partition %d shape %s", ctx, p, shape)
            .isTrue();
      }
    }
  }

  /**
   * The digest index has prefix Bloom filters (StoreDb): lookups and scans agree with the records
   * whether the rows sit in the memtable, in files written with the filters, or in files written
   * without them (a store from before the filters: its digest column family compacted by a plain
   * RocksDB without the prefix extractor).
   */
  @Test
  void digestLookupsAndScansAgreeAcrossMemtableFilteredAndUnfilteredFiles() throws Exception {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    Path store = dir.resolve("prefix");
    try (ReplicaStore s =
        ReplicaStore.open(Fixtures.options(store, "node-a", PARAMS, ms).build())) {
      for (int k = 0; k < 1500; k++) {
        s.put(bytes("old-" + k), bytes("v" + k));
      }
    }
    // Rewrite the digest files as a store before the filters had them.
    withRawDb(
        store,
        (db, names, handles) -> {
          for (ColumnFamilyHandle h : handles) {
            db.compactRange(h);
          }
        });
    try (ReplicaStore s =
        ReplicaStore.open(Fixtures.options(store, "node-a", PARAMS, ms).build())) {
      assertIndexAgreesWithRecords(s, "unfiltered files");
      for (int k = 0; k < 1500; k++) {
        s.put(bytes("new-" + k), bytes("w" + k));
        if (k % 3 == 0) {
          s.put(bytes("old-" + k), bytes("rewritten"));
        }
      }
      assertIndexAgreesWithRecords(s, "unfiltered files and memtable");
    }
    // Reopening flushes the memtable into a file with the filters.
    try (ReplicaStore s =
        ReplicaStore.open(Fixtures.options(store, "node-a", PARAMS, ms).build())) {
      assertThat(s.recordCount()).isEqualTo(3000);
      assertIndexAgreesWithRecords(s, "filtered and unfiltered files");
    }
  }

  /** recordsFor, sortedElements, contains and containsAll agree with a scan of the records. */
  static void assertIndexAgreesWithRecords(ReplicaStore s, String ctx) {
    SketchParams params = s.params();
    HashSpec spec = params.spec();
    List<List<ReplicaRecord>> byPartition = new ArrayList<>();
    List<List<Long>> elems = new ArrayList<>();
    for (int p = 0; p < params.partitions(); p++) {
      byPartition.add(new ArrayList<>());
      elems.add(new ArrayList<>());
    }
    s.forEachRecord(
        r -> {
          long kh = spec.keyHash(r.key());
          int p = HashSpec.partition(kh, params.partitionsLog2());
          byPartition.get(p).add(r);
          elems
              .get(p)
              .add(
                  spec.element(
                      kh, r.version(), r.origin(), r.tombstone(), spec.valueHash(r.value())));
        });
    Random rnd = new Random(1);
    for (int p = 0; p < params.partitions(); p++) {
      long[] expected = elems.get(p).stream().mapToLong(Long::longValue).toArray();
      long[] flipped = Arrays.stream(expected).map(x -> x ^ Long.MIN_VALUE).sorted().toArray();
      long[] sortedUnsigned = Arrays.stream(flipped).map(x -> x ^ Long.MIN_VALUE).toArray();
      assertThat(drain(s.sketches().sortedElements(p)))
          .as("%s partition %d", ctx, p)
          .containsExactly(sortedUnsigned);
      for (long e : expected) {
        assertThat(s.sketches().contains(p, e)).as("%s partition %d", ctx, p).isTrue();
      }
      long[] absent = new long[20];
      for (int i = 0; i < 20; i++) {
        absent[i] = rnd.nextLong();
        assertThat(s.sketches().contains(p, absent[i])).isFalse();
      }
      long[] mixed = new long[expected.length + absent.length];
      System.arraycopy(absent, 0, mixed, 0, absent.length);
      System.arraycopy(expected, 0, mixed, absent.length, expected.length);
      boolean[] here = s.sketches().containsAll(p, mixed);
      for (int i = 0; i < mixed.length; i++) {
        assertThat(here[i]).as("%s partition %d, element %d", ctx, p, i).isEqualTo(i >= 20);
      }
      Set<ReplicaRecord> got = new HashSet<>(s.recordsFor(p, expected));
      assertThat(got).as("%s partition %d", ctx, p).isEqualTo(new HashSet<>(byPartition.get(p)));
      assertThat(s.recordsFor(p, new long[] {rnd.nextLong()})).isEmpty();
      // scanListed: every other element and absent ones (a dense list: one filtered scan), and
      // one element (a sparse list when the partition holds more than DENSE_LIST records:
      // lookups); either way exactly the records of the listed elements.
      long[] half = new long[(expected.length + 1) / 2 + absent.length];
      Set<ReplicaRecord> halfRecords = new HashSet<>();
      for (int i = 0; i < expected.length; i += 2) {
        half[i / 2] = expected[i];
        halfRecords.add(byPartition.get(p).get(i));
      }
      System.arraycopy(absent, 0, half, (expected.length + 1) / 2, absent.length);
      assertThat(drainScan(s.scanListed(p, half), 7))
          .as("%s partition %d, every other element", ctx, p)
          .containsExactlyInAnyOrderElementsOf(halfRecords);
      // The same as rows (what a repair stream sends), within each call's caps.
      assertThat(drainRows(s.scanListed(p, half), params, p, 7, 1 << 20))
          .as("%s partition %d, every other element as rows", ctx, p)
          .containsExactlyInAnyOrderElementsOf(halfRecords);
      assertThat(drainRows(s.scanListed(p, half), params, p, 1000, 1))
          .as("%s partition %d, every other element as rows, one a call", ctx, p)
          .containsExactlyInAnyOrderElementsOf(halfRecords);
      // Each path on its own, whichever the rule picks for this store: the same records.
      for (boolean byScan : new boolean[] {true, false}) {
        assertThat(drainScan(s.scanListed(p, half, byScan), 7))
            .as("%s partition %d, every other element, by scan %b", ctx, p, byScan)
            .containsExactlyInAnyOrderElementsOf(halfRecords);
        assertThat(drainRows(s.scanListed(p, half, byScan), params, p, 7, 1 << 20))
            .as("%s partition %d, every other element as rows, by scan %b", ctx, p, byScan)
            .containsExactlyInAnyOrderElementsOf(halfRecords);
        assertThat(drainRows(s.scanListed(p, half, byScan), params, p, 1000, 1))
            .as(
                "%s partition %d, every other element as rows one a call, by scan %b",
                ctx, p, byScan)
            .containsExactlyInAnyOrderElementsOf(halfRecords);
        assertThat(drainScan(s.scanListed(p, absent, byScan), 7))
            .as("%s partition %d, absent elements only, by scan %b", ctx, p, byScan)
            .isEmpty();
      }
      if (expected.length > 0) {
        assertThat(drainScan(s.scanListed(p, new long[] {expected[0]}), 7))
            .as("%s partition %d, one element", ctx, p)
            .containsExactly(byPartition.get(p).get(0));
        assertThat(s.recordsFor(p, new long[] {expected[0], expected[0]}))
            .as("%s partition %d, an element listed twice", ctx, p)
            .containsExactly(byPartition.get(p).get(0));
      }
    }
  }

  /**
   * Every record a scan returns as rows of partition {@code p} ({@link
   * RecordStore.PartitionScan#nextRows}), checked as a peer checks them; each call takes at most
   * {@code batch} records and stops once its rows reach {@code bytes}. Closes the scan.
   */
  static List<ReplicaRecord> drainRows(
      RecordStore.PartitionScan scan, SketchParams params, int p, int batch, long bytes) {
    List<ReplicaRecord> out = new ArrayList<>();
    try (scan) {
      while (true) {
        RowBatches.Builder rows = new RowBatches.Builder(params.spec(), 64);
        int n = scan.nextRows(rows, batch, bytes);
        assertThat(n).isEqualTo(rows.count()).isBetween(0, batch);
        if (n == 0) {
          return out;
        }
        if (bytes == 1) {
          assertThat(n).isEqualTo(1);
        }
        out.addAll(checkedRows(params, p, rows).records());
      }
    }
  }

  /** Every record a scan returns, {@code batch} at a most at a time; closes it. */
  static List<ReplicaRecord> drainScan(RecordStore.PartitionScan scan, int batch) {
    List<ReplicaRecord> out = new ArrayList<>();
    try (scan) {
      for (List<ReplicaRecord> b = scan.next(batch, 1 << 20);
          !b.isEmpty();
          b = scan.next(batch, 1 << 20)) {
        out.addAll(b);
      }
    }
    return out;
  }

  @Test
  void readNodeIdReadsTheMetaRowWithoutOpeningTheStore() throws Exception {
    Path store = dir.resolve("store");
    AtomicLong ms = Fixtures.manualMillis(1_000);
    try (ReplicaStore s =
        ReplicaStore.open(Fixtures.options(store, "node-a", PARAMS, ms).build())) {
      s.put(bytes("k"), bytes("v"));
      assertThat(ReplicaStore.readNodeId(store)).as("while the store is open").isEqualTo("node-a");
    }
    assertThat(ReplicaStore.readNodeId(store)).isEqualTo("node-a");
    try (ReplicaStore s =
        ReplicaStore.open(Fixtures.options(store, "node-a", PARAMS, ms).build())) {
      assertThat(s.get(bytes("k"))).isPresent();
    }

    Path empty = Files.createDirectories(dir.resolve("empty"));
    assertThatThrownBy(() -> ReplicaStore.readNodeId(empty))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("no store at " + empty.toAbsolutePath())
        .hasMessageContaining("no RocksDB CURRENT file");

    Path plain = dir.resolve("plain");
    try (Options o = new Options().setCreateIfMissing(true);
        RocksDB db = RocksDB.open(o, plain.toString())) {
      db.put(bytes("k"), bytes("v"));
    }
    assertThatThrownBy(() -> ReplicaStore.readNodeId(plain))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("without a meta column family");

    Path noNode = dir.resolve("no-node");
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions o =
            new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
        RocksDB db =
            RocksDB.open(
                o,
                noNode.toString(),
                List.of(
                    new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY),
                    new ColumnFamilyDescriptor(bytes("meta"))),
                handles)) {
      db.put(bytes("k"), bytes("v"));
      handles.forEach(ColumnFamilyHandle::close);
    }
    assertThatThrownBy(() -> ReplicaStore.readNodeId(noNode))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("has no node id");
  }

  interface Mutator {
    byte[] apply(byte[] value);
  }

  /** Rewrites one row of a stopped store with raw RocksDB (no codec): a corruption injector. */
  static void rawUpdate(Path dir, String cf, byte[] key, Mutator m) throws RocksDBException {
    withRawDb(
        dir,
        (db, names, handles) -> {
          for (int i = 0; i < names.size(); i++) {
            if (new String(names.get(i), java.nio.charset.StandardCharsets.UTF_8).equals(cf)) {
              byte[] v = db.get(handles.get(i), key);
              db.put(handles.get(i), key, m.apply(v));
            }
          }
        });
  }

  interface RawAction {
    void run(RocksDB db, List<byte[]> names, List<ColumnFamilyHandle> handles)
        throws RocksDBException;
  }

  /**
   * Opens a stopped store with raw RocksDB (default options, every column family) for {@code a}.
   */
  static void withRawDb(Path dir, RawAction a) throws RocksDBException {
    List<byte[]> names;
    try (Options o = new Options()) {
      names = RocksDB.listColumnFamilies(o, dir.toString());
    }
    List<ColumnFamilyDescriptor> descs = new ArrayList<>();
    for (byte[] n : names) {
      descs.add(new ColumnFamilyDescriptor(n));
    }
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions o = new DBOptions();
        RocksDB db = RocksDB.open(o, dir.toString(), descs, handles)) {
      try {
        a.run(db, names, handles);
      } finally {
        handles.forEach(ColumnFamilyHandle::close);
      }
    }
  }

  static BitSet bits(int... set) {
    BitSet b = new BitSet();
    for (int i : set) {
      b.set(i);
    }
    return b;
  }
}
