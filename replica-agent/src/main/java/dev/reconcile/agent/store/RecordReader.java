package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.StoreDb.decodeOrNull;

import dev.reconcile.agent.store.RecordCodec.Stored;
import dev.reconcile.core.RecordRow;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RowBatches;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;

/**
 * The store's record reads: one key, the records of a partition's elements through the digest
 * index, and a full scan. They run on any number of threads without the writer lock (RocksDB reads
 * are thread-safe), under the lifecycle read lock so that a close waits for them.
 *
 * <p>A read of one key asks the store's {@link KeyFilter} first and answers "absent" without
 * RocksDB when the filter denies the key (a key the store lacks costs a hash and one cache line
 * instead of a memtable filter, a level walk and a table filter per file through JNI). That is safe
 * without the writer lock because every write path adds a key to the filter before the write that
 * makes its record visible (an ingest too, {@link PartitionIngest}), and bits are only ever set: a
 * read that finds the key's bits unset ran before the key's first write.
 */
final class RecordReader {
  private final StoreDb s;
  private final KeyFilter keys; // null when the store keeps none (read-only)
  private final Set<Scan> openScans = ConcurrentHashMap.newKeySet();

  /** Reads of one key ({@link #get}, {@link #surelyLacks}) the key filter answered "absent". */
  private final LongAdder deniedReads = new LongAdder();

  RecordReader(StoreDb s, KeyFilter keys) {
    this.s = s;
    this.keys = keys;
  }

  /**
   * True when the key filter denies {@code key}: the store surely holds no record of it. No lock
   * and no I/O; false means nothing (and is the answer of a store that keeps no filter, or is
   * closed, whose {@link #get} then says so).
   */
  boolean surelyLacks(byte[] key) {
    boolean lacks = !s.isClosed() && KeyFilter.denies(keys, s.spec.keyHash(key));
    if (lacks) {
      deniedReads.increment();
    }
    return lacks;
  }

  /** Reads of one key the key filter answered without RocksDB, since the open. */
  long deniedReads() {
    return deniedReads.sum();
  }

  /** The current record of {@code key}, tombstones included (callers treat them as absent). */
  Optional<ReplicaRecord> get(byte[] key) {
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      long keyHash = s.spec.keyHash(key);
      if (KeyFilter.denies(keys, keyHash)) {
        deniedReads.increment();
        return Optional.empty();
      }
      Stored r = decodeOrNull(key, s.db.get(s.records, RecordKeys.of(s.partitionOf(keyHash), key)));
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
  List<ReplicaRecord> recordsFor(int partition, long[] elements, long partitionRecords) {
    Found found = rowsFor(partition, elements, partitionRecords);
    List<ReplicaRecord> out = new ArrayList<>(found.size());
    for (int i = 0; i < found.size(); i++) {
      out.add(found.record(i));
    }
    return out;
  }

  /**
   * The stored rows of what {@link #recordsFor} returns, not decoded: {@code keys.get(i)}, its row
   * key {@code rows.get(i)} and stored value {@code values.get(i)}.
   */
  private record Found(List<byte[]> keys, List<byte[]> rows, List<byte[]> values) {
    static final Found NONE = new Found(List.of(), List.of(), List.of());

    int size() {
      return keys.size();
    }

    ReplicaRecord record(int i) {
      return decodeOrNull(keys.get(i), values.get(i)).toRecord();
    }
  }

  /** See {@link Found}. */
  private Found rowsFor(int partition, long[] elements, long partitionRecords) {
    s.checkPartition(partition);
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      Snapshot snap = s.db.getSnapshot();
      try (ReadOptions ro = new ReadOptions().setSnapshot(snap)) {
        List<byte[]> keys =
            keysOf(partition, elements, snap, IndexWalk.dense(elements.length, partitionRecords));
        Found out =
            new Found(
                new ArrayList<>(keys.size()),
                new ArrayList<>(keys.size()),
                new ArrayList<>(keys.size()));
        for (int from = 0; from < keys.size(); from += ReplicaStore.BULK_BATCH) {
          List<byte[]> chunk =
              keys.subList(from, Math.min(keys.size(), from + ReplicaStore.BULK_BATCH));
          List<byte[]> rows = new ArrayList<>(chunk.size());
          for (byte[] key : chunk) {
            if (s.partitionOf(s.spec.keyHash(key)) != partition) {
              throw new StoreException(
                  "digest index lists key "
                      + ReplicaRecord.hex(key, 32)
                      + " under partition "
                      + partition
                      + " but it hashes to another partition");
            }
            rows.add(RecordKeys.of(partition, key));
          }
          List<byte[]> values =
              s.db.multiGetAsList(ro, Collections.nCopies(rows.size(), s.records), rows);
          for (int i = 0; i < chunk.size(); i++) {
            if (values.get(i) != null) {
              out.keys.add(chunk.get(i));
              out.rows.add(rows.get(i));
              out.values.add(values.get(i));
            }
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

  /**
   * The records of {@code partition}'s listed {@code elements} by lookups ({@link #rowsFor}) a
   * chunk of elements at a time, each chunk at its own snapshot: decoded ({@link
   * RecordStore.PartitionScan#next}) or as the stored rows, checked and copied as they are ({@link
   * RecordStore.PartitionScan#nextRows}); a repair stream sends them as rows when {@code
   * storedRows} ({@link RecordStore.PartitionScan#storedRows}).
   */
  RecordStore.PartitionScan lookupListed(
      int partition, long[] elements, long partitionRecords, boolean storedRows) {
    return new Lookups(partition, elements, partitionRecords, storedRows);
  }

  /** See {@link #lookupListed}. Holds no native resource between calls. */
  private final class Lookups implements RecordStore.PartitionScan {
    private final int partition;
    private final long[] elements;
    private final long partitionRecords;
    private final boolean storedRows;
    private final CRC32C crc = new CRC32C();

    /** The next element to look up. */
    private int offset;

    /** The rows of the chunk looked up last; {@code [taken, size)} not returned yet. */
    private Found found = Found.NONE;

    private int taken;

    Lookups(int partition, long[] elements, long partitionRecords, boolean storedRows) {
      this.partition = partition;
      this.elements = elements;
      this.partitionRecords = partitionRecords;
      this.storedRows = storedRows;
    }

    /**
     * Looks up the next at most {@code maxElements} elements, chunk after chunk, until one finds a
     * record; false when the list is done and nothing is left.
     */
    private boolean fill(int maxElements) {
      while (taken == found.size()) {
        if (offset == elements.length) {
          return false;
        }
        int k = Math.min(Math.max(1, maxElements), elements.length - offset);
        found =
            rowsFor(partition, Arrays.copyOfRange(elements, offset, offset + k), partitionRecords);
        offset += k;
        taken = 0;
      }
      return true;
    }

    /**
     * As {@link RecordStore#scanListed}'s default: the records of the next at most {@code
     * maxRecords} elements (more when elements are shared), after what a call of {@link #nextRows}
     * left.
     */
    @Override
    public List<ReplicaRecord> next(int maxRecords, long maxBytes) {
      if (!fill(maxRecords)) {
        return List.of();
      }
      List<ReplicaRecord> out = new ArrayList<>(found.size() - taken);
      while (taken < found.size()) {
        out.add(found.record(taken++));
      }
      return out;
    }

    @Override
    public int nextRows(RowBatches.Builder out, int maxRecords, long maxBytes) {
      int start = out.bytes();
      int n = 0;
      while (n < maxRecords && out.bytes() - start < maxBytes && fill(maxRecords - n)) {
        byte[] row = found.rows.get(taken);
        byte[] value = found.values.get(taken);
        s.checkRow(row, row.length, value, value.length, crc);
        out.addRow(row, RecordKeys.PREFIX, row.length - RecordKeys.PREFIX, value, 0, value.length);
        taken++;
        n++;
      }
      return n;
    }

    @Override
    public boolean storedRows() {
      return storedRows;
    }

    @Override
    public void close() {
      found = Found.NONE;
      taken = 0;
      offset = elements.length;
    }
  }

  /**
   * The keys the digest index lists under {@code elements} of {@code partition}, each once, in
   * ascending element order (one {@link IndexWalk}, dense or sparse).
   */
  private List<byte[]> keysOf(int partition, long[] elements, Snapshot snap, boolean dense)
      throws RocksDBException {
    List<byte[]> out = new ArrayList<>(elements.length);
    try (IndexWalk walk = new IndexWalk(s, partition, snap, dense)) {
      for (int i : DigestKeys.orderByElement(elements)) {
        long e = elements[i];
        if (walk.moveTo(e)) {
          while (walk.at(e)) {
            out.add(walk.takeKey());
          }
        }
      }
      walk.status();
    }
    return out;
  }

  /**
   * Full scan of the records (one implicit snapshot) in partition order, then key order within a
   * partition, validating each.
   */
  void forEachRecord(Consumer<ReplicaRecord> action) {
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      try (ReadOptions ro = new ReadOptions().setFillCache(false);
          RocksIterator it = s.db.newIterator(s.records, ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          action.accept(s.decodeRow(it.key(), it.value()).toRecord());
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
   * Every record of {@code partition} at one snapshot, in key order: the partition's rows of the
   * records column family are contiguous ({@link RecordKeys}), so a whole partition is one bounded
   * iterator, with no index read and no point read per record.
   */
  RecordStore.PartitionScan scan(int partition) {
    return open(partition, null);
  }

  /**
   * The records of {@code partition} whose element is one of {@code elements}, at one snapshot, in
   * key order, by one bounded iterator over the partition's rows: each row's element is computed
   * from its key and header (key hash, version, origin, flags, value hash) and looked up in a set
   * of the list ({@link ElementSet}); only rows of listed elements are copied (and checked).
   */
  RecordStore.PartitionScan scanListed(int partition, long[] elements) {
    return open(partition, new ElementSet(elements));
  }

  /** A scan of {@code partition}, filtered by {@code wanted} when it is not null. */
  private Scan open(int partition, ElementSet wanted) {
    s.checkPartition(partition);
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      Scan scan = new Scan(partition, wanted);
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

  /** A partition scan's snapshot, bounded iterator and read options; see {@link #scan}. */
  final class Scan implements RecordStore.PartitionScan {
    private final int partition;
    private final PartitionRange range;
    private final RocksIterator iterator;
    private boolean started;
    private boolean exhausted;
    private boolean released;
    private byte[] rowScratch = new byte[256];
    private byte[] valueScratch = new byte[4096];

    /** The iterator's row is in the scratch arrays: its row key, and its value up to 4 KiB. */
    private boolean loaded;

    private int rowLength;

    /** The whole value's length (the scratch may hold only its start). */
    private int valueLength;

    private final CRC32C crc = new CRC32C();

    /** The listed elements (a filtered scan), or null (every record). */
    private final ElementSet wanted;

    Scan(int partition, ElementSet wanted) {
      this.partition = partition;
      this.wanted = wanted;
      // A scan reads each block once: filling the block cache would only evict what other
      // readers cached.
      range = new PartitionRange(s, s.records, partition, false);
      iterator = range.iterator;
    }

    @Override
    public List<ReplicaRecord> next(int maxRecords, long maxBytes) {
      s.lifecycle.readLock().lock();
      try {
        synchronized (this) {
          checkReadable();
          List<ReplicaRecord> out = new ArrayList<>();
          long bytes = 0;
          while (out.size() < maxRecords && bytes < maxBytes && advance()) {
            if (wanted != null && !listed()) {
              continue;
            }
            Stored r = s.decodeRow(iterator.key(), iterator.value());
            out.add(r.toRecord());
            bytes += r.key.length + r.value.length;
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

    /**
     * Refuses a released scan; otherwise turns RocksDB's counters off on the reading thread, which
     * may not be the one that opened the scan (a round moves between pool threads).
     */
    private void checkReadable() {
      if (released) {
        throw new StoreException("partition scan is closed (or its store was closed)");
      }
      s.countersOff();
    }

    /** Every scan, filtered or not, reads its partition by one bounded iterator. */
    @Override
    public boolean ranged() {
      return true;
    }

    /**
     * The stored rows as they are (of listed elements only, for a filtered scan), each checked
     * first ({@link StoreDb#checkRow}): copied from the iterator into two reused arrays, then into
     * {@code out}; no decoding, no object per record.
     */
    @Override
    public int nextRows(RowBatches.Builder out, int maxRecords, long maxBytes) {
      s.lifecycle.readLock().lock();
      try {
        synchronized (this) {
          checkReadable();
          int n = 0;
          int start = out.bytes();
          while (n < maxRecords && out.bytes() - start < maxBytes && advance()) {
            if (wanted != null && !listed()) {
              continue;
            }
            copyRow(out);
            n++;
          }
          return n;
        }
      } catch (RocksDBException e) {
        throw new StoreException(
            "cannot scan the records of partition " + partition + ": " + e.getMessage(), e);
      } finally {
        s.lifecycle.readLock().unlock();
      }
    }

    /**
     * The iterator's row into {@code out}, checked (one call per row, so that a just-started
     * process compiles it early).
     */
    private void copyRow(RowBatches.Builder out) {
      load();
      if (valueLength > valueScratch.length) {
        valueScratch = new byte[Math.max(valueLength, valueScratch.length * 2)];
        iterator.value(valueScratch);
      }
      s.checkRow(rowScratch, rowLength, valueScratch, valueLength, crc);
      out.addRow(
          rowScratch,
          RecordKeys.PREFIX,
          rowLength - RecordKeys.PREFIX,
          valueScratch,
          0,
          valueLength);
    }

    /**
     * Whether the iterator's row is of a listed element, computed from the row in place: its key
     * and the header's version, origin, flags and value hash. A row whose header is damaged yields
     * some other element and is skipped here, or is caught when decoded if its element is listed.
     */
    private boolean listed() {
      load();
      if (rowLength <= RecordKeys.PREFIX || valueLength < RecordRow.HEADER) {
        return true; // decoded, which reports the damage
      }
      long keyHash = s.spec.keyHash(rowScratch, RecordKeys.PREFIX, rowLength - RecordKeys.PREFIX);
      long element =
          s.hooks.element(
              s.spec,
              keyHash,
              RecordRow.version(valueScratch, 0),
              RecordRow.origin(valueScratch, 0),
              RecordRow.tombstone(valueScratch, 0),
              RecordRow.valueHash(valueScratch, 0));
      return wanted.contains(element);
    }

    /**
     * Copies the iterator's row key, and its value as far as the value scratch holds it (the header
     * at least), into the scratch arrays, once per row.
     */
    private void load() {
      if (loaded) {
        return;
      }
      rowLength = iterator.key(rowScratch);
      if (rowLength > rowScratch.length) {
        rowScratch = new byte[Math.max(rowLength, rowScratch.length * 2)];
        iterator.key(rowScratch);
      }
      valueLength = iterator.value(valueScratch);
      loaded = true;
    }

    /** Moves to the next row of the partition; false (and exhausted) at its end. */
    private boolean advance() throws RocksDBException {
      loaded = false;
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
      try {
        s.faultInjector.afterScanClose(partition, exhausted);
      } catch (RocksDBException e) {
        throw new StoreException(
            "closing the scan of partition " + partition + " failed: " + e.getMessage(), e);
      }
    }

    synchronized void release() {
      if (released) {
        return;
      }
      released = true;
      range.release();
      openScans.remove(this);
    }
  }
}
