package dev.reconcile.agent.store;

import java.nio.file.Path;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Store format 1 -> 2, run by a writable open of a format-1 store before anything else reads it.
 *
 * <p>Format 1 kept records in the column family {@code records} under their key; format 2 keeps
 * them in {@code records_by_partition} under partition | key ({@link RecordKeys}), so that a
 * partition is one range. The record encoding ({@link RecordCodec}, whose CRC covers the record
 * key) and the digest index are the same in both, so each value moves byte for byte, unread.
 *
 * <p>Crash safety: every batch moves its rows atomically (put under the new key, delete the old,
 * one {@link WriteBatch}), so at any moment each record is in exactly one of the two column
 * families and a reader of either sees no duplicate. An interrupted migration resumes at the next
 * open with what is left. The format-1 column family is dropped once empty and only then is the
 * format written (by {@link StoreMeta}); a crash between the two leaves format 1 without its column
 * family, which the next open completes by moving nothing.
 */
final class StoreFormatMigration {
  private static final Logger LOG = LoggerFactory.getLogger(StoreFormatMigration.class);

  /** Rows per batch, and bytes of values past which a batch is written early. */
  static final int BATCH_ROWS = 4096;

  static final long BATCH_BYTES = 8L << 20;

  private StoreFormatMigration() {}

  /**
   * The refusal of a read-only open of a format-1 store (whether its migration has not started or
   * was interrupted): it cannot be migrated without writing.
   */
  static StoreException readOnlyRefusal(Path dir) {
    return new StoreException(
        "store at "
            + dir
            + " has store format 1, which a read-only open cannot migrate: open it writable once"
            + " (an agent start does) to migrate it to format "
            + ReplicaStore.STORE_FORMAT);
  }

  /** Moves every format-1 record into the format-2 column family, then drops the old one. */
  static void fromFormat1(StoreDb s) throws RocksDBException {
    if (s.recordsV1 == null) {
      return;
    }
    long t0 = System.nanoTime();
    long moved = 0;
    try (ReadOptions ro = new ReadOptions().setFillCache(false).setReadaheadSize(2 << 20);
        RocksIterator it = s.db.newIterator(s.recordsV1, ro);
        WriteBatch batch = new WriteBatch()) {
      long bytes = 0;
      int rows = 0;
      for (it.seekToFirst(); it.isValid(); it.next()) {
        byte[] key = it.key();
        byte[] value = it.value();
        batch.put(s.records, s.recordRow(key), value);
        batch.delete(s.recordsV1, key);
        rows++;
        bytes += value.length;
        if (rows == BATCH_ROWS || bytes >= BATCH_BYTES) {
          s.hooks.beforeMigrationBatch();
          s.db.write(s.writeOptions, batch);
          batch.clear();
          moved += rows;
          rows = 0;
          bytes = 0;
        }
      }
      it.status();
      if (rows > 0) {
        s.hooks.beforeMigrationBatch();
        s.db.write(s.writeOptions, batch);
        moved += rows;
      }
    }
    s.db.dropColumnFamily(s.recordsV1);
    LOG.info(
        "store at {}: migrated {} record(s) from store format 1 to {} in {} ms",
        s.options.dataDir(),
        moved,
        ReplicaStore.STORE_FORMAT,
        (System.nanoTime() - t0) / 1_000_000);
  }
}
