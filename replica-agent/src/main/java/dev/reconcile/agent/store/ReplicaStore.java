package dev.reconcile.agent.store;

import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.ConflictRule;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RoundProgress;
import dev.reconcile.core.RowBatches;
import dev.reconcile.core.SketchParams;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.rocksdb.CompressionType;
import org.rocksdb.LogFile;
import org.rocksdb.Range;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Slice;
import org.rocksdb.WriteBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A replica's records in RocksDB, with a digest index and per-partition sketches kept current on
 * every write.
 *
 * <h2>Layout</h2>
 *
 * Column families {@code records_by_partition} (partition | key, {@link RecordKeys} -> {@link
 * RecordCodec} encoding: a partition's records are one range), {@code digests} (the digest index,
 * {@link DigestKeys}: partition | element | key -> empty) and {@code meta} ({@link StoreMeta}:
 * store format, pinned sketch parameters, node id, clock high-water mark, session progress). A
 * store of format 1, which kept records under their key alone, is migrated at its first writable
 * open ({@link StoreFormatMigration}). Every write — local put/delete, repair {@link #apply},
 * {@link #purgeTombstones} — is one {@link WriteBatch} ({@link RecordWriter}) that updates the
 * record and its index rows together (and the clock high-water mark), so the index never disagrees
 * with the records.
 *
 * <h2>Sketches</h2>
 *
 * Per partition a {@link PartitionState} (fingerprint, estimator, the maintained IBLT ladder), held
 * by {@link StoreSketches}. They hold derived state only and are rebuilt at open by scanning the
 * digest index. {@link #selfCheck()} ({@link StoreAudit}) recomputes them from the records.
 *
 * <h2>Concurrency</h2>
 *
 * Writes are serialized by one writer lock held around "read current records, write batch, update
 * sketches": the sketches therefore see changes in the same order as RocksDB. Sketches are updated
 * only after RocksDB accepted the batch, so a failed write leaves both unchanged. Reads ({@link
 * #get}, {@link #recordsFor} ({@link RecordReader}), {@link #sketches()} and its cursors) run on
 * any number of threads without the writer lock: RocksDB reads are thread-safe and each partition's
 * sketches have their own monitor. A reader may see a write in RocksDB a moment before it is in the
 * sketches; the protocol's verify step reports partitions that changed during a round. {@link
 * #close()} waits for running calls, closes open cursors, then every native handle ({@link
 * StoreDb}), in reverse order of creation.
 *
 * <p>All calls block (RocksDB I/O): never call them on a Vert.x event loop.
 */
public final class ReplicaStore implements AutoCloseable, RecordStore {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaStore.class);

  /** Version of the on-disk layout written in {@code meta}. */
  public static final int STORE_FORMAT = 2;

  /**
   * Block compression of the table files a partition load writes and ingests (LZ4); the records and
   * the digest index flush and compact with {@link #COMPRESSION_PER_LEVEL}.
   */
  public static final CompressionType LOAD_FILE_COMPRESSION = PartitionIngest.COMPRESSION;

  /**
   * Block compression of the records and the digest index by level: none for level 0 (flushes), LZ4
   * below it (compactions); docs/decisions.md, "block compression by level".
   */
  public static final List<CompressionType> COMPRESSION_PER_LEVEL = StoreDb.COMPRESSION_PER_LEVEL;

  static final int BULK_BATCH = 10_000;

  private final StoreDb s;
  private final HybridClock clock;
  private final long origin;
  private final StoreMeta meta;
  private final StoreSketches sketches;
  private final RecordReader reader;
  private final RecordWriter writer;
  private final KeyFilter keys; // the stored keys' filter; null when read-only
  private final KeyFilterRebuild keysRebuild; // null when read-only
  private final StoreAudit audit;

  /** The partition whose interrupted ingest the open undid, or -1 ({@link PartitionIngest}). */
  private final int recoveredIngest;

  private ReplicaStore(StoreOptions options, StoreHooks hooks) {
    this.clock = options.clock();
    this.origin = options.nodeId() == null ? 0 : NodeIds.origin(options.nodeId());
    this.s = StoreDb.open(options, hooks);
    try {
      this.meta = new StoreMeta(s);
      meta.initializeOrCheck(options.dataDir().toAbsolutePath(), clock);
      this.recoveredIngest = IngestMarker.recover(s);
      this.keys = options.readOnly() ? null : new KeyFilter(s.estimatedKeys());
      this.sketches = new StoreSketches(s, keys);
      this.writer = new RecordWriter(s, sketches, keys, clock, origin);
    } catch (RuntimeException e) {
      s.closeNatives();
      throw e;
    }
    this.reader = new RecordReader(s, keys);
    this.audit = new StoreAudit(s, sketches, keys);
    if (keys == null) {
      this.keysRebuild = null;
    } else {
      this.keysRebuild = new KeyFilterRebuild(s, sketches, keys, writer::recordCount);
      keys.onRebuildWanted(keysRebuild::request);
      if (keys.segmentCount() > 1) { // grown by the scan at open, past RocksDB's estimate
        keysRebuild.request();
      }
    }
  }

  /** Opens (creating when missing, unless read-only) the store and rebuilds its sketches. */
  public static ReplicaStore open(StoreOptions options) {
    return new ReplicaStore(options, StoreHooks.DEFAULT);
  }

  static ReplicaStore open(StoreOptions options, StoreHooks hooks) {
    return new ReplicaStore(options, hooks);
  }

  /**
   * The node id of the store at {@code dir}, read from its meta rows without building sketches (the
   * store may be held by a running agent).
   *
   * @throws StoreException when {@code dir} holds no store, or a store without a node id
   */
  public static String readNodeId(Path dir) {
    return StoreMeta.readNodeId(dir);
  }

  // ---------------------------------------------------------------------------------------- writes

  /**
   * Writes {@code value} under {@code key} with a new version of this node; returns the version.
   */
  public long put(byte[] key, byte[] value) {
    if (value == null) {
      throw new IllegalArgumentException("value is null (use delete)");
    }
    return writer.writeLocal(key, value, false);
  }

  /** Writes a tombstone for {@code key} (whether or not it exists); returns its version. */
  public long delete(byte[] key) {
    return writer.writeLocal(key, StoreDb.EMPTY, true);
  }

  /**
   * Tells {@code listener}, after each local {@link #put} or {@link #delete} and after each write
   * batch of a {@link #putAll} (a client's bulk load, one report a slice of at most {@link
   * StoreOptions#applySliceKeys} keys), how many nanoseconds it waited for the store's writer lock
   * (behind a slice of a repair batch, a partition ingest, a purge batch or another write): the
   * agent's {@code reconcile_store_write_lock_wait_seconds}. A repair's own batches report nothing.
   * It runs on the writing thread and must be quick; it replaces the one set before.
   */
  public void onLocalWriteLockWait(LongConsumer listener) {
    writer.onLocalWriteLockWait(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * Bulk load: applies {@code records} (as given: their versions and origins) through the conflict
   * rule in write batches of {@value #BULK_BATCH}; returns how many were applied. Each batch is
   * atomic; a failure leaves the earlier batches applied.
   */
  public long putAll(List<ReplicaRecord> records) {
    return writer.applyAll(records, true).applied();
  }

  /**
   * Applies repair records through {@link ConflictRule}: for each key the winner of (current,
   * incoming) is kept (several records for one key in a batch resolve the same way). A batch of at
   * most {@link StoreOptions#applySliceKeys} keys (256 by default) is one atomic write batch; a
   * larger one is written in slices of that many keys in row order, each atomic and under the
   * writer lock on its own, so that a client's write waits for one slice, not the whole batch.
   * Sketches are updated only after a slice committed; a failure throws {@link StoreException} and
   * leaves exactly the slices before it applied (its message says how many keys). Incoming versions
   * are observed by the clock.
   *
   * <p>A winning tombstone already past the grace period ({@link #pastGrace}) is not stored: it
   * deletes the older record it beats and leaves the key absent (counted as applied), or, when the
   * key is absent already, changes nothing (counted as duplicate). So a replica that purged a
   * tombstone never takes it back from one that has not purged it yet.
   */
  @Override
  public ApplyOutcome apply(List<ReplicaRecord> incoming) {
    return writer.apply(incoming);
  }

  /**
   * {@link #apply} for rows checked under this store's hash spec: their key and value hashes are
   * taken as checked, and each winning row is stored as it came (no decoding, no re-encoding).
   */
  @Override
  public ApplyOutcome applyRows(RowBatches.Rows rows) {
    return writer.applyRows(rows);
  }

  /**
   * Receives a bulk partition: while {@link StoreOptions#ingestBulk}, as table files ingested past
   * the write-ahead log and memtable ({@link PartitionIngest}: each chunk of consecutive rows is
   * ingested if its key range holds no record here, applied otherwise); else batch by batch through
   * {@link #apply}.
   */
  @Override
  public RecordStore.PartitionLoad load(int partition) {
    s.checkPartition(partition);
    if (!s.options.ingestBulk() || s.options.readOnly()) {
      return RecordStore.super.load(partition);
    }
    return load(
        partition,
        PartitionIngest.CHUNK_RECORDS,
        PartitionIngest.MIN_INGEST_BYTES,
        PartitionIngest.MIN_INGEST_RECORDS);
  }

  /**
   * {@link #load(int)} with chunks of at most {@code chunkRecords} records, ingested from {@code
   * minIngestBytes} bytes, whatever their number (tests).
   */
  RecordStore.PartitionLoad load(int partition, int chunkRecords, long minIngestBytes) {
    return load(partition, chunkRecords, minIngestBytes, Integer.MAX_VALUE);
  }

  /**
   * {@link #load(int)} with chunks of at most {@code chunkRecords} records, ingested from {@code
   * minIngestBytes} bytes or {@code minIngestRecords} records (tests).
   */
  RecordStore.PartitionLoad load(
      int partition, int chunkRecords, long minIngestBytes, int minIngestRecords) {
    s.checkPartition(partition);
    return new PartitionIngest(
        s, writer, clock, partition, chunkRecords, minIngestBytes, minIngestRecords);
  }

  /** The partition whose interrupted ingest the last open undid, or -1 (tests, logs). */
  public int recoveredIngest() {
    return recoveredIngest;
  }

  /**
   * Removes tombstones whose version is older than {@code nowMillis - tombstoneGrace} (records,
   * index rows and sketch elements). Scans the records without the writer lock and re-checks each
   * candidate under it, in batches; returns how many were removed.
   */
  public int purgeTombstones(long nowMillis) {
    return writer.purgeTombstones(nowMillis);
  }

  /**
   * Whether {@code r} is a tombstone past the grace period by this store's clock: older than {@code
   * wall clock - tombstoneGrace}. Such tombstones are not stored by {@link #apply} and may be
   * purged at any time.
   */
  public boolean pastGrace(ReplicaRecord r) {
    return pastGrace(r.tombstone(), r.version());
  }

  /** {@link #pastGrace(ReplicaRecord)} of a record known by its tombstone flag and version. */
  public boolean pastGrace(boolean tombstone, long version) {
    return tombstone
        && HybridClock.physicalMillis(version) < writer.graceCutoffMillis(clock.wallMillis());
  }

  /**
   * Purges those of {@code keys} that are still tombstones past the grace period (each re-checked
   * under the writer lock; a key rewritten meanwhile is kept), whatever the purge interval; returns
   * how many were removed. The agent calls it when a round has finished for the past-grace
   * tombstones it offered the peer, so that such a tombstone stops differing from a replica that
   * purged it.
   */
  public int dropExpiredTombstones(List<byte[]> keys) {
    return writer.dropExpiredTombstones(keys, clock.wallMillis());
  }

  /** Installs a test-only fault injector (null removes it); see {@link FaultInjector}. */
  public void faultInjector(FaultInjector f) {
    s.faultInjector = f == null ? FaultInjector.NONE : f;
  }

  // ----------------------------------------------------------------------------------------- reads

  /** The current record of {@code key}, tombstones included (callers treat them as absent). */
  public Optional<ReplicaRecord> get(byte[] key) {
    return reader.get(key);
  }

  /**
   * True when the store surely holds no record of {@code key}: its key filter denies the key. It
   * takes no lock and does no I/O (a hash and a cache line a filter segment), so an event loop may
   * ask it; false means nothing (ask {@link #get}), and a read-only store, which keeps no filter,
   * always answers false.
   */
  public boolean surelyLacks(byte[] key) {
    return reader.surelyLacks(key);
  }

  /**
   * The current records of {@code partition} whose element is in {@code elements}, read at one
   * snapshot through the digest index. Elements no longer present (overwritten meanwhile) are
   * skipped; an element shared by several keys yields all of them.
   */
  @Override
  public List<ReplicaRecord> recordsFor(int partition, long[] elements) {
    return reader.recordsFor(partition, elements, sketches.fingerprint(partition).count());
  }

  /**
   * Every record of {@code partition} at one snapshot, by a range scan of the partition's digest
   * index rows and point reads of their records in chunks ({@code sketches} is not needed: the
   * index is this store's own).
   */
  @Override
  public PartitionScan scan(int partition, PartitionSketches sketches) {
    return reader.scan(partition);
  }

  /**
   * A filtered scan reads every record of the partition, listed or not: past this average size of a
   * stored record it no longer pays (records of 2 139 bytes: the sender's scan 1.15-1.33 x the
   * lookups' time with 1/2 to 1/4 of the partition listed; the whole stream's rate by lookups
   * 0.84-1.00 x the scan's there, 1.10-1.27 x at 1/5; benchmarks.md section 3, "stop 43").
   */
  static final long SCAN_RECORD_BYTES = 1536;

  /**
   * Whether {@code listed} elements of a partition of {@code records} records, whose stored records
   * average {@code averageRecordBytes}, are sent faster from one filtered scan of the partition
   * than from lookups. The scan costs about the same for every row of the partition, more for
   * larger rows; the lookups about the same for every listed element; and a scan's records travel
   * as rows, which the receiver applies for less. Measured (benchmarks.md section 3, "stop 43"):
   * the sender's read alone ({@code ListedReadCost}) crosses near 1/16 of the partition for stored
   * records of 136 bytes, 1/8 for 573 and 1/5 for 1 093; the whole stream at 1 093 bytes near 1/10.
   * So a list is dense enough from {@code 1/16 + (averageRecordBytes - 128) / 24576} of the
   * partition ({@code 1/16} up to 128 bytes, about 1/10 at 1 KiB, 1/8 at {@link
   * #SCAN_RECORD_BYTES}), and never past that size.
   */
  static boolean listedByScan(long listed, long records, long averageRecordBytes) {
    if (averageRecordBytes > SCAN_RECORD_BYTES) {
      return false;
    }
    long over = Math.max(0, averageRecordBytes - 128);
    return listed * 24_576 >= records * (1_536 + over);
  }

  /**
   * The records column family's bytes over its estimated key count, from RocksDB's in-memory
   * estimates (a few microseconds): its table files' size and its memtables' entries times the
   * bytes of an entry ({@code getApproximateMemTableStats}), not the memory the memtables took. (A
   * memtable takes memory in blocks of megabytes: counted so, as until stop 44, a thousand records
   * of 100 B still in a memtable averaged 2 392 bytes and were read by lookups; benchmarks.md
   * section 3, "stop 44".) {@code Long.MAX_VALUE} when unknown or the store is closing.
   */
  long averageRecordBytes() {
    return readWhileOpen(
        Long.MAX_VALUE,
        () -> {
          long files = s.db.getLongProperty(s.records, "rocksdb.total-sst-files-size");
          long keys = s.db.getLongProperty(s.records, "rocksdb.estimate-num-keys");
          long entries =
              s.db.getLongProperty(s.records, "rocksdb.num-entries-active-mem-table")
                  + s.db.getLongProperty(s.records, "rocksdb.num-entries-imm-mem-tables");
          if (files < 0 || entries < 0 || keys <= 0) {
            return Long.MAX_VALUE;
          }
          // The stats count a range's entries by sampling the skip list, but their bytes an
          // entry are the memtables' own average: times the exact count of entries above.
          RocksDB.CountAndSize sampled;
          try (Slice start = new Slice(DigestKeys.partitionStart(0));
              Slice limit = new Slice(rowsLimit(s.params.partitionsLog2()))) {
            sampled = s.db.getApproximateMemTableStats(s.records, new Range(start, limit));
          }
          long memtables = sampled.count > 0 ? entries * (sampled.size / sampled.count) : 0;
          return (files + memtables) / keys;
        });
  }

  /** A read of RocksDB's in-memory state that may fail. */
  private interface RocksRead {
    long read() throws RocksDBException;
  }

  /**
   * {@code read} while the store is open, or {@code fallback} when it is closing or closed, or when
   * RocksDB fails the read; never waits for a closing store.
   */
  private long readWhileOpen(long fallback, RocksRead read) {
    if (!s.lifecycle.readLock().tryLock()) {
      return fallback;
    }
    try {
      return s.isClosed() ? fallback : read.read();
    } catch (RocksDBException e) {
      return fallback;
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /**
   * A row key past every record row of a store of {@code 2^partitionsLog2} partitions: the first
   * partition it does not have, or (with all 2^16) eight 0xff bytes, past all but rows of partition
   * 0xffff whose key starts with six 0xff bytes, which an estimate may leave out.
   */
  static byte[] rowsLimit(int partitionsLog2) {
    if (partitionsLog2 < 16) {
      return DigestKeys.partitionStart(1 << partitionsLog2);
    }
    byte[] limit = new byte[8];
    Arrays.fill(limit, (byte) 0xff);
    return limit;
  }

  /**
   * The records of listed elements: a filtered range scan of the partition ({@link
   * RecordReader#scanListed}) for a list dense enough for the size of the records ({@link
   * #listedByScan}), else lookups a chunk at a time ({@link RecordReader#lookupListed}), which a
   * repair stream sends as stored rows while the records average at most {@link
   * #LOOKED_UP_ROW_BYTES}.
   */
  @Override
  public PartitionScan scanListed(int partition, long[] elements) {
    long records = sketches.fingerprint(partition).count();
    long average = averageRecordBytes();
    return scanListed(
        partition, elements, listedByScan(elements.length, records, average), records, average);
  }

  /**
   * {@link #scanListed} by the path given: one filtered scan of the partition ({@code byScan}) or
   * lookups a chunk at a time (for the benchmark that measures where one beats the other, and for
   * tests that both read the same records).
   */
  PartitionScan scanListed(int partition, long[] elements, boolean byScan) {
    return scanListed(
        partition, elements, byScan, sketches.fingerprint(partition).count(), averageRecordBytes());
  }

  private PartitionScan scanListed(
      int partition, long[] elements, boolean byScan, long records, long averageRecordBytes) {
    return byScan
        ? reader.scanListed(partition, elements)
        : reader.lookupListed(
            partition, elements, records, averageRecordBytes <= LOOKED_UP_ROW_BYTES);
  }

  /**
   * Looked-up records travel as the stored rows they are ({@link
   * RecordStore.PartitionScan#storedRows}) while the store's average stored record is at most this
   * size, and as records past it. Measured in the stream bench against records (benchmarks.md
   * section 3, "stop 43"): at 1 KiB the lists looked up ran 1.04-1.30 x (3 of 3 pairs), at 2 and 4
   * KiB 1.01 and 1.02 x (not resolved), at 64 KiB 0.94 x (slower in 5 of 6 pairs).
   */
  static final long LOOKED_UP_ROW_BYTES = 4096;

  /** Full scan of the records in key order (one implicit snapshot), validating each. */
  public void forEachRecord(Consumer<ReplicaRecord> action) {
    reader.forEachRecord(action);
  }

  /**
   * Coded-symbol updates applied so far by the store's upkeep thread, and queued now (see {@code
   * PartitionState}): {@code {applied, pending}}. For metrics.
   */
  public long[] symbolUpkeep() {
    return new long[] {sketches.upkeepApplied(), sketches.symbolUpdatesPending()};
  }

  /**
   * Whether RocksDB's flushes and compactions use {@code O_DIRECT} ({@link StoreOptions#directIo},
   * if the data folder's file system took it).
   */
  public boolean directIo() {
    return s.directIo;
  }

  /** Records currently stored (tombstones included). */
  public long recordCount() {
    return writer.recordCount();
  }

  public StoreStats stats() {
    return writer.stats(reader.deniedReads());
  }

  /**
   * After a peer's stream ends (every batch of it applied): the repair batches this store wrote
   * without the WAL ({@link StoreOptions#repairWal} false) since the last such flush are flushed,
   * all column families as one, and then survive a crash of the process; nothing to do when there
   * were none (so on a read-only store too, which a one-shot diff's round ends on). Blocks for the
   * flush. Throws {@link StoreException} when the flush fails (the batches stay applied, durable at
   * a later flush).
   */
  public void persistRepairs() {
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      s.persistUnlogged();
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /** {@link #persistRepairs}. */
  @Override
  public void repairReceived() {
    persistRepairs();
  }

  /** Repair write batches written without the WAL since open. */
  public long unloggedRepairBatches() {
    return s.unloggedBatches.sum();
  }

  /** Flushes by {@link #persistRepairs} (and the close) that found batches without the WAL. */
  public long unloggedRepairFlushes() {
    return s.unloggedFlushes.sum();
  }

  public SketchParams params() {
    return s.params;
  }

  public StoreOptions options() {
    return s.options;
  }

  /**
   * This node's origin ({@link NodeIds#origin} of the node id; 0 for a read-only open without one).
   */
  public long origin() {
    return origin;
  }

  public HybridClock clock() {
    return clock;
  }

  /**
   * How many records' elements the sketches have taken since the store opened (stored, replaced or
   * removed, by any writer); a fingerprint read before this count is covered by it. The cluster
   * mode tells by it whether a round was the only change while it ran.
   */
  public long sketchChanges() {
    return sketches.changes();
  }

  /** The sketches the reconciliation session reads; fails when sketches are disabled. */
  public PartitionSketches sketches() {
    if (!sketches.maintained()) {
      throw new IllegalStateException("store opened with maintainSketches=false (benchmark mode)");
    }
    return sketches;
  }

  /**
   * Recomputes every partition's sketches from its records and compares them with the maintained
   * ones, and checks the digest index against the records (see {@link StoreAudit}); writes continue
   * meanwhile.
   */
  public SelfCheck selfCheck() {
    return audit.run();
  }

  // -------------------------------------------------------------------------------------- progress

  /** Records that {@code partition} of round {@code roundId} with {@code peer} is reconciled. */
  public void markPartitionDone(String peer, long roundId, int partition) {
    meta.markPartitionDone(peer, roundId, partition);
  }

  /** Partitions already reconciled in round {@code roundId} with {@code peer} (empty if none). */
  public BitSet partitionsDone(String peer, long roundId) {
    return meta.partitionsDone(peer, roundId);
  }

  /** Round progress with {@code peer}, kept in {@code meta} (see {@link #markPartitionDone}). */
  public RoundProgress progressWith(String peer) {
    return meta.progressWith(peer);
  }

  /** Forgets every round's progress with {@code peer}. */
  public void clearProgress(String peer) {
    meta.clearProgress(peer);
  }

  // ----------------------------------------------------------------------------------------- close

  /** Waits for running calls, closes open cursors and every native handle. Idempotent. */
  @Override
  public void close() {
    if (keysRebuild != null) {
      keysRebuild.close(); // before the lifecycle lock, which a running rebuild holds for reading
    }
    s.lifecycle.writeLock().lock();
    try {
      if (s.markClosed()) {
        sketches.stopUpkeep();
        sketches.releaseCursors();
        reader.releaseScans();
        persistAtClose();
        s.closeNatives();
      }
    } finally {
      s.lifecycle.writeLock().unlock();
    }
  }

  /**
   * The close's flush of repair batches written without the WAL (RocksDB's close would flush them
   * too, this says when it fails).
   */
  private void persistAtClose() {
    try {
      s.persistUnlogged();
    } catch (StoreException e) {
      LOG.warn("store at {}: {}", s.options.dataDir(), e.getMessage());
    }
  }

  @Override
  public String toString() {
    return "ReplicaStore{"
        + s.options.dataDir()
        + ", records="
        + writer.recordCount()
        + (s.options.readOnly() ? ", read-only" : "")
        + "}";
  }

  /**
   * The bytes of the live WAL files as RocksDB lists them ({@code GetSortedWalFiles}), for metrics:
   * what a restart after a crash would replay, kept near {@link StoreOptions#maxWalBytes}; -1 while
   * the store is closing or closed.
   */
  public long walBytes() {
    return readWhileOpen(
        -1,
        () -> {
          long sum = 0;
          for (LogFile f : s.db.getSortedWalFiles()) {
            sum += f.sizeFileBytes();
          }
          return sum;
        });
  }

  /** The column families whose RocksDB properties {@link #rocksProperty} reads. */
  public static final List<String> COLUMN_FAMILIES = List.of("records", "digests", "meta");

  /**
   * An integer RocksDB property (e.g. {@code rocksdb.estimate-num-keys}) of one of {@link
   * #COLUMN_FAMILIES}, for metrics; -1 while the store is closing or closed, or when RocksDB does
   * not know the property. Reads in-memory counters only; never waits for a closing store.
   */
  public long rocksProperty(String columnFamily, String property) {
    return readWhileOpen(
        -1,
        () -> {
          org.rocksdb.ColumnFamilyHandle cf =
              switch (columnFamily) {
                case "records" -> s.records;
                case "digests" -> s.digests;
                case "meta" -> s.meta;
                default -> throw new IllegalArgumentException("no column family " + columnFamily);
              };
          return s.db.getLongProperty(cf, property);
        });
  }
}
