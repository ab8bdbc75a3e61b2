package dev.reconcile.agent.store;

import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;

/**
 * The native handles of a read of one partition's rows at one snapshot, in the digest index or the
 * records (both lead their row keys with the partition, {@link DigestKeys}, {@link RecordKeys}):
 * the snapshot, read options bounded to the partition's rows, and an iterator over them. The owners
 * (a partition scan, an element cursor) guard it against use after release and against the store's
 * close; {@link #release} frees every handle once.
 */
final class PartitionRange {
  final Snapshot snapshot;
  final RocksIterator iterator;
  private final StoreDb s;
  private final ReadOptions options;
  private final Slice lower;
  private final Slice upper;

  /**
   * Opens the range of {@code partition} in {@code family} ({@code s.digests} or {@code
   * s.records}); {@code fillCache} is the iterator's block-cache policy.
   */
  PartitionRange(StoreDb s, ColumnFamilyHandle family, int partition, boolean fillCache) {
    this.s = s;
    snapshot = s.db.getSnapshot();
    options = DigestKeys.scanOptions().setSnapshot(snapshot).setFillCache(fillCache);
    lower = new Slice(DigestKeys.partitionStart(partition));
    upper = partition + 1 < (1 << 16) ? new Slice(DigestKeys.partitionStart(partition + 1)) : null;
    options.setIterateLowerBound(lower);
    if (upper != null) {
      options.setIterateUpperBound(upper);
    }
    iterator = s.db.newIterator(family, options);
  }

  /** Frees the iterator, options, bounds and snapshot; the owner calls it exactly once. */
  void release() {
    iterator.close();
    options.close();
    lower.close();
    if (upper != null) {
      upper.close();
    }
    s.db.releaseSnapshot(snapshot);
  }
}
