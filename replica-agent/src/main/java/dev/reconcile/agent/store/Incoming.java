package dev.reconcile.agent.store;

import dev.reconcile.core.HashSpec;
import dev.reconcile.core.RecordRow;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RowBatches;
import java.util.List;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDBException;

/**
 * A batch to apply ({@link RecordWriter}'s repair path), as records or as checked rows: what the
 * conflict rule and the write batch read of each entry. Built outside the writer lock, so that
 * hashing happens there.
 */
interface Incoming {
  int size();

  /** Entry {@code i}'s key, an array the caller may keep. */
  byte[] key(int i);

  long keyHash(int i);

  long version(int i);

  long origin(int i);

  boolean tombstone(int i);

  long valueHash(int i);

  /** The length of the row {@link #putStoredRow} stores for entry {@code i}, or more. */
  long storedRowBound(int i);

  /**
   * Puts the row to store for entry {@code i} ({@link RecordRow}), whose key is {@code key}, under
   * {@code row} in {@code family} of {@code out}.
   */
  void putStoredRow(WriteBatchRep out, ColumnFamilyHandle family, byte[] row, int i, byte[] key)
      throws RocksDBException;

  /** Whether the batch's stored rows take at least {@code bytes} ({@link #storedRowBound}). */
  default boolean storesAtLeast(long bytes) {
    long stored = 0;
    for (int i = 0; i < size() && stored < bytes; i++) {
      stored += storedRowBound(i);
    }
    return stored >= bytes;
  }

  /** Records, their values hashed under the store's spec. */
  final class Records implements Incoming {
    private final HashSpec spec;
    private final List<ReplicaRecord> records;
    private final long[] valueHashes;

    Records(HashSpec spec, List<ReplicaRecord> records) {
      this.spec = spec;
      this.records = records;
      this.valueHashes = new long[records.size()];
      for (int i = 0; i < valueHashes.length; i++) {
        valueHashes[i] = spec.valueHash(records.get(i).value());
      }
    }

    @Override
    public int size() {
      return records.size();
    }

    @Override
    public byte[] key(int i) {
      return records.get(i).key();
    }

    @Override
    public long keyHash(int i) {
      return spec.keyHash(records.get(i).key());
    }

    @Override
    public long version(int i) {
      return records.get(i).version();
    }

    @Override
    public long origin(int i) {
      return records.get(i).origin();
    }

    @Override
    public boolean tombstone(int i) {
      return records.get(i).tombstone();
    }

    @Override
    public long valueHash(int i) {
      return valueHashes[i];
    }

    @Override
    public long storedRowBound(int i) {
      ReplicaRecord r = records.get(i);
      return (long) r.key().length + r.value().length + RecordRow.OVERHEAD;
    }

    @Override
    public void putStoredRow(
        WriteBatchRep out, ColumnFamilyHandle family, byte[] row, int i, byte[] key)
        throws RocksDBException {
      ReplicaRecord r = records.get(i);
      out.put(
          family,
          row,
          RecordCodec.encode(
              key, r.version(), r.origin(), r.tombstone(), valueHashes[i], r.value()));
    }
  }

  /**
   * Checked rows ({@link RowBatches#read} under the store's spec): key hashes and value hashes as
   * the check found them, and each row stored as it came (its CRC covers its key).
   */
  final class Rows implements Incoming {
    private final RowBatches.Rows rows;
    private final byte[] a;

    Rows(RowBatches.Rows rows) {
      this.rows = rows;
      this.a = rows.array();
    }

    @Override
    public int size() {
      return rows.size();
    }

    @Override
    public byte[] key(int i) {
      return rows.key(i);
    }

    @Override
    public long keyHash(int i) {
      return rows.keyHash(i);
    }

    @Override
    public long version(int i) {
      return rows.version(i);
    }

    @Override
    public long origin(int i) {
      return RecordRow.origin(a, rows.rowOffset(i));
    }

    @Override
    public boolean tombstone(int i) {
      return rows.tombstone(i);
    }

    @Override
    public long valueHash(int i) {
      return RecordRow.valueHash(a, rows.rowOffset(i));
    }

    @Override
    public long storedRowBound(int i) {
      return rows.rowLength(i);
    }

    /** Copies the row from the batch's array straight into {@code out}. */
    @Override
    public void putStoredRow(
        WriteBatchRep out, ColumnFamilyHandle family, byte[] row, int i, byte[] key)
        throws RocksDBException {
      out.put(family, row, a, rows.rowOffset(i), rows.rowLength(i));
    }
  }
}
