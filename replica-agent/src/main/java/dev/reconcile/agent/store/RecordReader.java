package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.StoreDb.decodeOrNull;

import dev.reconcile.agent.store.RecordCodec.Stored;
import dev.reconcile.core.ReplicaRecord;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
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
      try (ReadOptions ro = new ReadOptions().setSnapshot(snap)) {
        List<byte[]> keys = keysOf(partition, elements, ro);
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
}
