package dev.reconcile.agent.store;

import dev.reconcile.agent.store.RecordCodec.Stored;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.RecordRow;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.zip.CRC32C;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Cache;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.Filter;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.PerfLevel;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The open RocksDB of a {@link ReplicaStore} and what its parts share: the column families, the
 * write options, the two locks of the store's concurrency rules (the lifecycle lock every call
 * holds for reading and {@link ReplicaStore#close()} for writing; the writer lock around "read
 * current records, write batch, update sketches") and the derivation of an element from a stored
 * record.
 *
 * <p>Every native handle is registered here in order of creation ({@link #own}) and closed in
 * reverse by {@link #closeNatives()}: write batch and write options, column family handles, the
 * database, then the options and cache it was opened with.
 */
final class StoreDb {
  private static final Logger LOG = LoggerFactory.getLogger(StoreDb.class);

  static final byte[] EMPTY = new byte[0];

  /** Records keyed by partition | key ({@link RecordKeys}), store format 2. */
  static final byte[] RECORDS = ascii("records_by_partition");

  /**
   * Store format 1's records, keyed by the record key alone; opened only when a store still has it,
   * and emptied and dropped by the migration at open ({@link StoreMeta}).
   */
  static final byte[] RECORDS_V1 = ascii("records");

  static final byte[] DIGESTS = ascii("digests");
  static final byte[] META = ascii("meta");

  /**
   * Block compression of the records and the digest index by level: none for level 0 (what a flush
   * writes), LZ4 for every level below it (what compactions write, and a load's files). RocksDB
   * tries to compress every block it writes and keeps it raw when that saves too little; with
   * Snappy, a flush of random 100 B values spent 61 % of its CPU in the attempt, and flushes took
   * as much CPU as a listed repair's receiving round thread (benchmarks.md, section 3, "stop 42").
   * Level-0 files live until the next compaction, so compressing them saves little disk; LZ4 below
   * keeps what compression saves on real values at half of Snappy's cost (decisions.md, "block
   * compression by level"). With dynamic level sizes the list's second entry applies to the level
   * that level 0 compacts into and, being the last, to every level below it.
   */
  static final List<CompressionType> COMPRESSION_PER_LEVEL =
      List.of(CompressionType.NO_COMPRESSION, CompressionType.LZ4_COMPRESSION);

  /**
   * The digest index's memtable: 16 MiB, a quarter of RocksDB's default, which the records keep. A
   * repair batch's index rows are sorted, but their elements are hashes, so each row lands at a
   * random place in the memtable's skip list, and the search for it walks nodes scattered over the
   * whole memtable (a record's own row lands where its key's order puts it: near the batch's other
   * rows when the keys are clustered, as the stream bench's are, anywhere when they are not). A
   * smaller memtable keeps that list shallower and more of it in the CPU's caches; the price is
   * four times the flushes of a column family of small rows, on RocksDB's background threads
   * (benchmarks.md, section 3, "stop 46"; decisions.md, "write buffers").
   */
  static final long DIGEST_WRITE_BUFFER_BYTES = 16L << 20;

  static {
    RocksDbLibrary.load();
  }

  /** Whether the calling thread has turned RocksDB's performance counters off. */
  private static final ThreadLocal<Boolean> COUNTERS_OFF =
      ThreadLocal.withInitial(() -> Boolean.FALSE);

  final StoreOptions options;
  final SketchParams params;
  final HashSpec spec;
  final StoreHooks hooks;
  final RocksDB db;
  final ColumnFamilyHandle records;
  final ColumnFamilyHandle digests;
  final ColumnFamilyHandle meta;

  /** The format-1 records column family while a store still has one; null otherwise. */
  final ColumnFamilyHandle recordsV1;

  final WriteOptions writeOptions;

  /**
   * Whether RocksDB's flushes and compactions read and write table files with {@code O_DIRECT}:
   * asked for ({@link StoreOptions#directIo}) and taken by the data folder's file system ({@link
   * DirectIo}); false for a read-only store, which neither flushes nor compacts.
   */
  final boolean directIo;

  /**
   * Never synced: for the write batches of an operation that syncs the WAL once at its end when
   * {@link StoreOptions#syncWrites} (the slices of a repair batch).
   */
  final WriteOptions unsyncedWriteOptions;

  /**
   * Without the WAL: a repair batch of {@link StoreOptions#UNLOGGED_REPAIR_MIN_BYTES} or more when
   * {@link StoreOptions#unloggedRepairs}. Such a batch is in the memtables only until a flush; the
   * column families flush atomically (RocksDB's {@code atomic_flush}), so that a crash never leaves
   * a record without its digest-index entry or the clock's row that covers its version, and {@link
   * #persistUnlogged} flushes them when a peer's stream ends.
   */
  final WriteOptions unloggedWriteOptions;

  /**
   * Every family a repair batch writes (the clock's row is in {@code meta}): what {@link
   * #persistUnlogged} flushes as one.
   */
  private final List<ColumnFamilyHandle> repairFamilies;

  /** Set after a write batch without the WAL; cleared by {@link #persistUnlogged} as it flushes. */
  final AtomicBoolean unloggedPending = new AtomicBoolean();

  /** Flushes by {@link #persistUnlogged} that found unlogged batches. */
  final LongAdder unloggedFlushes = new LongAdder();

  /** Write batches written without the WAL. */
  final LongAdder unloggedBatches = new LongAdder();

  final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();

  /**
   * Serializes writes (client puts, repair batches, purges). Fair: a client writing in a tight loop
   * must not starve a repair batch waiting for the lock (an unfair lock let the writing thread
   * barge ahead of the parked repair thread for longer than the peer's idle timeout).
   */
  final ReentrantLock writer = new ReentrantLock(true);

  /**
   * Held by a partition load from its range check to the end of its ingest ({@link
   * PartitionIngest}): one ingest at a time, since its marker is one row. Taken before {@link
   * #writer}, never while holding it.
   */
  final ReentrantLock ingest = new ReentrantLock();

  /**
   * The records-family rows {first, last} that an ingest in progress has checked empty and is
   * filling, or null. Set under {@link #writer}, cleared when the ingest has ended (its last step
   * under the lock, or its undo) and has released the lock; a writer that would touch a row in it
   * waits until it is cleared ({@link #lockWriterOutsideIngest}), so the ingest needs the writer
   * lock only for its check and its end, not for its synced marker and its two ingests.
   */
  private volatile byte[][] ingesting;

  private final Object ingestEnded = new Object();

  /**
   * Test-only faults ({@link ReplicaStore#faultInjector}); {@link FaultInjector#NONE} otherwise.
   */
  volatile FaultInjector faultInjector = FaultInjector.NONE;

  private final List<AutoCloseable> natives;
  private volatile boolean closed;
  private volatile String unwritable;

  private StoreDb(
      StoreOptions options,
      StoreHooks hooks,
      List<AutoCloseable> natives,
      RocksDB db,
      List<ColumnFamilyHandle> handles,
      boolean directIo) {
    this.options = options;
    this.directIo = directIo;
    this.params = options.params();
    this.spec = params.spec();
    this.hooks = hooks;
    this.natives = natives;
    this.db = db;
    // Closed in reverse: handles, then the database, then options (registered earlier).
    natives.add(db);
    natives.addAll(handles);
    this.records = handles.get(1);
    this.digests = handles.get(2);
    this.meta = handles.get(3);
    this.recordsV1 = handles.size() > 4 ? handles.get(4) : null;
    this.repairFamilies =
        recordsV1 == null
            ? List.of(records, digests, meta)
            : List.of(records, digests, meta, recordsV1);
    this.writeOptions = own(new WriteOptions().setSync(options.syncWrites()));
    this.unsyncedWriteOptions = own(new WriteOptions());
    this.unloggedWriteOptions = own(new WriteOptions().setDisableWAL(true));
  }

  /**
   * With {@code sync-writes}, after the unsynced slices of a batch of {@code keys} keys (before it
   * is acknowledged): one sync of every live WAL file covers them all.
   */
  void syncWal(int keys) {
    try {
      db.syncWal();
      hooks.walSynced();
    } catch (RocksDBException e) {
      throw new StoreException(
          "syncing the WAL after a batch of "
              + keys
              + " keys failed: "
              + e.getMessage()
              + " (the batch is applied but may not survive a power loss)",
          e);
    }
  }

  /**
   * Flushes the memtables of every column family (one atomic flush) and waits, if a write batch
   * without the WAL ({@link #unloggedWriteOptions}) came since the last such flush; afterwards
   * those batches survive a crash of the process. Cheap when none came. A failure leaves them
   * pending.
   */
  void persistUnlogged() {
    if (!unloggedPending.getAndSet(false)) {
      return;
    }
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      db.flush(flush, repairFamilies);
      unloggedFlushes.increment();
    } catch (RocksDBException e) {
      unloggedPending.set(true);
      throw new StoreException(
          "flushing the repair batches written without the WAL failed: "
              + e.getMessage()
              + " (they are applied but do not survive a crash until a flush succeeds)",
          e);
    }
  }

  /**
   * Under {@link #writer} and {@link #ingest}: rows {@code [first, last]} of the records family are
   * an ingest's until {@link #endIngest}.
   */
  void beginIngest(byte[] first, byte[] last) {
    ingesting = new byte[][] {first, last};
  }

  /** Ends what {@link #beginIngest} began and wakes the writers waiting for it. */
  void endIngest() {
    synchronized (ingestEnded) {
      ingesting = null;
      ingestEnded.notifyAll();
    }
  }

  /**
   * Takes {@link #writer} at a moment when no ingest in progress holds any of {@code rows}
   * (records-family rows, any order). Waiting for an ingest does not hold the lock, so the ingest
   * can take it to end.
   */
  void lockWriterOutsideIngest(List<byte[]> rows) {
    lockWriterAvoiding(rows);
  }

  /** {@link #lockWriterOutsideIngest} of one row. */
  void lockWriterOutsideIngest(byte[] row) {
    lockWriterAvoiding(List.of(row));
  }

  /**
   * Takes {@link #writer} at a moment when no ingest is in progress: for a caller that reads the
   * records and the index as one, which an ingest between its two files would tell apart.
   */
  void lockWriterBetweenIngests() {
    lockWriterAvoiding(null);
  }

  /** Takes {@link #writer} outside any ingest's range holding one of {@code rows} (null: any). */
  @SuppressWarnings("LockNotBeforeTry") // returns holding the lock, which its caller releases
  private void lockWriterAvoiding(List<byte[]> rows) {
    while (true) {
      writer.lock();
      if (!meetsIngest(rows)) {
        return;
      }
      writer.unlock();
      awaitIngestEnd();
    }
  }

  private boolean meetsIngest(List<byte[]> rows) {
    byte[][] range = ingesting;
    if (range == null) {
      return false;
    }
    if (rows == null) {
      return true;
    }
    for (byte[] row : rows) {
      if (Arrays.compareUnsigned(row, range[0]) >= 0
          && Arrays.compareUnsigned(row, range[1]) <= 0) {
        return true;
      }
    }
    return false;
  }

  /** Waits (keeping an interrupt for later) until no ingest is in progress. */
  private void awaitIngestEnd() {
    boolean interrupted = false;
    synchronized (ingestEnded) {
      while (ingesting != null) {
        try {
          ingestEnded.wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Opens (creating when missing, unless read-only) the database of {@code options.dataDir()}. */
  static StoreDb open(StoreOptions options, StoreHooks hooks) {
    Path dir = options.dataDir().toAbsolutePath();
    List<AutoCloseable> natives = new ArrayList<>();
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try {
      if (options.readOnly()) {
        if (!Files.isDirectory(dir) || !Files.exists(dir.resolve("CURRENT"))) {
          throw new StoreException(
              "no store at " + dir + " (read-only open needs an existing store)");
        }
      } else {
        Files.createDirectories(dir);
      }
      boolean directIo = options.directIo() && !options.readOnly() && directIoTaken(dir, hooks);
      DBOptions dbOptions =
          own(natives, new DBOptions())
              .setCreateIfMissing(!options.readOnly())
              .setCreateMissingColumnFamilies(!options.readOnly())
              .setMaxBackgroundJobs(2)
              .setBytesPerSync(1 << 20)
              .setMaxTotalWalSize(options.maxWalBytes())
              .setUseDirectIoForFlushAndCompaction(directIo)
              .setAtomicFlush(options.unloggedRepairs());
      Cache cache = own(natives, new LRUCache(64L << 20));
      BloomFilter bloom = own(natives, new BloomFilter(10));
      // A repair batch reads the current record of each key it brings before writing it (the
      // conflict rule), and most are keys this side lacks: a whole-key Bloom filter in the
      // memtable answers those without a search of the memtable's skip list (the table files'
      // filters already spare them a block read).
      ColumnFamilyOptions recordOptions =
          own(natives, new ColumnFamilyOptions())
              .setCompressionPerLevel(COMPRESSION_PER_LEVEL)
              .setMemtablePrefixBloomSizeRatio(0.02)
              .setMemtableWholeKeyFiltering(true)
              .setTableFormatConfig(recordTable(bloom).setBlockCache(cache));
      // The digest index is read by range scans of a partition (total order,
      // DigestKeys.scanOptions) and by walks over many elements of one partition (IndexWalk: the
      // verification of decoded elements, the keys of listed elements). A dense walk steps in
      // total order; a sparse one seeks each (partition, element) prefix, and the fixed-length
      // prefix extractor's Bloom filters (memtable and table files) let such a seek skip every
      // file and memtable that lacks it.
      ColumnFamilyOptions digestOptions =
          own(natives, new ColumnFamilyOptions())
              .setCompressionPerLevel(COMPRESSION_PER_LEVEL)
              .useFixedLengthPrefixExtractor(DigestKeys.PREFIX)
              .setMemtablePrefixBloomSizeRatio(0.05)
              .setWriteBufferSize(DIGEST_WRITE_BUFFER_BYTES)
              .setTableFormatConfig(digestTable(bloom).setBlockCache(cache));
      ColumnFamilyOptions metaOptions =
          own(natives, new ColumnFamilyOptions()).setTableFormatConfig(tableConfig(cache));
      ColumnFamilyOptions defaultOptions =
          own(natives, new ColumnFamilyOptions()).setTableFormatConfig(tableConfig(cache));
      List<ColumnFamilyDescriptor> descriptors =
          new ArrayList<>(
              List.of(
                  new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, defaultOptions),
                  new ColumnFamilyDescriptor(RECORDS, recordOptions),
                  new ColumnFamilyDescriptor(DIGESTS, digestOptions),
                  new ColumnFamilyDescriptor(META, metaOptions)));
      List<byte[]> existing = columnFamilies(natives, dir);
      if (contains(existing, RECORDS_V1)) {
        if (options.readOnly() && !contains(existing, RECORDS)) {
          throw StoreFormatMigration.readOnlyRefusal(dir);
        }
        descriptors.add(new ColumnFamilyDescriptor(RECORDS_V1, recordOptions));
      }
      RocksDB opened =
          options.readOnly()
              ? RocksDB.openReadOnly(dbOptions, dir.toString(), descriptors, handles)
              : RocksDB.open(dbOptions, dir.toString(), descriptors, handles);
      return new StoreDb(options, hooks, natives, opened, handles, directIo);
    } catch (RocksDBException | IOException | RuntimeException e) {
      handles.forEach(ColumnFamilyHandle::close);
      closeAll(natives);
      if (e instanceof StoreException se) {
        throw se;
      }
      throw new StoreException("cannot open store at " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * Whether the file system of {@code dir} takes {@code O_DIRECT} ({@link DirectIo}); when it does
   * not, the store's flushes and compactions stay buffered, and the log says why.
   */
  private static boolean directIoTaken(Path dir, StoreHooks hooks) {
    Optional<String> why = hooks.directIoUnsupported(dir);
    why.ifPresent(
        w ->
            LOG.warn(
                "store at {}: flushes and compactions go through the page cache (direct-io"
                    + " asked for, not taken): {}",
                dir,
                w));
    return why.isEmpty();
  }

  /** The column families of the database at {@code dir}; none when there is no database yet. */
  private static List<byte[]> columnFamilies(List<AutoCloseable> natives, Path dir)
      throws RocksDBException {
    if (!Files.exists(dir.resolve("CURRENT"))) {
      return List.of();
    }
    return RocksDB.listColumnFamilies(own(natives, new Options()), dir.toString());
  }

  private static boolean contains(List<byte[]> names, byte[] name) {
    return names.stream().anyMatch(n -> Arrays.equals(n, name));
  }

  private static BlockBasedTableConfig tableConfig(Cache cache) {
    return tableConfig().setBlockCache(cache);
  }

  private static BlockBasedTableConfig tableConfig() {
    // Format version 5 so that RocksDB's ldb tool (7.x in Debian) can read the files.
    return new BlockBasedTableConfig().setFormatVersion(5);
  }

  /** The table format of {@link #RECORDS}: whole-key Bloom filters. */
  static BlockBasedTableConfig recordTable(Filter bloom) {
    return tableConfig().setFilterPolicy(bloom);
  }

  /**
   * The table format of {@link #DIGESTS}: Bloom filters of the {@link DigestKeys#PREFIX} only (the
   * column family's prefix extractor, which a table file written for it must use too).
   */
  static BlockBasedTableConfig digestTable(Filter bloom) {
    return tableConfig().setFilterPolicy(bloom).setWholeKeyFiltering(false);
  }

  private static <T extends AutoCloseable> T own(List<AutoCloseable> natives, T handle) {
    natives.add(handle);
    return handle;
  }

  /** Registers a native handle to be closed (in reverse order of registration) with the store. */
  <T extends AutoCloseable> T own(T handle) {
    return own(natives, handle);
  }

  /** The element of {@code s}, whose key hashes to {@code keyHash}. */
  long element(long keyHash, Stored s) {
    return hooks.element(spec, keyHash, s.version, s.origin, s.tombstone, s.valueHash);
  }

  /**
   * RocksDB's estimate of the digest index's rows (one a stored record), to size what the rebuild
   * at open fills; 0 when RocksDB cannot tell.
   */
  long estimatedKeys() {
    try {
      return Math.max(0, db.getLongProperty(digests, "rocksdb.estimate-num-keys"));
    } catch (RocksDBException e) {
      return 0;
    }
  }

  int partitionOf(long keyHash) {
    return HashSpec.partition(keyHash, params.partitionsLog2());
  }

  /** The row of {@code key} in {@link #records}. */
  byte[] recordRow(byte[] key) {
    return RecordKeys.of(partitionOf(spec.keyHash(key)), key);
  }

  /**
   * Decodes a row of {@link #records} read by an iterator: the record, and a check that the row's
   * partition prefix is its key's partition.
   *
   * @throws StoreException.Corrupt when the record is corrupt or filed under another partition
   */
  Stored decodeRow(byte[] row, byte[] value) {
    byte[] key = RecordKeys.key(row);
    Stored r = RecordCodec.decode(key, value);
    int p = partitionOf(spec.keyHash(key));
    if (p != RecordKeys.partition(row)) {
      throw new StoreException.Corrupt(
          "record for key "
              + ReplicaRecord.hex(key, 32)
              + " is stored under partition "
              + RecordKeys.partition(row)
              + " but its key hashes to partition "
              + p);
    }
    return r;
  }

  /**
   * Checks the stored row {@code value} of the row key {@code row[0, rowLength)} in place, as
   * {@link #decodeRow} does without decoding: the {@link RecordRow} (CRC, format, flags) and the
   * partition prefix against the key's hash. {@code c} is used for the CRC.
   *
   * @throws StoreException.Corrupt when either is wrong
   */
  void checkRow(byte[] row, int rowLength, byte[] value, int valueLength, CRC32C c) {
    if (rowLength < RecordKeys.PREFIX) {
      throw new StoreException.Corrupt(
          "record row of "
              + rowLength
              + " byte(s) is shorter than its "
              + RecordKeys.PREFIX
              + "-byte partition prefix");
    }
    int keyLength = rowLength - RecordKeys.PREFIX;
    String problem = RecordRow.problem(row, RecordKeys.PREFIX, keyLength, value, 0, valueLength, c);
    int p = partitionOf(spec.keyHash(row, RecordKeys.PREFIX, keyLength));
    if (problem == null && p != RecordKeys.partition(row)) {
      problem =
          "stored under partition "
              + RecordKeys.partition(row)
              + " but its key hashes to partition "
              + p;
    }
    if (problem != null) {
      byte[] key = Arrays.copyOfRange(row, RecordKeys.PREFIX, rowLength);
      throw new StoreException.Corrupt(
          "corrupt record for key " + ReplicaRecord.hex(key, 32) + ": " + problem);
    }
  }

  static Stored decodeOrNull(byte[] key, byte[] value) {
    return value == null ? null : RecordCodec.decode(key, value);
  }

  /**
   * Checks that the store is open. The store's calls pass here first (a scan's later reads and the
   * start-up rebuild's threads call {@link #countersOff} themselves), and so turn RocksDB's
   * performance counters off on their thread.
   */
  void checkOpen() {
    if (closed) {
      throw new StoreException("store at " + options.dataDir() + " is closed");
    }
    countersOff();
  }

  /**
   * Turns RocksDB's performance counters off on the calling thread, once per thread.
   *
   * <p>RocksDB counts per thread by default ({@code PerfLevel} {@code kEnableCount}): every
   * iterator step, memtable insert and read adds to the thread's {@code PerfContext}, and from a
   * shared library each access to that thread-local struct is a call of {@code __tls_get_addr} (and
   * of the struct's initializer check). The store reads none of the counts. In the repair stream's
   * profile those calls were 9.3-10.0 % of the sending round thread's samples (its scan's {@code
   * Next}) and 4.7-5.4 % of the receiving one's (the memtable's key comparisons); with the counters
   * off, 5.2-5.5 % and 1.4-2.0 % (docs/benchmarks.md, section 3, "stop 39"). The level belongs to
   * the thread, for every RocksDB of the process, so the flag that says it was set is static.
   */
  void countersOff() {
    if (!COUNTERS_OFF.get()) {
      db.setPerfLevel(PerfLevel.DISABLE);
      COUNTERS_OFF.set(Boolean.TRUE);
    }
  }

  void checkWritable() {
    checkOpen();
    if (options.readOnly()) {
      throw new StoreException("store at " + options.dataDir() + " is open read-only");
    }
    String why = unwritable;
    if (why != null) {
      throw new StoreException(
          "store at " + options.dataDir() + " refuses writes until it is reopened: " + why);
    }
  }

  /**
   * Refuses every later write: the store's rows may disagree with its sketches until the next open
   * repairs them (a partition ingest that failed and could not be undone, {@link PartitionIngest}).
   */
  void markUnwritable(String why) {
    unwritable = why;
  }

  void checkPartition(int partition) {
    if (partition < 0 || partition >= params.partitions()) {
      throw new IllegalArgumentException(
          "partition " + partition + " outside [0, " + params.partitions() + ")");
    }
  }

  boolean isClosed() {
    return closed;
  }

  /** Marks the store closed; the caller holds the lifecycle write lock. False if it already was. */
  boolean markClosed() {
    if (closed) {
      return false;
    }
    closed = true;
    return true;
  }

  /** Closes every registered native handle, newest first. */
  void closeNatives() {
    closeAll(natives);
  }

  private static void closeAll(List<AutoCloseable> natives) {
    for (int i = natives.size() - 1; i >= 0; i--) {
      try {
        natives.get(i).close();
      } catch (Exception e) {
        // keep closing the rest; nothing else can be done with a failing close
      }
    }
    natives.clear();
  }

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  static byte[] intBytes(int v) {
    byte[] b = new byte[4];
    RecordCodec.putInt(b, 0, v);
    return b;
  }

  static byte[] longBytes(long v) {
    byte[] b = new byte[8];
    RecordCodec.putLong(b, 0, v);
    return b;
  }
}
