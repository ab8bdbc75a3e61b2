package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.StoreDb.decodeOrNull;

import dev.reconcile.agent.store.RecordCodec.Stored;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;

/**
 * The store's record reads: one key, the records of a partition's elements through the digest
 * index, and a full scan. They run on any number of threads without the writer lock (RocksDB reads
 * are thread-safe), under the lifecycle read lock so that a close waits for them.
 */
final class RecordReader {
  private final StoreDb s;
  private final Set<Scan> openScans = ConcurrentHashMap.newKeySet();

  RecordReader(StoreDb s) {
    this.s = s;
  }

  /** The current record of {@code key}, tombstones included (callers treat them as absent). */
  Optional<ReplicaRecord> get(byte[] key) {
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      Stored r = decodeOrNull(key, s.db.get(s.records, key));
      return r == null ? Optional.empty() : Optional.of(r.toRecord());
    } catch (RocksDBException e) {
      throw new StoreException(
          "cannot read key " + ReplicaRecord.hex(key, 32) + ": " + e.getMessage(), e);
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /**
   * The current records of {@code partition} whose element is in {@code elements}, read at one
   * snapshot through the digest index. Elements no longer present (overwritten meanwhile) are
   * skipped; an element shared by several keys yields all of them.
   */
  List<ReplicaRecord> recordsFor(int partition, long[] elements) {
    s.checkPartition(partition);
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      Snapshot snap = s.db.getSnapshot();
      try (ReadOptions ro = new ReadOptions().setSnapshot(snap);
          ReadOptions lookup = DigestKeys.lookupOptions().setSnapshot(snap)) {
        List<byte[]> keys = keysOf(partition, elements, lookup);
        List<ReplicaRecord> out = new ArrayList<>(keys.size());
        for (int from = 0; from < keys.size(); from += ReplicaStore.BULK_BATCH) {
          List<byte[]> chunk =
              keys.subList(from, Math.min(keys.size(), from + ReplicaStore.BULK_BATCH));
          List<byte[]> values =
              s.db.multiGetAsList(ro, Collections.nCopies(chunk.size(), s.records), chunk);
          for (int i = 0; i < chunk.size(); i++) {
            Stored r = decodeOrNull(chunk.get(i), values.get(i));
            if (r == null) {
              continue;
            }
            if (s.partitionOf(s.spec.keyHash(r.key)) != partition) {
              throw new StoreException(
                  "digest index lists key "
                      + ReplicaRecord.hex(r.key, 32)
                      + " under partition "
                      + partition
                      + " but it hashes to another partition");
            }
            out.add(r.toRecord());
          }
        }
        return out;
      } finally {
        s.db.releaseSnapshot(snap);
      }
    } catch (RocksDBException e) {
      throw new StoreException(
          "cannot read records of partition " + partition + ": " + e.getMessage(), e);
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /** The keys the digest index lists under {@code elements} of {@code partition}, each once. */
  private List<byte[]> keysOf(int partition, long[] elements, ReadOptions ro)
      throws RocksDBException {
    LinkedHashSet<ByteBuffer> keys = new LinkedHashSet<>();
    try (RocksIterator it = s.db.newIterator(s.digests, ro)) {
      for (long e : elements) {
        byte[] prefix = DigestKeys.prefix(partition, e);
        for (it.seek(prefix); it.isValid(); it.next()) {
          byte[] row = it.key();
          if (!DigestKeys.startsWith(row, prefix)) {
            break;
          }
          keys.add(ByteBuffer.wrap(DigestKeys.key(row)));
        }
      }
      it.status();
    }
    List<byte[]> out = new ArrayList<>(keys.size());
    for (ByteBuffer b : keys) {
      out.add(Arrays.copyOfRange(b.array(), b.arrayOffset(), b.arrayOffset() + b.remaining()));
    }
    return out;
  }

  /** Full scan of the records in key order (one implicit snapshot), validating each. */
  void forEachRecord(Consumer<ReplicaRecord> action) {
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      try (ReadOptions ro = new ReadOptions().setFillCache(false);
          RocksIterator it = s.db.newIterator(s.records, ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          byte[] key = it.key();
          action.accept(RecordCodec.decode(key, it.value()).toRecord());
        }
        it.status();
      }
    } catch (RocksDBException e) {
      throw new StoreException("record scan failed: " + e.getMessage(), e);
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /**
   * Every record of {@code partition} at one snapshot, in the digest index's order (element, then
   * key): the index rows of the partition are read by one bounded iterator and their records
   * fetched by {@code multiGet} a chunk at a time, so a whole partition costs one pass over its
   * index rows and one point read per record, with no seek per element.
   */
  RecordStore.PartitionScan scan(int partition) {
    s.checkPartition(partition);
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      Scan scan = new Scan(partition);
      openScans.add(scan);
      return scan;
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /** Releases every open scan; the caller holds the lifecycle write lock (store close). */
  void releaseScans() {
    for (Scan scan : List.copyOf(openScans)) {
      scan.release();
    }
  }

  /** A partition scan's snapshot, bounded index iterator and read options; see {@link #scan}. */
  final class Scan implements RecordStore.PartitionScan {
    /** Records read by the first multiGet of a call, before their sizes are known. */
    private static final int FIRST_CHUNK = 16;

    /** Most records read by one multiGet. */
    private static final int MAX_CHUNK = 512;

    /**
     * The record lookups fill the block cache while the records read so far average less than this:
     * a data block (4 KiB) then holds several records, of this partition and of the others, which
     * the scans of a catch-up read at random (the digest index orders them by element), so a cached
     * block is read again soon; without it each record cost a block read and checksum of its own (a
     * quarter of the sender's CPU at 100 B records, docs/benchmarks.md 3a). Larger records fill a
     * block each and would only evict what the cache holds for other readers.
     */
    static final int FILL_CACHE_BELOW_BYTES = 1024;

    private final int partition;
    private final PartitionIndexRange range;
    private final RocksIterator iterator;
    private final ReadOptions getOptions;
    private boolean started;
    private boolean exhausted;
    private boolean released;
    private long recordsRead;
    private long bytesRead;

    Scan(int partition) {
      this.partition = partition;
      range = new PartitionIndexRange(s, partition, false);
      iterator = range.iterator;
      getOptions = new ReadOptions().setSnapshot(range.snapshot).setFillCache(true);
    }

    @Override
    public List<ReplicaRecord> next(int maxRecords, long maxBytes) {
      s.lifecycle.readLock().lock();
      try {
        synchronized (this) {
          if (released) {
            throw new StoreException("partition scan is closed (or its store was closed)");
          }
          List<ReplicaRecord> out = new ArrayList<>();
          long bytes = 0;
          List<byte[]> keys = new ArrayList<>(MAX_CHUNK);
          while (!exhausted && out.size() < maxRecords && bytes < maxBytes) {
            int chunk = Math.min(maxRecords - out.size(), FIRST_CHUNK);
            if (!out.isEmpty()) {
              long perRecord = Math.max(1, bytes / out.size());
              chunk =
                  (int)
                      Math.min(
                          Math.min(maxRecords - out.size(), MAX_CHUNK),
                          Math.max(1, (maxBytes - bytes + perRecord - 1) / perRecord));
            }
            keys.clear();
            while (keys.size() < chunk && advance()) {
              keys.add(DigestKeys.key(iterator.key()));
            }
            if (keys.isEmpty()) {
              break;
            }
            getOptions.setFillCache(fillsCache());
            List<byte[]> values =
                s.db.multiGetAsList(getOptions, Collections.nCopies(keys.size(), s.records), keys);
            for (int i = 0; i < keys.size(); i++) {
              Stored r = decodeOrNull(keys.get(i), values.get(i));
              if (r == null) {
                throw new StoreException(
                    "digest index lists key "
                        + ReplicaRecord.hex(keys.get(i), 32)
                        + " under partition "
                        + partition
                        + " but no record has it");
              }
              if (s.partitionOf(s.spec.keyHash(r.key)) != partition) {
                throw new StoreException(
                    "digest index lists key "
                        + ReplicaRecord.hex(r.key, 32)
                        + " under partition "
                        + partition
                        + " but it hashes to another partition");
              }
              out.add(r.toRecord());
              bytes += r.key.length + r.value.length;
              recordsRead++;
              bytesRead += r.key.length + r.value.length;
            }
          }
          return out;
        }
      } catch (RocksDBException e) {
        throw new StoreException(
            "cannot scan the records of partition " + partition + ": " + e.getMessage(), e);
      } finally {
        s.lifecycle.readLock().unlock();
      }
    }

    /** Whether the next lookups fill the block cache, see {@link #FILL_CACHE_BELOW_BYTES}. */
    boolean fillsCache() {
      return recordsRead == 0 || bytesRead < (long) FILL_CACHE_BELOW_BYTES * recordsRead;
    }

    /** Moves to the next index row of the partition; false (and exhausted) at its end. */
    private boolean advance() throws RocksDBException {
      if (exhausted) {
        return false;
      }
      if (!started) {
        iterator.seekToFirst();
        started = true;
      } else {
        iterator.next();
      }
      if (!iterator.isValid()) {
        iterator.status();
        exhausted = true;
        return false;
      }
      return true;
    }

    @Override
    public void close() {
      s.lifecycle.readLock().lock();
      try {
        release();
      } finally {
        s.lifecycle.readLock().unlock();
      }
    }

    synchronized void release() {
      if (released) {
        return;
      }
      released = true;
      getOptions.close();
      range.release();
      openScans.remove(this);
    }
  }
}
