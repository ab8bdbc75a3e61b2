package dev.reconcile.agent.store;

import java.util.Arrays;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;

/**
 * A RocksDB write batch assembled in a Java array, in RocksDB's own serialized layout, and handed
 * to RocksDB in one call ({@link #toWriteBatch}). {@link WriteBatch#put} costs a JNI call a row,
 * each of which copies key and value out of the Java heap into fresh native buffers and then into
 * the batch: for a repair slice of 256 records of 100 B that was 11.5 % of the writer's time
 * (benchmarks.md section 3, "stop 44"). Here each row is copied once, into this array, and the
 * array once across JNI.
 *
 * <p>The layout is RocksDB's {@code WriteBatch::rep_} (db/write_batch.cc), which is also the record
 * format of its write-ahead log, so RocksDB keeps it readable from one version to the next:
 *
 * <pre>
 *  sequence  fixed64   0 (RocksDB assigns the batch its sequence when it writes it)
 *  count     fixed32   little-endian, the number of records
 *  record    count times:
 *    0x05 varint32(family) varint32(key length) key varint32(value length) value   put
 *    0x04 varint32(family) varint32(key length) key                                 delete
 *    (family 0, the default family, would use 0x01 / 0x00 without the family; the store never
 *     writes it)
 * </pre>
 *
 * <p>A batch of more bytes (an upper bound past {@link #KEPT_BYTES}, given to {@link #begin}) goes
 * row by row into the native batch given at construction instead, as before stop 44: its rows are
 * large (a slice holds at most 256 keys, a listed batch of large values a few dozen), a JNI call
 * per row costs little beside them, and assembled they cost a copy of the whole batch more (the
 * store's apply of 64 KiB values ran 0.92-0.96 x with 4 MiB here, the listed stream at 64 KiB
 * 0.79-1.07 x).
 *
 * <p>{@code WriteBatchRepTest} checks byte for byte that a batch built here equals the one {@link
 * WriteBatch#put} and {@link WriteBatch#delete} build. Not thread-safe: the writer uses it under
 * the writer lock.
 */
final class WriteBatchRep {
  private static final int HEADER = 12;
  private static final byte PUT_IN_FAMILY = 0x05;
  private static final byte DELETE_IN_FAMILY = 0x04;
  private static final byte[] EMPTY = new byte[0];

  /** Most bytes of a batch assembled here (and of the array kept between batches). */
  static final int KEPT_BYTES = 1 << 20;

  private final WriteBatch direct;
  private boolean rowByRow;
  private byte[] buf = new byte[64 << 10];
  private int len = HEADER;
  private int count;

  /** Large batches go row by row into {@code direct}, which the caller owns and clears. */
  WriteBatchRep(WriteBatch direct) {
    this.direct = direct;
  }

  /**
   * Starts a batch of at most {@code bound} bytes of rows (with their tags and lengths): assembled
   * here up to {@link #KEPT_BYTES}, put row by row into the native batch past it ({@link
   * #rowByRow}).
   */
  void begin(long bound) {
    clear();
    rowByRow = bound > KEPT_BYTES;
    if (rowByRow) {
      direct.clear(); // after a batch that failed before its commit
    }
    if (!rowByRow && len + bound > buf.length) {
      buf = Arrays.copyOf(buf, (int) (len + bound));
    }
  }

  /** True when this batch's rows went into the native batch given at construction. */
  boolean rowByRow() {
    return rowByRow;
  }

  /** Records added since the last {@link #clear}. */
  int count() {
    return count;
  }

  void put(ColumnFamilyHandle family, byte[] key, byte[] value) throws RocksDBException {
    if (rowByRow) {
      direct.put(family, key, value);
      count++;
      return;
    }
    put(family, key, value, 0, value.length);
  }

  /** Puts {@code key} with the value {@code value[from, from + length)}. */
  void put(ColumnFamilyHandle family, byte[] key, byte[] value, int from, int length)
      throws RocksDBException {
    if (rowByRow) {
      direct.put(family, key, Arrays.copyOfRange(value, from, from + length));
      count++;
      return;
    }
    int id = familyId(family);
    ensure(1 + 5 + 5 + key.length + 5 + length);
    buf[len++] = PUT_IN_FAMILY;
    varint(id);
    varint(key.length);
    System.arraycopy(key, 0, buf, len, key.length);
    len += key.length;
    varint(length);
    System.arraycopy(value, from, buf, len, length);
    len += length;
    count++;
  }

  /**
   * Puts a digest-index row ({@link DigestKeys#of}: partition, element, key) with an empty value,
   * written in place rather than built as an array first.
   */
  void putDigest(ColumnFamilyHandle family, int partition, long element, byte[] key)
      throws RocksDBException {
    if (rowByRow) {
      direct.put(family, DigestKeys.of(partition, element, key), EMPTY);
      count++;
      return;
    }
    digestRow(PUT_IN_FAMILY, family, partition, element, key);
    buf[len++] = 0; // the empty value's length
  }

  void delete(ColumnFamilyHandle family, byte[] key) throws RocksDBException {
    if (rowByRow) {
      direct.delete(family, key);
      count++;
      return;
    }
    int id = familyId(family);
    ensure(1 + 5 + 5 + key.length);
    buf[len++] = DELETE_IN_FAMILY;
    varint(id);
    varint(key.length);
    System.arraycopy(key, 0, buf, len, key.length);
    len += key.length;
    count++;
  }

  /** Deletes a digest-index row, written in place as {@link #putDigest} writes one. */
  void deleteDigest(ColumnFamilyHandle family, int partition, long element, byte[] key)
      throws RocksDBException {
    if (rowByRow) {
      direct.delete(family, DigestKeys.of(partition, element, key));
      count++;
      return;
    }
    digestRow(DELETE_IN_FAMILY, family, partition, element, key);
  }

  /**
   * A record of {@code tag} whose key is the digest row {@link DigestKeys#of}{@code (partition,
   * element, key)}, written in place, with room for a one-byte value length after it.
   */
  private void digestRow(
      byte tag, ColumnFamilyHandle family, int partition, long element, byte[] key) {
    int id = familyId(family);
    int rowLength = DigestKeys.PREFIX + key.length;
    ensure(1 + 5 + 5 + rowLength + 1);
    buf[len++] = tag;
    varint(id);
    varint(rowLength);
    DigestKeys.write(buf, len, partition, element, key);
    len += rowLength;
    count++;
  }

  /**
   * A new native batch holding what was added (the caller closes it); this one is left as it is.
   */
  WriteBatch toWriteBatch() {
    // sequence 0 (bytes 0-7 stay zero), then the count, little-endian
    buf[8] = (byte) count;
    buf[9] = (byte) (count >>> 8);
    buf[10] = (byte) (count >>> 16);
    buf[11] = (byte) (count >>> 24);
    return new WriteBatch(Arrays.copyOf(buf, len));
  }

  /**
   * Empties the batch (not the native one, which its owner clears); the array is kept unless it
   * grew past {@link #KEPT_BYTES}.
   */
  void clear() {
    len = HEADER;
    count = 0;
    rowByRow = false;
    if (buf.length > HEADER + KEPT_BYTES) {
      buf = new byte[64 << 10];
    }
  }

  private static int familyId(ColumnFamilyHandle family) {
    int id = family.getID();
    if (id == 0) {
      throw new IllegalArgumentException("the default column family is written by tag 0x01/0x00");
    }
    return id;
  }

  private void varint(int v) {
    while ((v & ~0x7F) != 0) {
      buf[len++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf[len++] = (byte) v;
  }

  private void ensure(int more) {
    if (len + more > buf.length) {
      long want = Math.max((long) buf.length * 2, (long) len + more);
      if (want > Integer.MAX_VALUE - 8) {
        throw new IllegalStateException("write batch past 2 GiB");
      }
      buf = Arrays.copyOf(buf, (int) want);
    }
  }
}
