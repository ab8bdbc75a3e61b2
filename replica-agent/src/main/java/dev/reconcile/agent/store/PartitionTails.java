package dev.reconcile.agent.store;

import java.util.Arrays;
import org.rocksdb.RocksDBException;

/**
 * For each partition, an upper bound of the rows it holds in {@code records_by_partition}: a row
 * above its partition's bound is absent from the store without a read.
 *
 * <p>Why: a write first reads the key's current record (the conflict rule needs it). A catch-up (a
 * new replica, a bulk partition) receives a partition's records in row order from the sender's
 * range scan, so each arriving row is above all the partition holds: its read can only find
 * nothing. Keys written in increasing order (time-ordered keys) skip the read the same way.
 *
 * <p>The invariant: {@code bound[p]} (when known) is at least every row of partition {@code p} in
 * the store. It is found on first use, one reverse seek in the partition, and raised to each row
 * before the batch that writes it is committed (so a failed or partly applied commit leaves it
 * still an upper bound; a higher bound than needed costs only reads). Deletes leave it. All of this
 * runs under the store's writer lock, which every write of a record row holds; the format migration
 * writes its rows at open, before any bound is found.
 */
final class PartitionTails {
  private final StoreDb s;
  private final byte[][] bound;
  private final boolean[] known;
  private long skipped;

  PartitionTails(StoreDb s, int partitions) {
    this.s = s;
    this.bound = new byte[partitions][];
    this.known = new boolean[partitions];
  }

  /**
   * True when {@code row} (of partition {@code p}) is above every row the partition holds, so the
   * key is absent. Under the writer lock.
   */
  boolean above(int p, byte[] row) throws RocksDBException {
    if (!known[p]) {
      bound[p] = lastRow(p);
      known[p] = true;
    }
    byte[] b = bound[p];
    if (b == null || Arrays.compareUnsigned(row, b) > 0) {
      skipped++;
      return true;
    }
    return false;
  }

  /** Reads of a current record skipped so far (under the writer lock, or for tests). */
  long skipped() {
    return skipped;
  }

  /** {@code row} of partition {@code p} is about to be written. Under the writer lock. */
  void writing(int p, byte[] row) {
    if (known[p] && (bound[p] == null || Arrays.compareUnsigned(row, bound[p]) > 0)) {
      bound[p] = row;
    }
  }

  /** The partition's last row, or null when it holds none. */
  private byte[] lastRow(int p) throws RocksDBException {
    PartitionRange range = new PartitionRange(s, s.records, p, false);
    try {
      range.iterator.seekToLast();
      if (range.iterator.isValid()) {
        return range.iterator.key();
      }
      range.iterator.status();
      return null;
    } finally {
      range.release();
    }
  }
}
