package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.StoreDb.EMPTY;
import static dev.reconcile.agent.store.StoreDb.decodeOrNull;
import static dev.reconcile.agent.store.StoreDb.longBytes;

import dev.reconcile.agent.store.RecordCodec.Stored;
import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.ConflictRule;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RowBatches;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The store's write path: local put and delete, repair {@code apply} through the {@link
 * ConflictRule}, and the tombstone purge. Every write is one {@link WriteBatch} that updates the
 * record, its digest index rows and the clock high-water mark together, committed under the writer
 * lock; the sketches and counters change only after RocksDB accepted the batch, so a failed write
 * leaves both unchanged.
 *
 * <p>Tombstones past the grace period ({@code version < wall clock - tombstoneGrace}) are never
 * stored by a repair: one that wins still removes the older record it beats (the delete happened
 * and is not undone), and then the key is simply absent, as if this replica had purged the
 * tombstone already. Replicas that purge at different times therefore never hand a purged tombstone
 * back to each other (docs/operations.md, "Tombstones and the grace period").
 */
final class RecordWriter {
  private final StoreDb s;
  private final StoreSketches sketches;

  /** The stored keys, when the store keeps the filter (not read-only); added under the lock. */
  private final KeyFilter keys;

  private final HybridClock clock;
  private final long origin;
  private final WriteBatch batch; // reused under the writer lock
  private final WriteBatchRep rep; // a repair's batches, under the writer lock
  private final AtomicLong recordCount;
  private final LongAdder localWrites = new LongAdder();
  private final LongAdder appliedRecords = new LongAdder();
  private final LongAdder purgedTombstones = new LongAdder();
  private final LongAdder ingestedRecords = new LongAdder();
  private final LongAdder filterSkippedReads = new LongAdder();
  private final LongAdder filterFalsePositives = new LongAdder();

  /** Told how long each local write waited for the writer lock, in nanoseconds, after it. */
  private volatile LongConsumer lockWaits = nanos -> {};

  RecordWriter(StoreDb s, StoreSketches sketches, KeyFilter keys, HybridClock clock, long origin) {
    this.s = s;
    this.sketches = sketches;
    this.keys = keys;
    this.clock = clock;
    this.origin = origin;
    this.batch = s.own(new WriteBatch());
    this.rep = new WriteBatchRep(batch);
    this.recordCount = new AtomicLong(sketches.rebuiltRecords());
  }

  long recordCount() {
    return recordCount.get();
  }

  /** See {@link ReplicaStore#onLocalWriteLockWait}. */
  void onLocalWriteLockWait(LongConsumer listener) {
    lockWaits = listener;
  }

  /** The counters, with {@code deniedReads} from the store's reader. */
  StoreStats stats(long deniedReads) {
    return sketches.stats(
        recordCount.get(),
        localWrites.sum(),
        appliedRecords.sum(),
        purgedTombstones.sum(),
        ingestedRecords.sum(),
        keys,
        filterSkippedReads.sum(),
        filterFalsePositives.sum(),
        deniedReads);
  }

  // ---------------------------------------------------------------------------------- local writes

  /** Writes {@code value} (a tombstone when {@code tombstone}) under a new version of this node. */
  long writeLocal(byte[] key, byte[] value, boolean tombstone) {
    if (key == null) {
      throw new IllegalArgumentException("key is null");
    }
    s.lifecycle.readLock().lock();
    try {
      s.checkWritable();
      long keyHash = s.spec.keyHash(key);
      int p = s.partitionOf(keyHash);
      long valueHash = s.spec.valueHash(value);
      byte[] row = RecordKeys.of(p, key);
      long asked = System.nanoTime();
      long locked = asked;
      s.lockWriterOutsideIngest(row);
      try {
        locked = System.nanoTime();
        Stored cur = null;
        if (mayBeStored(keyHash)) {
          cur = decodeOrNull(key, s.db.get(s.records, row));
          if (cur == null) {
            filterFalsePositives.increment();
          }
        } else {
          filterSkippedReads.increment();
        }
        long curElement = 0;
        if (cur != null) {
          clock.observe(cur.version);
          curElement = s.element(keyHash, cur);
        }
        long version = clock.now();
        long element = s.hooks.element(s.spec, keyHash, version, origin, tombstone, valueHash);
        batch.clear();
        batch.put(
            s.records, row, RecordCodec.encode(key, version, origin, tombstone, valueHash, value));
        if (cur != null) {
          batch.delete(s.digests, DigestKeys.of(p, curElement, key));
        }
        batch.put(s.digests, DigestKeys.of(p, element, key), EMPTY);
        batch.put(s.meta, StoreMeta.CLOCK, longBytes(version));
        if (cur == null) {
          added(keyHash);
        }
        commit(1, s.writeOptions);
        if (cur == null) {
          recordCount.incrementAndGet();
        }
        sketches.replace(p, cur != null, curElement, element);
        localWrites.increment();
        return version;
      } catch (RocksDBException e) {
        throw new StoreException(
            "cannot read key " + ReplicaRecord.hex(key, 32) + ": " + e.getMessage(), e);
      } finally {
        s.writer.unlock();
        lockWaits.accept(locked - asked);
      }
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  // ---------------------------------------------------------------------------------------- repair

  /** See {@link ReplicaStore#apply}. */
  ApplyOutcome apply(List<ReplicaRecord> incoming) {
    return apply(new Incoming.Records(s.spec, incoming), false);
  }

  /** See {@link ReplicaStore#applyRows}. */
  ApplyOutcome applyRows(RowBatches.Rows rows) {
    return apply(new Incoming.Rows(rows), false);
  }

  /**
   * Applies {@code incoming} slice by slice; a client's batch ({@code client}: a bulk load, not a
   * repair) tells {@link #lockWaits} how long each slice waited for the writer lock.
   */
  private ApplyOutcome apply(Incoming incoming, boolean client) {
    if (incoming.size() == 0) {
      return ApplyOutcome.EMPTY;
    }
    s.lifecycle.readLock().lock();
    try {
      s.checkWritable();
      int n = incoming.size();
      ApplySlot[] slotOf = new ApplySlot[n];
      List<ApplySlot> slots = ApplySlot.inRowOrder(incoming, s, slotOf);
      List<byte[]> rows = ApplySlot.rows(slots);
      // At most applySliceKeys keys a write batch under the lock, so that a client's write waits
      // for one slice, not for the whole batch (docs/decisions.md, "apply slices").
      int sliceKeys = s.options.applySliceKeys();
      // A large repair batch skips the WAL; the round's end flushes it (persistRepairs).
      boolean unlogged =
          !client
              && s.options.unloggedRepairs()
              && incoming.storesAtLeast(StoreOptions.UNLOGGED_REPAIR_MIN_BYTES);
      // One slice syncs (with syncWrites) as it writes; slices sync the WAL once, after the last.
      WriteOptions whole = unlogged ? s.unloggedWriteOptions : s.writeOptions;
      WriteOptions sliced = unlogged ? s.unloggedWriteOptions : s.unsyncedWriteOptions;
      try {
        if (slots.size() <= sliceKeys) {
          return applySlice(incoming, slots, rows, slotOf, null, 0, n, whole, client);
        }
        ApplyOutcome out = applySlices(incoming, slots, rows, slotOf, sliceKeys, sliced, client);
        if (s.options.syncWrites() && out.applied() > 0) {
          s.syncWal(slots.size());
        }
        return out;
      } finally {
        if (unlogged) {
          s.unloggedPending.set(true); // after the writes, so that a flush that clears it has them
        }
      }
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /**
   * Applies a batch of more than {@code sliceKeys} distinct keys ({@code slots}, in row order) as
   * slices of consecutive rows, each atomic and written unsynced; a failure after the first slice
   * says how many keys the slices before it applied.
   */
  private ApplyOutcome applySlices(
      Incoming incoming,
      List<ApplySlot> slots,
      List<byte[]> rows,
      ApplySlot[] slotOf,
      int sliceKeys,
      WriteOptions writeOptions,
      boolean client) {
    // The entries of slice c are order[start[c], start[c + 1]), in the batch's order.
    int slices = (slots.size() + sliceKeys - 1) / sliceKeys;
    int[] start = new int[slices + 1];
    int[] order = ApplySlot.entriesBySlice(slots, slotOf, sliceKeys, start);
    ApplyOutcome out = ApplyOutcome.EMPTY;
    for (int c = 0; c < slices; c++) {
      int first = c * sliceKeys;
      int end = Math.min(slots.size(), first + sliceKeys);
      try {
        out =
            out.plus(
                applySlice(
                    incoming,
                    slots.subList(first, end),
                    rows.subList(first, end),
                    slotOf,
                    order,
                    start[c],
                    start[c + 1],
                    writeOptions,
                    client));
      } catch (StoreException e) {
        if (c == 0) {
          throw e;
        }
        String message =
            e.getMessage()
                + "; the batch's first "
                + c * sliceKeys
                + " of "
                + slots.size()
                + " keys (in row order) were applied by the write batches before";
        StoreException said =
            e instanceof StoreException.Corrupt
                ? new StoreException.Corrupt(message)
                : new StoreException(message);
        said.initCause(e);
        throw said;
      }
    }
    return out;
  }

  /**
   * Applies one slice under the writer lock, in one write batch: the slots {@code slots} (in row
   * order; their rows {@code rows}) and the entries {@code order[from, to)} (entries {@code [from,
   * to)} when {@code order} is null), which are every entry of those slots ({@code slotOf[i]} is
   * entry {@code i}'s slot), written with {@code writeOptions} (a batch of several slices writes
   * them unsynced, then syncs the WAL once); for a {@code client}'s batch, reports the slice's wait
   * for the writer lock.
   */
  private ApplyOutcome applySlice(
      Incoming incoming,
      List<ApplySlot> slots,
      List<byte[]> rows,
      ApplySlot[] slotOf,
      int[] order,
      int from,
      int to,
      WriteOptions writeOptions,
      boolean client) {
    long maxVersion = ApplySlot.maxVersion(incoming, order, from, to);
    long graceCutoffMillis = graceCutoffMillis(clock.wallMillis());
    long asked = System.nanoTime();
    long locked = asked;
    s.lockWriterOutsideIngest(rows);
    try {
      locked = System.nanoTime();
      readCurrent(slots, rows);
      ApplyOutcome out = ApplySlot.resolve(incoming, slotOf, order, from, to, graceCutoffMillis);
      writeWinners(slots, incoming, maxVersion, writeOptions);
      clock.observe(maxVersion);
      appliedRecords.add(out.applied());
      return out;
    } catch (RocksDBException e) {
      throw new StoreException(
          "cannot read the current records of a batch of "
              + slots.size()
              + " keys: "
              + e.getMessage()
              + " (store and sketches unchanged)",
          e);
    } finally {
      s.writer.unlock();
      if (client) {
        lockWaits.accept(locked - asked);
      }
    }
  }

  /**
   * {@link #apply} in batches of {@value ReplicaStore#BULK_BATCH}, each atomic; a failure leaves
   * the earlier batches applied. A {@code client}'s load ({@link ReplicaStore#putAll}) reports each
   * slice's wait for the writer lock; a repair's ({@link PartitionIngest}'s small loads) does not.
   */
  ApplyOutcome applyAll(List<ReplicaRecord> records, boolean client) {
    ApplyOutcome out = ApplyOutcome.EMPTY;
    for (int i = 0; i < records.size(); i += ReplicaStore.BULK_BATCH) {
      List<ReplicaRecord> batch =
          records.subList(i, Math.min(records.size(), i + ReplicaStore.BULK_BATCH));
      out = out.plus(apply(new Incoming.Records(s.spec, batch), client));
    }
    return out;
  }

  /**
   * Fills each slot's current record (under the writer lock); {@code rows} are their rows. Only the
   * keys the {@link KeyFilter} may hold are read.
   */
  private void readCurrent(List<ApplySlot> slots, List<byte[]> rows) throws RocksDBException {
    int[] read = new int[slots.size()];
    int n = 0;
    for (int j = 0; j < slots.size(); j++) {
      if (mayBeStored(slots.get(j).keyHash)) {
        read[n++] = j;
      }
    }
    filterSkippedReads.add(slots.size() - n);
    if (n == 0) {
      return;
    }
    List<byte[]> asked = rows;
    if (n < rows.size()) {
      asked = new ArrayList<>(n);
      for (int t = 0; t < n; t++) {
        asked.add(rows.get(read[t]));
      }
    }
    List<byte[]> current = s.db.multiGetAsList(Collections.nCopies(n, s.records), asked);
    for (int t = 0; t < n; t++) {
      ApplySlot slot = slots.get(read[t]);
      Stored cur = decodeOrNull(slot.key, current.get(t));
      if (cur == null) {
        filterFalsePositives.increment();
      } else {
        slot.stored(cur, s.element(slot.keyHash, cur));
      }
    }
  }

  /**
   * Commits the changed slots ({@code slots}, in row order) in one batch, then updates count and
   * sketches. Each column family's rows go into the batch in that family's order: a memtable
   * inserts a run of ascending keys next to one another (its skip list remembers where the last
   * insert went), where keys in the order the peer sent them each cost a search from the top of the
   * list. The phases are methods of their own, so that the JIT compiles (and recompiles, as a
   * round's profile changes) each loop on its own rather than one large method.
   */
  private void writeWinners(
      List<ApplySlot> slots, Incoming incoming, long maxVersion, WriteOptions writeOptions)
      throws RocksDBException {
    List<ApplySlot> written = toWrite(slots);
    if (written.isEmpty()) {
      return;
    }
    assemble(written, incoming, maxVersion);
    for (ApplySlot slot : written) {
      if (slot.original == null) {
        added(slot.keyHash); // before the write: a failed one leaves a false positive at most
      }
    }
    commitRep(written.size(), writeOptions);
    committed(slots);
  }

  /**
   * The changed slots whose winner is written (in row order), each given its new element when the
   * winner is stored.
   */
  private List<ApplySlot> toWrite(List<ApplySlot> slots) {
    List<ApplySlot> written = new ArrayList<>(slots.size());
    for (ApplySlot slot : slots) {
      if (!slot.changed || (slot.wExpired && slot.original == null)) {
        continue; // unchanged, or an expired tombstone for an absent key: nothing to write
      }
      if (!slot.wExpired) {
        slot.newElement =
            s.hooks.element(
                s.spec,
                slot.keyHash,
                slot.wVersion,
                slot.wOrigin,
                slot.wTombstone,
                slot.wValueHash);
      }
      written.add(slot);
    }
    return written;
  }

  /**
   * Puts the rows of {@code written} (in row order) into {@link #rep}: records, then digest rows in
   * their own order, then the clock's high-water mark.
   */
  private void assemble(List<ApplySlot> written, Incoming incoming, long maxVersion)
      throws RocksDBException {
    long bound = 64; // the clock's row
    for (ApplySlot slot : written) {
      // A slot's three rows (its record, its old and new digest rows): each a tag, a family and
      // two lengths (at most 16 bytes), a digest row 8 bytes longer than the record's row key.
      bound +=
          64 + 3L * slot.row.length + (slot.wExpired ? 0 : incoming.storedRowBound(slot.winner));
    }
    rep.begin(bound);
    for (ApplySlot slot : written) { // in row order, as the slots (ApplySlot.inRowOrder)
      if (slot.wExpired) {
        // Past the grace period: delete what it beats, store nothing (see the class comment).
        rep.delete(s.records, slot.row);
      } else {
        incoming.putStoredRow(rep, s.records, slot.row, slot.winner, slot.key);
      }
    }
    written.sort(ApplySlot.BY_DIGEST_ROW);
    for (ApplySlot slot : written) {
      if (slot.original != null) {
        rep.deleteDigest(s.digests, slot.partition, slot.originalElement, slot.key);
      }
      if (!slot.wExpired) {
        rep.putDigest(s.digests, slot.partition, slot.newElement, slot.key);
      }
    }
    long hwm = Long.compareUnsigned(maxVersion, clock.last()) > 0 ? maxVersion : clock.last();
    rep.put(s.meta, StoreMeta.CLOCK, longBytes(hwm));
  }

  /** After the commit of a slice: the record count and the sketches follow its changed slots. */
  private void committed(List<ApplySlot> slots) {
    for (int j = 0; j < slots.size(); j++) {
      ApplySlot slot = slots.get(j);
      if (!slot.changed) {
        continue;
      }
      if (slot.wExpired) {
        if (slot.original != null) {
          removedKeys(1, recordCount.decrementAndGet());
          sketches.remove(slot.partition, slot.originalElement);
        }
        continue;
      }
      if (slot.original == null) {
        recordCount.incrementAndGet();
      }
      sketches.replace(
          slot.partition, slot.original != null, slot.originalElement, slot.newElement);
    }
  }

  /**
   * A chunk of a {@link PartitionIngest} whose range is now reserved is about to be ingested (under
   * the writer lock): its keys, of hashes {@code keyHashes[0, n)}, go into the key filter before
   * the files make them visible to readers.
   */
  void willIngest(long[] keyHashes, int n) {
    for (int i = 0; i < n; i++) {
      added(keyHashes[i]);
    }
  }

  /**
   * A chunk of a {@link PartitionIngest} is in RocksDB (under the writer lock): {@code n} records
   * that were absent, whose elements are {@code elements[0, n)} and whose keys {@link #willIngest}
   * added. A writer of a key in the chunk's range has waited for this ({@link
   * StoreDb#lockWriterOutsideIngest}).
   */
  void ingested(int partition, long[] elements, int n) {
    recordCount.addAndGet(n);
    appliedRecords.add(n);
    ingestedRecords.add(n);
    sketches.addAllLoaded(partition, elements, n);
  }

  /** False when the records family surely has no row of the key of hash {@code keyHash}. */
  private boolean mayBeStored(long keyHash) {
    return !KeyFilter.denies(keys, keyHash);
  }

  /** A key of hash {@code keyHash} is about to be stored (under the writer lock). */
  private void added(long keyHash) {
    if (keys != null) {
      keys.add(keyHash);
    }
  }

  /** {@code n} stored keys were removed, {@code left} are stored (under the writer lock). */
  private void removedKeys(long n, long left) {
    if (keys != null) {
      keys.removed(n, left);
    }
  }

  /** Writes the reused batch (under the writer lock); clears it whatever happens. */
  private void commit(int records, WriteOptions writeOptions) {
    try {
      write(records, writeOptions, batch);
    } finally {
      batch.clear();
    }
  }

  /**
   * Writes the batch assembled in {@link #rep} (under the writer lock) in one JNI call; clears it
   * whatever happens.
   */
  private void commitRep(int records, WriteOptions writeOptions) {
    try {
      if (rep.rowByRow()) {
        write(records, writeOptions, batch);
      } else {
        try (WriteBatch assembled = rep.toWriteBatch()) {
          write(records, writeOptions, assembled);
        }
      }
    } finally {
      rep.clear();
      batch.clear();
    }
  }

  private void write(int records, WriteOptions writeOptions, WriteBatch b) {
    try {
      s.hooks.beforeCommit();
      s.faultInjector.beforeWrite(records);
      s.db.write(writeOptions, b);
      if (writeOptions == s.unloggedWriteOptions) {
        s.unloggedBatches.increment();
      }
    } catch (RocksDBException e) {
      throw new StoreException(
          "write batch of "
              + records
              + " record(s) failed: "
              + e.getMessage()
              + " (store and sketches unchanged)",
          e);
    }
  }

  // ----------------------------------------------------------------------------------------- purge

  /** See {@link ReplicaStore#purgeTombstones}. */
  int purgeTombstones(long nowMillis) {
    s.lifecycle.readLock().lock();
    try {
      s.checkWritable();
      long cutoffMillis = graceCutoffMillis(nowMillis);
      int purged = 0;
      List<byte[]> candidates = new ArrayList<>();
      try (ReadOptions ro = new ReadOptions().setFillCache(false);
          RocksIterator it = s.db.newIterator(s.records, ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          Stored r = s.decodeRow(it.key(), it.value());
          if (r.tombstone && HybridClock.physicalMillis(r.version) < cutoffMillis) {
            candidates.add(r.key);
            if (candidates.size() == ReplicaStore.BULK_BATCH) {
              purged += purgeBatch(candidates, cutoffMillis);
              candidates.clear();
            }
          }
        }
        it.status();
      }
      if (!candidates.isEmpty()) {
        purged += purgeBatch(candidates, cutoffMillis);
      }
      return purged;
    } catch (RocksDBException e) {
      throw new StoreException("tombstone purge scan failed: " + e.getMessage(), e);
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /**
   * Tombstones whose physical time is before this are past the grace period at {@code nowMillis}.
   */
  long graceCutoffMillis(long nowMillis) {
    return nowMillis - s.options.tombstoneGrace().toMillis();
  }

  /** See {@link ReplicaStore#dropExpiredTombstones}. */
  int dropExpiredTombstones(List<byte[]> keys, long nowMillis) {
    if (keys.isEmpty()) {
      return 0;
    }
    s.lifecycle.readLock().lock();
    try {
      s.checkWritable();
      long cutoffMillis = graceCutoffMillis(nowMillis);
      int purged = 0;
      for (int from = 0; from < keys.size(); from += ReplicaStore.BULK_BATCH) {
        purged +=
            purgeBatch(
                keys.subList(from, Math.min(keys.size(), from + ReplicaStore.BULK_BATCH)),
                cutoffMillis);
      }
      return purged;
    } catch (RocksDBException e) {
      throw new StoreException("dropping expired tombstones failed: " + e.getMessage(), e);
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  private int purgeBatch(List<byte[]> keys, long cutoffMillis) throws RocksDBException {
    int[] partitions = new int[keys.size()];
    long[] keyHashes = new long[keys.size()];
    List<byte[]> rows = new ArrayList<>(keys.size());
    for (int i = 0; i < keys.size(); i++) {
      keyHashes[i] = s.spec.keyHash(keys.get(i));
      partitions[i] = s.partitionOf(keyHashes[i]);
      rows.add(RecordKeys.of(partitions[i], keys.get(i)));
    }
    s.lockWriterOutsideIngest(rows);
    try {
      List<byte[]> current = s.db.multiGetAsList(Collections.nCopies(rows.size(), s.records), rows);
      batch.clear();
      long[] elements = new long[keys.size()];
      boolean[] remove = new boolean[keys.size()];
      int n = 0;
      for (int i = 0; i < keys.size(); i++) {
        byte[] key = keys.get(i);
        Stored r = decodeOrNull(key, current.get(i));
        if (r == null || !r.tombstone || HybridClock.physicalMillis(r.version) >= cutoffMillis) {
          continue; // rewritten since the scan
        }
        elements[i] = s.element(keyHashes[i], r);
        remove[i] = true;
        batch.delete(s.records, rows.get(i));
        batch.delete(s.digests, DigestKeys.of(partitions[i], elements[i], key));
        n++;
      }
      if (n == 0) {
        return 0;
      }
      commit(n, s.writeOptions);
      removedKeys(n, recordCount.addAndGet(-n));
      purgedTombstones.add(n);
      for (int i = 0; i < keys.size(); i++) {
        if (remove[i]) {
          sketches.remove(partitions[i], elements[i]);
        }
      }
      return n;
    } finally {
      s.writer.unlock();
    }
  }
}
