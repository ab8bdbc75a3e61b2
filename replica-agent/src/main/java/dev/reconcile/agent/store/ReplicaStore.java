package dev.reconcile.agent.store;

import dev.reconcile.agent.store.RecordCodec.Stored;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.ElementCursor;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.SketchParams;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Cache;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * A replica's records in RocksDB, with a digest index and per-partition sketches kept current on
 * every write.
 *
 * <h2>Layout</h2>
 *
 * Column families {@code records} (key -> {@link RecordCodec} encoding), {@code digests} (the
 * digest index, {@link DigestKeys}: partition | element | key -> empty) and {@code meta} (store
 * format, pinned sketch parameters, node id, clock high-water mark, session progress). Every write
 * — local put/delete, repair {@link #apply}, {@link #purgeTombstones} — is one {@link WriteBatch}
 * that updates the record and its index rows together (and the clock high-water mark), so the index
 * never disagrees with the records.
 *
 * <h2>Sketches</h2>
 *
 * Per partition a {@link PartitionState} (fingerprint, estimator, the two maintained IBLTs). They
 * hold derived state only and are rebuilt at open by scanning the digest index (which holds the
 * elements, so no record is decoded or hashed): {@code rebuildThreads} scanners each take a
 * contiguous range of partitions. {@link #selfCheck()} recomputes them from the records.
 *
 * <h2>Concurrency</h2>
 *
 * Writes are serialized by one writer lock held around "read current records, write batch, update
 * sketches": the sketches therefore see changes in the same order as RocksDB. Sketches are updated
 * only after RocksDB accepted the batch, so a failed write leaves both unchanged. Reads ({@link
 * #get}, {@link #recordsFor}, {@link #sketches()} and its cursors) run on any number of threads
 * without the writer lock: RocksDB reads are thread-safe and each partition's sketches have their
 * own monitor. A reader may see a write in RocksDB a moment before it is in the sketches; the
 * protocol's verify step reports partitions that changed during a round. {@link #close()} waits for
 * running calls, closes open cursors, then every native handle, in reverse order of creation.
 *
 * <p>All calls block (RocksDB I/O): never call them on a Vert.x event loop.
 */
public final class ReplicaStore implements AutoCloseable {
  /** Version of the on-disk layout written in {@code meta}. */
  public static final int STORE_FORMAT = 1;

  static final int BULK_BATCH = 10_000;
  private static final byte[] EMPTY = new byte[0];
  private static final byte[] META_FORMAT = ascii("format");
  private static final byte[] META_HASH_ID = ascii("hash_id");
  private static final byte[] META_SEED_FP = ascii("seed_fingerprint");
  private static final byte[] META_PARTITIONS = ascii("partitions_log2");
  private static final byte[] META_NODE_ID = ascii("node_id");
  private static final byte[] META_CLOCK = ascii("clock_hwm");
  private static final byte[] META_PROGRESS = ascii("progress/");
  private static final byte PROGRESS_FORMAT = 1;

  static {
    RocksDB.loadLibrary();
  }

  private final StoreOptions options;
  private final SketchParams params;
  private final HashSpec spec;
  private final long origin;
  private final HybridClock clock;
  private final Hooks hooks;
  private volatile FaultInjector faultInjector = FaultInjector.NONE;
  private final List<AutoCloseable> natives = new ArrayList<>();
  private final RocksDB db;
  private final ColumnFamilyHandle records;
  private final ColumnFamilyHandle digests;
  private final ColumnFamilyHandle meta;
  private final WriteOptions writeOptions;
  private final WriteBatch batch; // reused under the writer lock
  private final PartitionState[] states; // null without sketches
  private final Sketches sketches;
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
  private final ReentrantLock writer = new ReentrantLock();
  private final Set<IndexCursor> openCursors = ConcurrentHashMap.newKeySet();
  private final AtomicLong recordCount = new AtomicLong();
  private final LongAdder localWrites = new LongAdder();
  private final LongAdder appliedRecords = new LongAdder();
  private final LongAdder purgedTombstones = new LongAdder();
  private volatile boolean closed;
  private long rebuildMillis;
  private double rebuildKeysPerSecond;
  private long rebuildCpuMillis;
  private double rebuildKeysPerCpuSecond;
  private static final java.lang.management.ThreadMXBean THREADS =
      java.lang.management.ManagementFactory.getThreadMXBean();

  /** Test seams: element derivation and a failure injected just before a batch commits. */
  static class Hooks {
    static final Hooks DEFAULT = new Hooks();

    long element(
        HashSpec spec, long keyHash, long version, long origin, boolean tombstone, long valueHash) {
      return spec.element(keyHash, version, origin, tombstone, valueHash);
    }

    void beforeCommit() throws RocksDBException {}
  }

  private ReplicaStore(StoreOptions options, Hooks hooks) {
    this.options = options;
    this.params = options.params();
    this.spec = params.spec();
    this.origin = options.nodeId() == null ? 0 : NodeIds.origin(options.nodeId());
    this.clock = options.clock();
    this.hooks = hooks;
    Path dir = options.dataDir().toAbsolutePath();
    RocksDB opened = null;
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
      DBOptions dbOptions =
          own(new DBOptions())
              .setCreateIfMissing(!options.readOnly())
              .setCreateMissingColumnFamilies(!options.readOnly())
              .setMaxBackgroundJobs(2)
              .setBytesPerSync(1 << 20);
      Cache cache = own(new LRUCache(64L << 20));
      BloomFilter bloom = own(new BloomFilter(10));
      ColumnFamilyOptions recordOptions =
          own(new ColumnFamilyOptions())
              .setTableFormatConfig(tableConfig(cache).setFilterPolicy(bloom));
      ColumnFamilyOptions digestOptions =
          own(new ColumnFamilyOptions()).setTableFormatConfig(tableConfig(cache));
      ColumnFamilyOptions metaOptions =
          own(new ColumnFamilyOptions()).setTableFormatConfig(tableConfig(cache));
      ColumnFamilyOptions defaultOptions =
          own(new ColumnFamilyOptions()).setTableFormatConfig(tableConfig(cache));
      List<ColumnFamilyDescriptor> descriptors =
          List.of(
              new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, defaultOptions),
              new ColumnFamilyDescriptor(ascii("records"), recordOptions),
              new ColumnFamilyDescriptor(ascii("digests"), digestOptions),
              new ColumnFamilyDescriptor(ascii("meta"), metaOptions));
      opened =
          options.readOnly()
              ? RocksDB.openReadOnly(dbOptions, dir.toString(), descriptors, handles)
              : RocksDB.open(dbOptions, dir.toString(), descriptors, handles);
    } catch (RocksDBException | java.io.IOException | RuntimeException e) {
      handles.forEach(ColumnFamilyHandle::close);
      closeNatives();
      if (e instanceof StoreException se) {
        throw se;
      }
      throw new StoreException("cannot open store at " + dir + ": " + e.getMessage(), e);
    }
    this.db = opened;
    // Closed in reverse: handles, then the database, then options (registered earlier).
    natives.add(db);
    natives.addAll(handles);
    this.records = handles.get(1);
    this.digests = handles.get(2);
    this.meta = handles.get(3);
    this.writeOptions = own(new WriteOptions().setSync(options.syncWrites()));
    this.batch = own(new WriteBatch());
    try {
      checkMeta(dir);
      this.states = options.maintainSketches() ? rebuild() : null;
      if (!options.maintainSketches()) {
        rebuild();
      }
    } catch (RuntimeException e) {
      closeNatives();
      throw e;
    }
    this.sketches = new Sketches();
  }

  /** Opens (creating when missing, unless read-only) the store and rebuilds its sketches. */
  public static ReplicaStore open(StoreOptions options) {
    return new ReplicaStore(options, Hooks.DEFAULT);
  }

  static ReplicaStore open(StoreOptions options, Hooks hooks) {
    return new ReplicaStore(options, hooks);
  }

  private static BlockBasedTableConfig tableConfig(Cache cache) {
    // Format version 5 so that RocksDB's ldb tool (7.x in Debian) can read the files.
    return new BlockBasedTableConfig().setFormatVersion(5).setBlockCache(cache);
  }

  private <T extends AutoCloseable> T own(T handle) {
    natives.add(handle);
    return handle;
  }

  // ------------------------------------------------------------------------------------------ meta

  private void checkMeta(Path dir) {
    try {
      byte[] format = db.get(meta, META_FORMAT);
      if (format == null) {
        try (RocksIterator it = db.newIterator(records)) {
          it.seekToFirst();
          if (it.isValid()) {
            throw new StoreException(
                "store at "
                    + dir
                    + " holds records but no meta column family entries: refusing to"
                    + " guess its sketch parameters");
          }
        }
        if (options.readOnly()) {
          throw new StoreException("store at " + dir + " was never initialized (no meta)");
        }
        try (WriteBatch b = new WriteBatch()) {
          b.put(meta, META_FORMAT, intBytes(STORE_FORMAT));
          b.put(meta, META_HASH_ID, intBytes(spec.id()));
          b.put(meta, META_SEED_FP, intBytes(spec.seedFingerprint()));
          b.put(meta, META_PARTITIONS, intBytes(params.partitionsLog2()));
          b.put(meta, META_NODE_ID, options.nodeId().getBytes(StandardCharsets.UTF_8));
          db.write(writeOptions, b);
        }
        return;
      }
      int storedFormat = readInt(format, "format");
      if (storedFormat != STORE_FORMAT) {
        throw new StoreException(
            "store at "
                + dir
                + " has store format "
                + storedFormat
                + "; this build reads format "
                + STORE_FORMAT);
      }
      int hashId = readInt(db.get(meta, META_HASH_ID), "hash_id");
      if (hashId != spec.id()) {
        throw mismatch(dir, "hash id", hashId, spec.id());
      }
      int seedFp = readInt(db.get(meta, META_SEED_FP), "seed_fingerprint");
      if (seedFp != spec.seedFingerprint()) {
        throw new StoreException(
            "store at "
                + dir
                + " was created with seed fingerprint "
                + HashSpec.hex(seedFp)
                + ", opened with "
                + HashSpec.hex(spec.seedFingerprint())
                + ": its elements and digest index depend on the cluster seed; use the same secret"
                + " or a new data directory");
      }
      int log2 = readInt(db.get(meta, META_PARTITIONS), "partitions_log2");
      if (log2 != params.partitionsLog2()) {
        throw mismatch(dir, "partitions log2", log2, params.partitionsLog2());
      }
      byte[] node = db.get(meta, META_NODE_ID);
      if (!options.readOnly() && node != null) {
        String storedNode = new String(node, StandardCharsets.UTF_8);
        if (!storedNode.equals(options.nodeId())) {
          throw new StoreException(
              "store at "
                  + dir
                  + " belongs to node id '"
                  + storedNode
                  + "', opened as '"
                  + options.nodeId()
                  + "': each node needs its own data directory");
        }
      }
      byte[] hwm = db.get(meta, META_CLOCK);
      if (hwm != null) {
        if (hwm.length != 8) {
          throw new StoreException("meta clock_hwm is " + hwm.length + " bytes, expected 8");
        }
        clock.observe(RecordCodec.getLong(hwm, 0));
      }
    } catch (RocksDBException e) {
      throw new StoreException("cannot read meta of store at " + dir + ": " + e.getMessage(), e);
    }
  }

  private static StoreException mismatch(Path dir, String what, int stored, int wanted) {
    return new StoreException(
        "store at "
            + dir
            + " was created with "
            + what
            + " "
            + stored
            + ", opened with "
            + wanted
            + ": sketches and the digest index depend on it; use the same value or a new data"
            + " directory");
  }

  private static int readInt(byte[] b, String name) {
    if (b == null || b.length != 4) {
      throw new StoreException(
          "meta entry '"
              + name
              + "' is "
              + (b == null ? "missing" : b.length + " bytes")
              + ", expected 4 bytes");
    }
    return RecordCodec.getInt(b, 0);
  }

  // --------------------------------------------------------------------------------------- rebuild

  /**
   * Scans the digest index; returns fresh sketches (or null without sketches) and counts records.
   */
  private PartitionState[] rebuild() {
    long t0 = System.nanoTime();
    int p = params.partitions();
    PartitionState[] fresh = null;
    if (options.maintainSketches()) {
      fresh = new PartitionState[p];
      for (int i = 0; i < p; i++) {
        fresh[i] = new PartitionState(params, options.estimators());
      }
    }
    int threads = Math.min(options.rebuildThreads(), p);
    long[] counts = new long[threads];
    long[] cpuNanos = new long[threads];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    PartitionState[] target = fresh;
    Thread[] workers = new Thread[threads];
    for (int w = 0; w < threads; w++) {
      int lo = (int) ((long) p * w / threads);
      int hi = (int) ((long) p * (w + 1) / threads);
      int slot = w;
      Runnable scan =
          () -> {
            try {
              long c0 = THREADS.getCurrentThreadCpuTime();
              counts[slot] = scanIndex(lo, hi, target);
              cpuNanos[slot] = THREADS.getCurrentThreadCpuTime() - c0;
            } catch (Throwable e) {
              failure.compareAndSet(null, e);
            }
          };
      if (threads == 1) {
        scan.run();
      } else {
        workers[w] = new Thread(scan, "store-rebuild-" + w);
        workers[w].start();
      }
    }
    for (Thread t : workers) {
      if (t != null) {
        try {
          t.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new StoreException("interrupted while rebuilding sketches", e);
        }
      }
    }
    if (failure.get() != null) {
      throw new StoreException(
          "sketch rebuild failed: " + failure.get().getMessage(), failure.get());
    }
    long total = Arrays.stream(counts).sum();
    recordCount.set(total);
    long nanos = System.nanoTime() - t0;
    rebuildMillis = nanos / 1_000_000;
    rebuildKeysPerSecond = total == 0 ? 0 : total * 1e9 / nanos;
    long cpu = Arrays.stream(cpuNanos).sum();
    rebuildCpuMillis = cpu / 1_000_000;
    rebuildKeysPerCpuSecond = total == 0 || cpu <= 0 ? 0 : total * 1e9 / cpu;
    return fresh;
  }

  /** Adds every index element of partitions [lo, hi) to {@code target} (may be null); the count. */
  private long scanIndex(int lo, int hi, PartitionState[] target) throws RocksDBException {
    long n = 0;
    try (Slice lower = new Slice(DigestKeys.partitionStart(lo));
        Slice upper = hi < (1 << 16) ? new Slice(DigestKeys.partitionStart(hi)) : null;
        ReadOptions ro = new ReadOptions().setFillCache(false).setReadaheadSize(2 << 20)) {
      ro.setIterateLowerBound(lower);
      if (upper != null) {
        ro.setIterateUpperBound(upper);
      }
      try (RocksIterator it = db.newIterator(digests, ro)) {
        ByteBuffer buf = ByteBuffer.allocateDirect(DigestKeys.PREFIX);
        for (it.seekToFirst(); it.isValid(); it.next()) {
          buf.clear();
          int len = it.key(buf);
          if (len < DigestKeys.PREFIX) {
            throw new StoreException("digest index row of " + len + " bytes is shorter than 10");
          }
          if (target != null) {
            int part = buf.getShort(0) & 0xFFFF;
            target[part].addUnsynchronized(buf.getLong(2));
          }
          n++;
        }
        it.status();
      }
    }
    return n;
  }

  // ---------------------------------------------------------------------------------- local writes

  /**
   * Writes {@code value} under {@code key} with a new version of this node; returns the version.
   */
  public long put(byte[] key, byte[] value) {
    if (value == null) {
      throw new IllegalArgumentException("value is null (use delete)");
    }
    return writeLocal(key, value, false);
  }

  /** Writes a tombstone for {@code key} (whether or not it exists); returns its version. */
  public long delete(byte[] key) {
    return writeLocal(key, EMPTY, true);
  }

  private long writeLocal(byte[] key, byte[] value, boolean tombstone) {
    if (key == null) {
      throw new IllegalArgumentException("key is null");
    }
    lifecycle.readLock().lock();
    try {
      checkWritable();
      long keyHash = spec.keyHash(key);
      int p = HashSpec.partition(keyHash, params.partitionsLog2());
      long valueHash = spec.valueHash(value);
      writer.lock();
      try {
        Stored cur = decodeOrNull(key, db.get(records, key));
        long curElement = 0;
        if (cur != null) {
          clock.observe(cur.version);
          curElement = element(keyHash, cur);
        }
        long version = clock.now();
        long element = hooks.element(spec, keyHash, version, origin, tombstone, valueHash);
        batch.clear();
        batch.put(
            records, key, RecordCodec.encode(key, version, origin, tombstone, valueHash, value));
        if (cur != null) {
          batch.delete(digests, DigestKeys.of(p, curElement, key));
        }
        batch.put(digests, DigestKeys.of(p, element, key), EMPTY);
        batch.put(meta, META_CLOCK, longBytes(version));
        commit(batch, 1);
        if (cur == null) {
          recordCount.incrementAndGet();
        }
        if (states != null) {
          states[p].replace(cur != null, curElement, element);
        }
        localWrites.increment();
        return version;
      } catch (RocksDBException e) {
        throw new StoreException(
            "cannot read key " + Record.hex(key, 32) + ": " + e.getMessage(), e);
      } finally {
        writer.unlock();
      }
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * Bulk load: applies {@code records} (as given: their versions and origins) through the conflict
   * rule in write batches of {@value #BULK_BATCH}; returns how many were applied. Each batch is
   * atomic; a failure leaves the earlier batches applied.
   */
  public long putAll(List<Record> records) {
    long applied = 0;
    for (int i = 0; i < records.size(); i += BULK_BATCH) {
      applied += apply(records.subList(i, Math.min(records.size(), i + BULK_BATCH))).applied();
    }
    return applied;
  }

  // ---------------------------------------------------------------------------------------- repair

  /** Per-key state while resolving a batch. */
  private static final class Slot {
    final byte[] key;
    final long keyHash;
    final int partition;
    Stored original;
    long originalElement;
    Record winner;
    long wVersion;
    long wOrigin;
    long wValueHash;
    boolean wTombstone;
    boolean changed;

    Slot(byte[] key, long keyHash, int partition) {
      this.key = key;
      this.keyHash = keyHash;
      this.partition = partition;
    }
  }

  /**
   * Applies repair records in ONE atomic write batch: for each record the winner of (current,
   * incoming) under {@link ConflictRule} is kept (several records for one key in a batch resolve
   * the same way). Sketches are updated only after the batch committed; a failure throws {@link
   * StoreException} and changes nothing. Incoming versions are observed by the clock.
   */
  public ApplyResult apply(List<Record> incoming) {
    if (incoming.isEmpty()) {
      return ApplyResult.EMPTY;
    }
    lifecycle.readLock().lock();
    try {
      checkWritable();
      // Hashing outside the writer lock.
      HashMap<ByteBuffer, Slot> byKey = new HashMap<>(incoming.size() * 2);
      List<Slot> slots = new ArrayList<>(incoming.size());
      Slot[] slotOf = new Slot[incoming.size()];
      long[] valueHashes = new long[incoming.size()];
      long maxVersion = 0;
      for (int i = 0; i < incoming.size(); i++) {
        Record r = incoming.get(i);
        valueHashes[i] = spec.valueHash(r.value());
        if (Long.compareUnsigned(r.version(), maxVersion) > 0) {
          maxVersion = r.version();
        }
        Slot s = byKey.get(ByteBuffer.wrap(r.key()));
        if (s == null) {
          long kh = spec.keyHash(r.key());
          s = new Slot(r.key(), kh, HashSpec.partition(kh, params.partitionsLog2()));
          byKey.put(ByteBuffer.wrap(r.key()), s);
          slots.add(s);
        }
        slotOf[i] = s;
      }
      int applied = 0;
      int stale = 0;
      int duplicate = 0;
      writer.lock();
      try {
        List<byte[]> keys = new ArrayList<>(slots.size());
        for (Slot s : slots) {
          keys.add(s.key);
        }
        List<byte[]> current = db.multiGetAsList(Collections.nCopies(keys.size(), records), keys);
        for (int j = 0; j < slots.size(); j++) {
          Slot s = slots.get(j);
          Stored cur = decodeOrNull(s.key, current.get(j));
          if (cur != null) {
            s.original = cur;
            s.originalElement = element(s.keyHash, cur);
            s.wVersion = cur.version;
            s.wOrigin = cur.origin;
            s.wValueHash = cur.valueHash;
            s.wTombstone = cur.tombstone;
          }
        }
        for (int i = 0; i < incoming.size(); i++) {
          Record r = incoming.get(i);
          Slot s = slotOf[i];
          boolean present = s.original != null || s.winner != null;
          int c =
              present
                  ? ConflictRule.compare(
                      r.version(),
                      r.origin(),
                      valueHashes[i],
                      r.tombstone(),
                      s.wVersion,
                      s.wOrigin,
                      s.wValueHash,
                      s.wTombstone)
                  : 1;
          if (c > 0) {
            s.winner = r;
            s.wVersion = r.version();
            s.wOrigin = r.origin();
            s.wValueHash = valueHashes[i];
            s.wTombstone = r.tombstone();
            s.changed = true;
            applied++;
          } else if (c == 0) {
            duplicate++;
          } else {
            stale++;
          }
        }
        batch.clear();
        int changed = 0;
        long[] newElements = new long[slots.size()];
        for (int j = 0; j < slots.size(); j++) {
          Slot s = slots.get(j);
          if (!s.changed) {
            continue;
          }
          changed++;
          Record w = s.winner;
          newElements[j] =
              hooks.element(spec, s.keyHash, s.wVersion, s.wOrigin, s.wTombstone, s.wValueHash);
          batch.put(
              records,
              s.key,
              RecordCodec.encode(
                  s.key, s.wVersion, s.wOrigin, s.wTombstone, s.wValueHash, w.value()));
          if (s.original != null) {
            batch.delete(digests, DigestKeys.of(s.partition, s.originalElement, s.key));
          }
          batch.put(digests, DigestKeys.of(s.partition, newElements[j], s.key), EMPTY);
        }
        if (changed > 0) {
          long hwm = Long.compareUnsigned(maxVersion, clock.last()) > 0 ? maxVersion : clock.last();
          batch.put(meta, META_CLOCK, longBytes(hwm));
          commit(batch, changed);
          for (int j = 0; j < slots.size(); j++) {
            Slot s = slots.get(j);
            if (!s.changed) {
              continue;
            }
            if (s.original == null) {
              recordCount.incrementAndGet();
            }
            if (states != null) {
              states[s.partition].replace(s.original != null, s.originalElement, newElements[j]);
            }
          }
        }
        clock.observe(maxVersion);
        appliedRecords.add(applied);
        return new ApplyResult(applied, stale, duplicate);
      } catch (RocksDBException e) {
        throw new StoreException(
            "cannot read the current records of a batch of "
                + incoming.size()
                + ": "
                + e.getMessage()
                + " (store and sketches unchanged)",
            e);
      } finally {
        writer.unlock();
      }
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  private void commit(WriteBatch b, int records) {
    try {
      hooks.beforeCommit();
      faultInjector.beforeWrite(records);
      db.write(writeOptions, b);
    } catch (RocksDBException e) {
      throw new StoreException(
          "write batch of "
              + records
              + " record(s) failed: "
              + e.getMessage()
              + " (store and sketches unchanged)",
          e);
    } finally {
      b.clear();
    }
  }

  // ----------------------------------------------------------------------------------------- reads

  /** The current record of {@code key}, tombstones included (callers treat them as absent). */
  public Optional<Record> get(byte[] key) {
    lifecycle.readLock().lock();
    try {
      checkOpen();
      Stored s = decodeOrNull(key, db.get(records, key));
      return s == null ? Optional.empty() : Optional.of(s.toRecord());
    } catch (RocksDBException e) {
      throw new StoreException("cannot read key " + Record.hex(key, 32) + ": " + e.getMessage(), e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * The current records of {@code partition} whose element is in {@code elements}, read at one
   * snapshot through the digest index. Elements no longer present (overwritten meanwhile) are
   * skipped; an element shared by several keys yields all of them.
   */
  public List<Record> recordsFor(int partition, long[] elements) {
    checkPartition(partition);
    lifecycle.readLock().lock();
    try {
      checkOpen();
      Snapshot snap = db.getSnapshot();
      try (ReadOptions ro = new ReadOptions().setSnapshot(snap)) {
        LinkedHashSet<ByteBuffer> keys = new LinkedHashSet<>();
        try (RocksIterator it = db.newIterator(digests, ro)) {
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
        List<byte[]> keyList = new ArrayList<>(keys.size());
        for (ByteBuffer b : keys) {
          keyList.add(
              Arrays.copyOfRange(b.array(), b.arrayOffset(), b.arrayOffset() + b.remaining()));
        }
        List<Record> out = new ArrayList<>(keyList.size());
        for (int from = 0; from < keyList.size(); from += BULK_BATCH) {
          List<byte[]> chunk = keyList.subList(from, Math.min(keyList.size(), from + BULK_BATCH));
          List<byte[]> values =
              db.multiGetAsList(ro, Collections.nCopies(chunk.size(), records), chunk);
          for (int i = 0; i < chunk.size(); i++) {
            Stored s = decodeOrNull(chunk.get(i), values.get(i));
            if (s == null) {
              continue;
            }
            long kh = spec.keyHash(s.key);
            if (HashSpec.partition(kh, params.partitionsLog2()) != partition) {
              throw new StoreException(
                  "digest index lists key "
                      + Record.hex(s.key, 32)
                      + " under partition "
                      + partition
                      + " but it hashes to another partition");
            }
            out.add(s.toRecord());
          }
        }
        return out;
      } finally {
        db.releaseSnapshot(snap);
      }
    } catch (RocksDBException e) {
      throw new StoreException(
          "cannot read records of partition " + partition + ": " + e.getMessage(), e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /** Full scan of the records in key order (one implicit snapshot), validating each. */
  public void forEachRecord(Consumer<Record> action) {
    lifecycle.readLock().lock();
    try {
      checkOpen();
      try (ReadOptions ro = new ReadOptions().setFillCache(false);
          RocksIterator it = db.newIterator(records, ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          byte[] key = it.key();
          action.accept(RecordCodec.decode(key, it.value()).toRecord());
        }
        it.status();
      }
    } catch (RocksDBException e) {
      throw new StoreException("record scan failed: " + e.getMessage(), e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /** Records currently stored (tombstones included). */
  public long recordCount() {
    return recordCount.get();
  }

  public StoreStats stats() {
    return new StoreStats(
        recordCount.get(),
        rebuildMillis,
        rebuildKeysPerSecond,
        rebuildCpuMillis,
        rebuildKeysPerCpuSecond,
        Math.min(options.rebuildThreads(), params.partitions()),
        localWrites.sum(),
        appliedRecords.sum(),
        purgedTombstones.sum());
  }

  public SketchParams params() {
    return params;
  }

  public StoreOptions options() {
    return options;
  }

  /**
   * This node's origin ({@link NodeIds#origin} of the node id; 0 for a read-only open without one).
   */
  public long origin() {
    return origin;
  }

  /** Installs a test-only fault injector (null removes it); see {@link FaultInjector}. */
  public void faultInjector(FaultInjector f) {
    faultInjector = f == null ? FaultInjector.NONE : f;
  }

  public HybridClock clock() {
    return clock;
  }

  /** The sketches the reconciliation session reads; fails when sketches are disabled. */
  public PartitionSketches sketches() {
    if (states == null) {
      throw new IllegalStateException("store opened with maintainSketches=false (benchmark mode)");
    }
    return sketches;
  }

  // ----------------------------------------------------------------------------------------- purge

  /**
   * Removes tombstones whose version is older than {@code nowMillis - tombstoneGrace} (records,
   * index rows and sketch elements). Scans the records without the writer lock and re-checks each
   * candidate under it, in batches; returns how many were removed.
   */
  public int purgeTombstones(long nowMillis) {
    lifecycle.readLock().lock();
    try {
      checkWritable();
      long cutoffMillis = nowMillis - options.tombstoneGrace().toMillis();
      int purged = 0;
      List<byte[]> candidates = new ArrayList<>();
      try (ReadOptions ro = new ReadOptions().setFillCache(false);
          RocksIterator it = db.newIterator(records, ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          byte[] key = it.key();
          Stored s = RecordCodec.decode(key, it.value());
          if (s.tombstone && HybridClock.physicalMillis(s.version) < cutoffMillis) {
            candidates.add(key);
            if (candidates.size() == BULK_BATCH) {
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
      lifecycle.readLock().unlock();
    }
  }

  private int purgeBatch(List<byte[]> keys, long cutoffMillis) throws RocksDBException {
    writer.lock();
    try {
      List<byte[]> current = db.multiGetAsList(Collections.nCopies(keys.size(), records), keys);
      batch.clear();
      int[] partitions = new int[keys.size()];
      long[] elements = new long[keys.size()];
      boolean[] remove = new boolean[keys.size()];
      int n = 0;
      for (int i = 0; i < keys.size(); i++) {
        byte[] key = keys.get(i);
        Stored s = decodeOrNull(key, current.get(i));
        if (s == null || !s.tombstone || HybridClock.physicalMillis(s.version) >= cutoffMillis) {
          continue; // rewritten since the scan
        }
        long kh = spec.keyHash(key);
        partitions[i] = HashSpec.partition(kh, params.partitionsLog2());
        elements[i] = element(kh, s);
        remove[i] = true;
        batch.delete(records, key);
        batch.delete(digests, DigestKeys.of(partitions[i], elements[i], key));
        n++;
      }
      if (n == 0) {
        return 0;
      }
      commit(batch, n);
      recordCount.addAndGet(-n);
      purgedTombstones.add(n);
      if (states != null) {
        for (int i = 0; i < keys.size(); i++) {
          if (remove[i]) {
            states[partitions[i]].remove(elements[i]);
          }
        }
      }
      return n;
    } finally {
      writer.unlock();
    }
  }

  // -------------------------------------------------------------------------------------- progress

  /** Records that {@code partition} of round {@code roundId} with {@code peer} is reconciled. */
  public void markPartitionDone(String peer, long roundId, int partition) {
    checkPartition(partition);
    lifecycle.readLock().lock();
    try {
      checkWritable();
      writer.lock();
      try {
        byte[] key = progressKey(peer, roundId);
        BitSet done = decodeProgress(db.get(meta, key), peer, roundId);
        done.set(partition);
        byte[] prefix = progressPrefix(peer);
        try (WriteBatch b = new WriteBatch()) {
          // One round per peer: an older round's progress is dropped.
          for (byte[] other : metaKeysWithPrefix(prefix)) {
            if (!Arrays.equals(other, key)) {
              b.delete(meta, other);
            }
          }
          byte[] bits = done.toByteArray();
          byte[] value = new byte[1 + bits.length];
          value[0] = PROGRESS_FORMAT;
          System.arraycopy(bits, 0, value, 1, bits.length);
          b.put(meta, key, value);
          db.write(writeOptions, b);
        }
      } catch (RocksDBException e) {
        throw new StoreException(
            "cannot record progress for peer " + peer + ": " + e.getMessage(), e);
      } finally {
        writer.unlock();
      }
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /** Partitions already reconciled in round {@code roundId} with {@code peer} (empty if none). */
  public BitSet partitionsDone(String peer, long roundId) {
    lifecycle.readLock().lock();
    try {
      checkOpen();
      return decodeProgress(db.get(meta, progressKey(peer, roundId)), peer, roundId);
    } catch (RocksDBException e) {
      throw new StoreException("cannot read progress for peer " + peer + ": " + e.getMessage(), e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /** Forgets every round's progress with {@code peer}. */
  public void clearProgress(String peer) {
    lifecycle.readLock().lock();
    try {
      checkWritable();
      writer.lock();
      try (WriteBatch b = new WriteBatch()) {
        for (byte[] k : metaKeysWithPrefix(progressPrefix(peer))) {
          b.delete(meta, k);
        }
        db.write(writeOptions, b);
      } catch (RocksDBException e) {
        throw new StoreException(
            "cannot clear progress for peer " + peer + ": " + e.getMessage(), e);
      } finally {
        writer.unlock();
      }
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  private List<byte[]> metaKeysWithPrefix(byte[] prefix) throws RocksDBException {
    List<byte[]> out = new ArrayList<>();
    try (RocksIterator it = db.newIterator(meta)) {
      for (it.seek(prefix); it.isValid(); it.next()) {
        byte[] k = it.key();
        if (!DigestKeys.startsWith(k, prefix)) {
          break;
        }
        out.add(k);
      }
      it.status();
    }
    return out;
  }

  private static byte[] progressPrefix(String peer) {
    byte[] name = peer.getBytes(StandardCharsets.UTF_8);
    if (name.length > 0xFFFF) {
      throw new IllegalArgumentException("peer id of " + name.length + " bytes is too long");
    }
    byte[] out = new byte[META_PROGRESS.length + 2 + name.length];
    System.arraycopy(META_PROGRESS, 0, out, 0, META_PROGRESS.length);
    out[META_PROGRESS.length] = (byte) (name.length >>> 8);
    out[META_PROGRESS.length + 1] = (byte) name.length;
    System.arraycopy(name, 0, out, META_PROGRESS.length + 2, name.length);
    return out;
  }

  private static byte[] progressKey(String peer, long roundId) {
    byte[] prefix = progressPrefix(peer);
    byte[] out = Arrays.copyOf(prefix, prefix.length + 8);
    RecordCodec.putLong(out, prefix.length, roundId);
    return out;
  }

  private static BitSet decodeProgress(byte[] value, String peer, long roundId) {
    if (value == null) {
      return new BitSet();
    }
    if (value.length == 0 || value[0] != PROGRESS_FORMAT) {
      throw new StoreException(
          "progress entry of peer "
              + peer
              + " round "
              + roundId
              + " has format "
              + (value.length == 0 ? "(empty)" : String.format("0x%02x", value[0]))
              + ", expected 0x01");
    }
    return BitSet.valueOf(Arrays.copyOfRange(value, 1, value.length));
  }

  // ------------------------------------------------------------------------------------ self-check

  /**
   * Recomputes every partition's sketches from its records and compares them with the maintained
   * ones, and checks the digest index against the records. Writes continue meanwhile: each
   * partition is compared at its own snapshot, taken together with a copy of its sketches under the
   * writer lock. Cost: one pass over the index with a point read per record, plus one pass over
   * records and index at a common snapshot.
   */
  public SelfCheck selfCheck() {
    if (states == null) {
      throw new IllegalStateException("store opened with maintainSketches=false (benchmark mode)");
    }
    lifecycle.readLock().lock();
    try {
      checkOpen();
      long t0 = System.nanoTime();
      List<String> problems = new ArrayList<>();
      List<SelfCheck.PartitionCheck> parts = new ArrayList<>(params.partitions());
      for (int p = 0; p < params.partitions(); p++) {
        parts.add(checkPartition(p, problems));
      }
      long[] indexCounts = new long[3];
      checkIndexAgainstRecords(problems, indexCounts);
      boolean ok = problems.isEmpty() && parts.stream().allMatch(SelfCheck.PartitionCheck::ok);
      return new SelfCheck(
          ok,
          List.copyOf(parts),
          indexCounts[0],
          indexCounts[1],
          indexCounts[2],
          List.copyOf(problems),
          Duration.ofNanos(System.nanoTime() - t0));
    } catch (RocksDBException e) {
      throw new StoreException("self-check failed to read: " + e.getMessage(), e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  private SelfCheck.PartitionCheck checkPartition(int p, List<String> problems)
      throws RocksDBException {
    PartitionState.Copy maintained;
    Snapshot snap;
    writer.lock();
    try {
      snap = db.getSnapshot();
      maintained = states[p].copy();
    } finally {
      writer.unlock();
    }
    PartitionState fresh = new PartitionState(params, options.estimators());
    long n = 0;
    try (ReadOptions ro = new ReadOptions().setSnapshot(snap).setFillCache(false);
        Slice lower = new Slice(DigestKeys.partitionStart(p));
        Slice upper = p + 1 < (1 << 16) ? new Slice(DigestKeys.partitionStart(p + 1)) : null;
        ReadOptions scan = new ReadOptions().setSnapshot(snap).setFillCache(false)) {
      scan.setIterateLowerBound(lower);
      if (upper != null) {
        scan.setIterateUpperBound(upper);
      }
      List<byte[]> rows = new ArrayList<>();
      try (RocksIterator it = db.newIterator(digests, scan)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          rows.add(it.key());
          if (rows.size() == 4096) {
            n += checkRows(p, rows, ro, fresh, problems);
            rows.clear();
          }
        }
        it.status();
      }
      n += checkRows(p, rows, ro, fresh, problems);
    } finally {
      db.releaseSnapshot(snap);
    }
    PartitionState.Copy rebuilt = fresh.copy();
    List<String> diffs = new ArrayList<>();
    if (!rebuilt.fingerprint().equals(maintained.fingerprint())) {
      diffs.add("fingerprint " + maintained.fingerprint() + " != rebuilt " + rebuilt.fingerprint());
    }
    if (!Arrays.equals(rebuilt.estimatorBytes(), maintained.estimatorBytes())) {
      diffs.add("estimator wire bytes differ");
    }
    if (!rebuilt.tables().sameCells(maintained.tables())) {
      diffs.add(
          "maintained IBLTs " + params.maxShape() + " / " + params.maxShapeBase3() + " differ");
    }
    String mismatch = diffs.isEmpty() ? null : String.join("; ", diffs);
    return new SelfCheck.PartitionCheck(p, mismatch == null, n, mismatch);
  }

  /**
   * Verifies index rows against their records and adds the records' own elements to {@code fresh}.
   */
  private long checkRows(
      int p, List<byte[]> rows, ReadOptions ro, PartitionState fresh, List<String> problems)
      throws RocksDBException {
    if (rows.isEmpty()) {
      return 0;
    }
    List<byte[]> keys = new ArrayList<>(rows.size());
    for (byte[] row : rows) {
      keys.add(DigestKeys.key(row));
    }
    List<byte[]> values = db.multiGetAsList(ro, Collections.nCopies(keys.size(), records), keys);
    long n = 0;
    for (int i = 0; i < rows.size(); i++) {
      byte[] key = keys.get(i);
      byte[] value = values.get(i);
      if (value == null) {
        problem(
            problems,
            "partition " + p + ": index row for key " + Record.hex(key, 32) + " has no record");
        continue;
      }
      Stored s;
      try {
        s = RecordCodec.decode(key, value);
      } catch (StoreException.Corrupt e) {
        problem(problems, e.getMessage());
        continue;
      }
      long kh = spec.keyHash(key);
      long vh = spec.valueHash(s.value);
      if (vh != s.valueHash) {
        problem(problems, "record for key " + Record.hex(key, 32) + " stores a wrong value hash");
      }
      long e = hooks.element(spec, kh, s.version, s.origin, s.tombstone, vh);
      int part = HashSpec.partition(kh, params.partitionsLog2());
      if (part != p || e != DigestKeys.element(rows.get(i))) {
        problem(
            problems,
            "partition "
                + p
                + ": index row for key "
                + Record.hex(key, 32)
                + " does not match its record (partition "
                + part
                + ", element "
                + Long.toHexString(e)
                + ")");
        continue;
      }
      fresh.addUnsynchronized(e);
      n++;
    }
    return n;
  }

  /**
   * At one snapshot: every record decodes, and the multiset of (partition, element, key) derived
   * from the records equals the index rows (count and two independent 64-bit sums per partition).
   */
  private void checkIndexAgainstRecords(List<String> problems, long[] counts)
      throws RocksDBException {
    int parts = params.partitions();
    long[] recCount = new long[parts];
    long[] recSum = new long[parts];
    long[] idxCount = new long[parts];
    long[] idxSum = new long[parts];
    Snapshot snap = db.getSnapshot();
    try (ReadOptions ro = new ReadOptions().setSnapshot(snap).setFillCache(false)) {
      try (RocksIterator it = db.newIterator(records, ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          byte[] key = it.key();
          counts[0]++;
          Stored s;
          try {
            s = RecordCodec.decode(key, it.value());
          } catch (StoreException.Corrupt e) {
            counts[2]++;
            problem(problems, e.getMessage());
            continue;
          }
          long kh = spec.keyHash(key);
          int p = HashSpec.partition(kh, params.partitionsLog2());
          long e = hooks.element(spec, kh, s.version, s.origin, s.tombstone, s.valueHash);
          recCount[p]++;
          recSum[p] += spec.fingerprintHash(e ^ spec.fingerprintHash(kh));
        }
        it.status();
      }
      try (RocksIterator it = db.newIterator(digests, ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          byte[] row = it.key();
          counts[1]++;
          int p = DigestKeys.partition(row);
          if (p >= parts) {
            problem(problems, "index row in partition " + p + " >= " + parts);
            continue;
          }
          long kh = spec.keyHash(row, DigestKeys.PREFIX, row.length - DigestKeys.PREFIX);
          idxCount[p]++;
          idxSum[p] += spec.fingerprintHash(DigestKeys.element(row) ^ spec.fingerprintHash(kh));
        }
        it.status();
      }
    } finally {
      db.releaseSnapshot(snap);
    }
    for (int p = 0; p < parts; p++) {
      if (recCount[p] != idxCount[p] || recSum[p] != idxSum[p]) {
        problem(
            problems,
            "partition "
                + p
                + ": digest index ("
                + idxCount[p]
                + " rows) does not match records ("
                + recCount[p]
                + ")");
      }
    }
  }

  private static void problem(List<String> problems, String what) {
    if (problems.size() < 100) {
      problems.add(what);
    }
  }

  // ---------------------------------------------------------------------------------------- shared

  private long element(long keyHash, Stored s) {
    return hooks.element(spec, keyHash, s.version, s.origin, s.tombstone, s.valueHash);
  }

  private static Stored decodeOrNull(byte[] key, byte[] value) {
    return value == null ? null : RecordCodec.decode(key, value);
  }

  private void checkOpen() {
    if (closed) {
      throw new StoreException("store at " + options.dataDir() + " is closed");
    }
  }

  private void checkWritable() {
    checkOpen();
    if (options.readOnly()) {
      throw new StoreException("store at " + options.dataDir() + " is open read-only");
    }
  }

  private void checkPartition(int partition) {
    if (partition < 0 || partition >= params.partitions()) {
      throw new IllegalArgumentException(
          "partition " + partition + " outside [0, " + params.partitions() + ")");
    }
  }

  /** Waits for running calls, closes open cursors and every native handle. Idempotent. */
  @Override
  public void close() {
    lifecycle.writeLock().lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      for (IndexCursor c : List.copyOf(openCursors)) {
        c.release();
      }
      closeNatives();
    } finally {
      lifecycle.writeLock().unlock();
    }
  }

  private void closeNatives() {
    for (int i = natives.size() - 1; i >= 0; i--) {
      try {
        natives.get(i).close();
      } catch (Exception e) {
        // keep closing the rest; nothing else can be done with a failing close
      }
    }
    natives.clear();
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static byte[] intBytes(int v) {
    byte[] b = new byte[4];
    RecordCodec.putInt(b, 0, v);
    return b;
  }

  private static byte[] longBytes(long v) {
    byte[] b = new byte[8];
    RecordCodec.putLong(b, 0, v);
    return b;
  }

  // ------------------------------------------------------------------------------ RocksDB figures

  /** The column families whose RocksDB properties {@link #rocksProperty} reads. */
  public static final List<String> COLUMN_FAMILIES = List.of("records", "digests", "meta");

  /**
   * An integer RocksDB property (e.g. {@code rocksdb.estimate-num-keys}) of one of {@link
   * #COLUMN_FAMILIES}, for metrics; -1 while the store is closing or closed, or when RocksDB does
   * not know the property. Reads in-memory counters only; never waits for a closing store.
   */
  public long rocksProperty(String columnFamily, String property) {
    if (!lifecycle.readLock().tryLock()) {
      return -1;
    }
    try {
      if (closed) {
        return -1;
      }
      ColumnFamilyHandle cf =
          switch (columnFamily) {
            case "records" -> records;
            case "digests" -> digests;
            case "meta" -> meta;
            default -> throw new IllegalArgumentException("no column family " + columnFamily);
          };
      return db.getLongProperty(cf, property);
    } catch (RocksDBException e) {
      return -1;
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  // ------------------------------------------------------------------------------- sketches view

  /** {@link PartitionSketches} over the maintained state and the digest index. */
  private final class Sketches implements PartitionSketches {
    @Override
    public SketchParams params() {
      return params;
    }

    @Override
    public Fingerprint fingerprint(int partition) {
      checkPartition(partition);
      return states[partition].fingerprint();
    }

    @Override
    public DifferenceEstimator estimator(int partition) {
      checkPartition(partition);
      return states[partition].estimatorCopy();
    }

    @Override
    public Iblt iblt(int partition, IbltShape shape) {
      checkPartition(partition);
      if (!params.allows(shape)) {
        throw new IllegalArgumentException(
            "shape "
                + shape
                + " cannot be folded from the maintained tables "
                + params.maxShape()
                + " / "
                + params.maxShapeBase3());
      }
      return states[partition].fold(shape);
    }

    @Override
    public boolean[] containsAll(int partition, long[] elements) {
      checkPartition(partition);
      boolean[] out = new boolean[elements.length];
      lifecycle.readLock().lock();
      try {
        checkOpen();
        // One iterator for every lookup: creating one per element costs a visit of every level.
        try (RocksIterator it = db.newIterator(digests)) {
          for (int i = 0; i < elements.length; i++) {
            byte[] prefix = DigestKeys.prefix(partition, elements[i]);
            it.seek(prefix);
            out[i] = it.isValid() && DigestKeys.startsWith(it.key(), prefix);
          }
          it.status();
        }
        return out;
      } catch (RocksDBException e) {
        throw new StoreException("digest index read failed: " + e.getMessage(), e);
      } finally {
        lifecycle.readLock().unlock();
      }
    }

    @Override
    public boolean contains(int partition, long element) {
      checkPartition(partition);
      lifecycle.readLock().lock();
      try {
        checkOpen();
        byte[] prefix = DigestKeys.prefix(partition, element);
        try (RocksIterator it = db.newIterator(digests)) {
          it.seek(prefix);
          if (it.isValid()) {
            return DigestKeys.startsWith(it.key(), prefix);
          }
          it.status();
          return false;
        }
      } catch (RocksDBException e) {
        throw new StoreException("digest index read failed: " + e.getMessage(), e);
      } finally {
        lifecycle.readLock().unlock();
      }
    }

    @Override
    public ElementCursor sortedElements(int partition) {
      checkPartition(partition);
      lifecycle.readLock().lock();
      try {
        checkOpen();
        IndexCursor c = new IndexCursor(partition);
        openCursors.add(c);
        return c;
      } finally {
        lifecycle.readLock().unlock();
      }
    }
  }

  /**
   * Cursor over one partition's index rows at a snapshot; owns a snapshot, read options, two bound
   * slices and an iterator, released by {@link #close()} (or by the store's close).
   */
  private final class IndexCursor implements ElementCursor {
    private final Snapshot snapshot;
    private final ReadOptions readOptions;
    private final Slice lower;
    private final Slice upper;
    private final RocksIterator iterator;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(DigestKeys.PREFIX);
    private boolean started;
    private boolean released;
    private long element;

    IndexCursor(int partition) {
      snapshot = db.getSnapshot();
      readOptions = new ReadOptions().setSnapshot(snapshot).setFillCache(false);
      lower = new Slice(DigestKeys.partitionStart(partition));
      upper =
          partition + 1 < (1 << 16) ? new Slice(DigestKeys.partitionStart(partition + 1)) : null;
      readOptions.setIterateLowerBound(lower);
      if (upper != null) {
        readOptions.setIterateUpperBound(upper);
      }
      iterator = db.newIterator(digests, readOptions);
    }

    @Override
    public boolean next() {
      lifecycle.readLock().lock();
      try {
        synchronized (this) {
          if (released) {
            throw new StoreException("cursor is closed (or its store was closed)");
          }
          if (!started) {
            iterator.seekToFirst();
            started = true;
          } else if (iterator.isValid()) {
            iterator.next();
          }
          if (!iterator.isValid()) {
            try {
              iterator.status();
            } catch (RocksDBException e) {
              throw new StoreException("digest index scan failed: " + e.getMessage(), e);
            }
            return false;
          }
          buf.clear();
          iterator.key(buf);
          element = buf.getLong(2);
          return true;
        }
      } finally {
        lifecycle.readLock().unlock();
      }
    }

    @Override
    public long element() {
      return element;
    }

    @Override
    public void close() {
      lifecycle.readLock().lock();
      try {
        release();
      } finally {
        lifecycle.readLock().unlock();
      }
    }

    synchronized void release() {
      if (released) {
        return;
      }
      released = true;
      iterator.close();
      readOptions.close();
      lower.close();
      if (upper != null) {
        upper.close();
      }
      db.releaseSnapshot(snapshot);
      openCursors.remove(this);
    }
  }

  @Override
  public String toString() {
    return "ReplicaStore{"
        + options.dataDir()
        + ", records="
        + recordCount.get()
        + (options.readOnly() ? ", read-only" : "")
        + "}";
  }
}
