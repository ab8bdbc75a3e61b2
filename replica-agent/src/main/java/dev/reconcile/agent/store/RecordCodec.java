package dev.reconcile.agent.store;

import dev.reconcile.core.RecordRow;
import dev.reconcile.core.ReplicaRecord;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Encoding of a record in the {@code records_by_partition} column family (value of the row keyed by
 * the partition and the record key): the {@link RecordRow} layout, which {@code RowBatch} frames
 * carry as it is (format 0x01; version, origin, flags, value hash, value, CRC32C of record key and
 * row). Decoding validates format, length, flags and CRC and throws {@link StoreException.Corrupt}
 * with the key and the values found: a corrupt record is never applied over, served, or counted in
 * a sketch.
 */
final class RecordCodec {
  static final byte FORMAT_V1 = RecordRow.FORMAT_V1;
  static final int HEADER = RecordRow.HEADER;
  static final int OVERHEAD = RecordRow.OVERHEAD;
  static final int TOMBSTONE = RecordRow.TOMBSTONE;

  private RecordCodec() {}

  /** A decoded record and its stored value hash. */
  static final class Stored {
    final byte[] key;
    final byte[] value;
    final long version;
    final long origin;
    final boolean tombstone;
    final long valueHash;

    Stored(byte[] key, byte[] value, long version, long origin, boolean tombstone, long valueHash) {
      this.key = key;
      this.value = value;
      this.version = version;
      this.origin = origin;
      this.tombstone = tombstone;
      this.valueHash = valueHash;
    }

    ReplicaRecord toRecord() {
      return new ReplicaRecord(key, value, version, origin, tombstone);
    }
  }

  static byte[] encode(
      byte[] key, long version, long origin, boolean tombstone, long valueHash, byte[] value) {
    byte[] out = new byte[RecordRow.length(value.length)];
    RecordRow.encode(out, 0, key, version, origin, tombstone, valueHash, value);
    return out;
  }

  /** {@link RecordRow#encode(ByteBuffer, byte[], long, long, boolean, long, byte[])}. */
  static void encode(
      ByteBuffer out,
      byte[] key,
      long version,
      long origin,
      boolean tombstone,
      long valueHash,
      byte[] value) {
    RecordRow.encode(out, key, version, origin, tombstone, valueHash, value);
  }

  static Stored decode(byte[] key, byte[] b) {
    check(key, b);
    int n = b.length - OVERHEAD;
    byte[] value = new byte[n];
    System.arraycopy(b, HEADER, value, 0, n);
    return new Stored(
        key,
        value,
        RecordRow.version(b, 0),
        RecordRow.origin(b, 0),
        RecordRow.tombstone(b, 0),
        RecordRow.valueHash(b, 0));
  }

  /**
   * Checks the stored row {@code b} of {@code key} without decoding it.
   *
   * @throws StoreException.Corrupt when it is not a sound row
   */
  static void check(byte[] key, byte[] b) {
    String problem = RecordRow.problem(key, 0, key.length, b, 0, b.length, new CRC32C());
    if (problem != null) {
      throw corrupt(key, problem);
    }
  }

  private static StoreException.Corrupt corrupt(byte[] key, String what) {
    return new StoreException.Corrupt(
        "corrupt record for key " + ReplicaRecord.hex(key, 32) + ": " + what);
  }

  static void putLong(byte[] b, int off, long v) {
    RecordRow.putLong(b, off, v);
  }

  static long getLong(byte[] b, int off) {
    return RecordRow.getLong(b, off);
  }

  static void putInt(byte[] b, int off, int v) {
    RecordRow.putInt(b, off, v);
  }

  static int getInt(byte[] b, int off) {
    return RecordRow.getInt(b, off);
  }
}
