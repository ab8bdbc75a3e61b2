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
  private final boolean ownsSnapshot;
  private final ReadOptions options;
  private final Slice lower;
  private final Slice upper;

  /**
   * Opens the range of {@code partition} in {@code family} ({@code s.digests} or {@code
   * s.records}); {@code fillCache} is the iterator's block-cache policy.
   */
  PartitionRange(StoreDb s, ColumnFamilyHandle family, int partition, boolean fillCache) {
    this(s, family, partition, fillCache, null);
  }

  /**
   * As above, read at {@code shared} when it is not null: the caller's snapshot, which the range
   * uses but does not release.
   */
  PartitionRange(
      StoreDb s, ColumnFamilyHandle family, int partition, boolean fillCache, Snapshot shared) {
    this.s = s;
    ownsSnapshot = shared == null;
    snapshot = ownsSnapshot ? s.db.getSnapshot() : shared;
    options = DigestKeys.scanOptions().setSnapshot(snapshot).setFillCache(fillCache);
    lower = new Slice(DigestKeys.partitionStart(partition));
    upper = partition + 1 < (1 << 16) ? new Slice(DigestKeys.partitionStart(partition + 1)) : null;
    options.setIterateLowerBound(lower);
    if (upper != null) {
      options.setIterateUpperBound(upper);
    }
    iterator = s.db.newIterator(family, options);
  }

  /**
   * Frees the iterator, options, bounds and the snapshot it took; the owner calls it exactly once.
   */
  void release() {
    iterator.close();
    options.close();
    lower.close();
    if (upper != null) {
      upper.close();
    }
    if (ownsSnapshot) {
      s.db.releaseSnapshot(snapshot);
    }
  }
}
