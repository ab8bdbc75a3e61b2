package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static dev.reconcile.agent.store.Fixtures.columnFamilies;
import static dev.reconcile.agent.store.ReplicaStoreTest.findName;
import static dev.reconcile.agent.store.ReplicaStoreTest.withRawDb;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * Store format 1 (records keyed by the record key) to 2 (partition | key) at open: the records,
 * sketches and index come through unchanged, an interrupted migration resumes, and what cannot
 * migrate (a read-only open, other pinned parameters) fails clearly and moves nothing.
 */
class StoreFormatMigrationTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 6);

  /** More than two migration batches. */
  private static final int RECORDS = 2 * StoreFormatMigration.BATCH_ROWS + 500;

  @TempDir Path dir;

  private final AtomicLong ms = Fixtures.manualMillis(1_000);

  @Test
  void aFormat1StoreOpensAsFormat2WithTheSameRecordsAndSketches() throws Exception {
    Snapshot before = writeAndSnapshot();
    downgradeToFormat1(dir);
    assertThat(columnFamilies(dir)).contains("records").doesNotContain("records_by_partition");
    assertThat(rawFormat(dir)).isEqualTo(1);

    try (ReplicaStore s = open()) {
      assertThat(Snapshot.of(s)).isEqualTo(before);
      assertThat(s.selfCheck().ok()).isTrue();
      s.put(bytes("after"), bytes("migration"));
      assertThat(s.get(bytes("after"))).isPresent();
    }
    assertThat(columnFamilies(dir)).contains("records_by_partition").doesNotContain("records");
    assertThat(rawFormat(dir)).isEqualTo(ReplicaStore.STORE_FORMAT);
    try (ReplicaStore s = open()) {
      assertThat(s.recordCount()).isEqualTo(RECORDS + 1);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  @Test
  void anInterruptedMigrationLeavesEachRecordInOneFamilyAndResumes() throws Exception {
    Snapshot before = writeAndSnapshot();
    downgradeToFormat1(dir);
    int[] batches = {0};
    StoreHooks failSecondBatch =
        new StoreHooks() {
          @Override
          void beforeMigrationBatch() throws RocksDBException {
            if (++batches[0] == 2) {
              throw new RocksDBException("injected crash during the migration");
            }
          }
        };
    assertThatThrownBy(() -> ReplicaStore.open(options().build(), failSecondBatch))
        .hasMessageContaining("injected crash during the migration");

    // One batch moved, atomically: every record in exactly one of the two families.
    long[] rows = new long[2];
    withRawDb(
        dir,
        (db, names, handles) -> {
          rows[0] = count(db, handles.get(names.indexOf(findName(names, "records"))));
          rows[1] = count(db, handles.get(names.indexOf(findName(names, "records_by_partition"))));
        });
    assertThat(rows[1]).isEqualTo(StoreFormatMigration.BATCH_ROWS);
    assertThat(rows[0] + rows[1]).isEqualTo(RECORDS);
    assertThat(rawFormat(dir)).isEqualTo(1);

    try (ReplicaStore s = open()) {
      assertThat(Snapshot.of(s)).isEqualTo(before);
      assertThat(s.selfCheck().ok()).isTrue();
    }
    assertThat(columnFamilies(dir)).doesNotContain("records");
  }

  @Test
  void aReadOnlyOpenOfAFormat1StoreFailsClearlyAndAWritableOneMigrates() throws Exception {
    Snapshot before = writeAndSnapshot();
    downgradeToFormat1(dir);
    assertThatThrownBy(() -> ReplicaStore.open(options().readOnly(true).build()))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("has store format 1, which a read-only open cannot migrate")
        .hasMessageContaining("open it writable once");
    try (ReplicaStore s = open()) {
      assertThat(Snapshot.of(s)).isEqualTo(before);
    }
  }

  @Test
  void aFormat1StoreWithOtherPinnedParametersIsRefusedUnmigrated() throws Exception {
    writeAndSnapshot();
    downgradeToFormat1(dir);
    SketchParams other = Fixtures.params(3, 6);
    assertThatThrownBy(() -> ReplicaStore.open(Fixtures.options(dir, "node-a", other, ms).build()))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("was created with partitions log2 2, opened with 3");
    long[] left = new long[1];
    withRawDb(
        dir,
        (db, names, handles) ->
            left[0] = count(db, handles.get(names.indexOf(findName(names, "records")))));
    assertThat(left[0]).as("nothing moved").isEqualTo(RECORDS);
    assertThat(rawFormat(dir)).isEqualTo(1);
  }

  // ------------------------------------------------------------------------------------- helpers

  private StoreOptions.Builder options() {
    return Fixtures.options(dir, "node-a", PARAMS, ms);
  }

  private ReplicaStore open() {
    return ReplicaStore.open(options().build());
  }

  /** Writes records (local puts, deletes, applied batches), returns what a reader sees. */
  private Snapshot writeAndSnapshot() {
    try (ReplicaStore s = open()) {
      List<ReplicaRecord> batch = new ArrayList<>();
      for (int k = 0; k < RECORDS; k++) {
        if (k % 10 == 0) {
          s.put(bytes("local-" + k), bytes("v" + k));
        } else {
          batch.add(ReplicaRecord.of(bytes("remote-" + k), bytes("w" + k), 1L << 20 | k, 7));
        }
        if (batch.size() == 1000) {
          s.apply(batch);
          batch.clear();
        }
      }
      s.apply(batch);
      for (int k = 0; k < RECORDS; k += 50) {
        s.delete(bytes("local-" + k));
      }
      assertThat(s.recordCount()).isEqualTo(RECORDS);
      return Snapshot.of(s);
    }
  }

  /** Every record, and each partition's fingerprint, of an open store. */
  record Snapshot(List<ReplicaRecord> records, List<Fingerprint> fingerprints) {
    static Snapshot of(ReplicaStore s) {
      List<ReplicaRecord> records = new ArrayList<>();
      s.forEachRecord(records::add);
      records.sort((a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
      List<Fingerprint> fps = new ArrayList<>();
      for (int p = 0; p < s.params().partitions(); p++) {
        fps.add(s.sketches().fingerprint(p));
      }
      return new Snapshot(List.copyOf(records), List.copyOf(fps));
    }
  }

  /** Rewrites a closed format-2 store as format 1 wrote it: records by key, no format-2 family. */
  static void downgradeToFormat1(Path dir) throws RocksDBException {
    withRawDb(
        dir,
        (db, names, handles) -> {
          ColumnFamilyHandle v2 =
              handles.get(names.indexOf(findName(names, "records_by_partition")));
          ColumnFamilyHandle meta = handles.get(names.indexOf(findName(names, "meta")));
          try (ColumnFamilyHandle v1 =
                  db.createColumnFamily(new ColumnFamilyDescriptor(bytes("records")));
              WriteBatch b = new WriteBatch();
              WriteOptions wo = new WriteOptions();
              RocksIterator it = db.newIterator(v2)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
              byte[] row = it.key();
              b.put(v1, Arrays.copyOfRange(row, RecordKeys.PREFIX, row.length), it.value());
            }
            it.status();
            b.put(meta, bytes("format"), StoreDb.intBytes(1));
            db.write(wo, b);
          }
          db.dropColumnFamily(v2);
        });
  }

  private static long count(RocksDB db, ColumnFamilyHandle cf) throws RocksDBException {
    long n = 0;
    try (RocksIterator it = db.newIterator(cf)) {
      for (it.seekToFirst(); it.isValid(); it.next()) {
        n++;
      }
      it.status();
    }
    return n;
  }

  private static int rawFormat(Path dir) throws RocksDBException {
    AtomicReference<byte[]> format = new AtomicReference<>();
    withRawDb(
        dir,
        (db, names, handles) ->
            format.set(
                db.get(handles.get(names.indexOf(findName(names, "meta"))), bytes("format"))));
    return RecordCodec.getInt(format.get(), 0);
  }
}
