package dev.reconcile.agent.store;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Row keys of the {@code records_by_partition} column family (store format 2):
 *
 * <pre>
 *   partition (2 bytes, big-endian) | record key (rest)
 * </pre>
 *
 * The partition is {@code HashSpec.partition(keyHash(key), partitionsLog2)}, so it is derived from
 * the record key and adds nothing a reader could disagree with: every read checks it against the
 * key's hash. Its use is the order: RocksDB's bytewise order keeps a partition's records
 * contiguous, so a bulk partition is one range scan (an iterator reads a record in about 0.3 us on
 * the reference machine, a point read at random 3-5 us; docs/benchmarks.md 3a) and its bounds are
 * those of the digest index ({@link DigestKeys#partitionStart}).
 */
final class RecordKeys {
  static final int PREFIX = 2;

  private RecordKeys() {}

  static byte[] of(int partition, byte[] key) {
    byte[] out = new byte[PREFIX + key.length];
    out[0] = (byte) (partition >>> 8);
    out[1] = (byte) partition;
    System.arraycopy(key, 0, out, PREFIX, key.length);
    return out;
  }

  /** {@link #of} written into {@code out} (cleared first), flipped for reading. */
  static ByteBuffer put(ByteBuffer out, int partition, byte[] key) {
    return out.clear().put((byte) (partition >>> 8)).put((byte) partition).put(key).flip();
  }

  static int partition(byte[] row) {
    return (row[0] & 0xFF) << 8 | (row[1] & 0xFF);
  }

  /**
   * The record key of {@code row}.
   *
   * @throws StoreException.Corrupt when the row is too short to hold a partition
   */
  static byte[] key(byte[] row) {
    if (row.length < PREFIX) {
      throw new StoreException.Corrupt(
          "record row of "
              + row.length
              + " byte(s) is shorter than its "
              + PREFIX
              + "-byte partition prefix");
    }
    return Arrays.copyOfRange(row, PREFIX, row.length);
  }
}
