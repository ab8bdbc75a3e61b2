package dev.reconcile.agent.store;

import dev.reconcile.core.CodedSymbols;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.ElementCursor;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PartitionSketch;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.SketchParams;
import dev.reconcile.core.SymbolSnapshot;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;

/**
 * The per-partition sketches of a store: one {@link PartitionState} per partition (null when the
 * store keeps none), rebuilt at open by scanning the digest index, which holds the elements, so no
 * record is decoded: {@code rebuildThreads} scanners each take a contiguous range of partitions.
 * The same scan hashes each row's key into the store's {@link KeyFilter}, when it keeps one. As
 * {@link PartitionSketches} it is what the reconciliation session reads: the maintained state, and
 * the digest index for membership and sorted cursors.
 */
final class StoreSketches implements PartitionSketches {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final StoreDb s;
  private final PartitionState[] states; // null without sketches
  private final SymbolUpkeep upkeep; // null without sketches or symbols
  private final Set<IndexCursor> openCursors = ConcurrentHashMap.newKeySet();
  private final long rebuiltRecords;
  private final long rebuildMillis;
  private final double rebuildKeysPerSecond;
  private final long rebuildCpuMillis;
  private final double rebuildKeysPerCpuSecond;
  private final AtomicLong changes = new AtomicLong(); // see changes()

  /**
   * Scans the digest index: fresh sketches (none when the store keeps none), the record count, and
   * every stored key into {@code keys} (when not null).
   */
  StoreSketches(StoreDb s, KeyFilter keys) {
    this.s = s;
    long t0 = System.nanoTime();
    int p = s.params.partitions();
    PartitionState[] fresh = null;
    SymbolUpkeep up = null;
    if (s.options.maintainSketches()) {
      fresh = new PartitionState[p];
      up = s.params.rateless() ? new SymbolUpkeep("sketch-upkeep") : null;
      Runnable wake = up == null ? null : up::wake;
      for (int i = 0; i < p; i++) {
        fresh[i] = new PartitionState(s.params, s.options.estimators(), wake);
      }
    }
    int threads = Math.min(s.options.rebuildThreads(), p);
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
              s.countersOff();
              long c0 = THREADS.getCurrentThreadCpuTime();
              counts[slot] = scanIndex(lo, hi, target, keys == null ? null : keys::addAll, null);
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
    long nanos = System.nanoTime() - t0;
    long cpu = Arrays.stream(cpuNanos).sum();
    this.states = fresh;
    this.upkeep = up;
    if (up != null) {
      up.start(fresh);
    }
    this.rebuiltRecords = total;
    this.rebuildMillis = nanos / 1_000_000;
    this.rebuildKeysPerSecond = total == 0 ? 0 : total * 1e9 / nanos;
    this.rebuildCpuMillis = cpu / 1_000_000;
    this.rebuildKeysPerCpuSecond = total == 0 || cpu <= 0 ? 0 : total * 1e9 / cpu;
  }

  /** Takes key hashes a batch at a time. */
  interface KeyHashes {
    void add(long[] keyHashes, int n);
  }

  /**
   * The hash of every key the digest index holds at {@code snap}, into {@code keys} in batches of
   * 1024 ({@link KeyFilterRebuild}); the count.
   */
  long scanKeys(Snapshot snap, KeyHashes keys) throws RocksDBException {
    return scanIndex(0, s.params.partitions(), null, keys, snap);
  }

  /**
   * Adds every index element of partitions [lo, hi) to {@code target} and its key's hash to {@code
   * keys} (either may be null), read at {@code snap} (null: the latest state); the count.
   */
  private long scanIndex(int lo, int hi, PartitionState[] target, KeyHashes keys, Snapshot snap)
      throws RocksDBException {
    long n = 0;
    try (Slice lower = new Slice(DigestKeys.partitionStart(lo));
        Slice upper = hi < (1 << 16) ? new Slice(DigestKeys.partitionStart(hi)) : null;
        ReadOptions ro = DigestKeys.scanOptions().setFillCache(false).setReadaheadSize(2 << 20)) {
      if (snap != null) {
        ro.setSnapshot(snap);
      }
      ro.setIterateLowerBound(lower);
      if (upper != null) {
        ro.setIterateUpperBound(upper);
      }
      try (RocksIterator it = s.db.newIterator(s.digests, ro)) {
        // the whole row when the key is hashed (grown to fit a longer one), else its prefix
        ByteBuffer buf = ByteBuffer.allocateDirect(DigestKeys.PREFIX + (keys == null ? 0 : 256));
        byte[] key = new byte[keys == null ? 0 : 256];
        long[] hashes = new long[keys == null ? 0 : 1024]; // added to keys a batch at a time
        int hashed = 0;
        // elements of one partition, added in batches (the coded symbols walk several at once)
        long[] batch = new long[PartitionState.PENDING];
        int batched = 0;
        int batchPart = -1;
        for (it.seekToFirst(); it.isValid(); it.next()) {
          buf.clear();
          int len = it.key(buf);
          if (len < DigestKeys.PREFIX) {
            throw new StoreException("digest index row of " + len + " bytes is shorter than 10");
          }
          if (keys != null) {
            if (len > buf.capacity()) {
              buf = ByteBuffer.allocateDirect(Integer.highestOneBit(len) << 1);
              buf.clear();
              it.key(buf);
            }
            int keyLength = len - DigestKeys.PREFIX;
            if (keyLength > key.length) {
              key = new byte[buf.capacity()];
            }
            buf.get(DigestKeys.PREFIX, key, 0, keyLength);
            hashes[hashed++] = s.spec.keyHash(key, 0, keyLength);
            if (hashed == hashes.length) {
              keys.add(hashes, hashed);
              hashed = 0;
            }
          }
          if (target != null) {
            int part = buf.getShort(0) & 0xFFFF;
            if (batched == batch.length || (batched > 0 && part != batchPart)) {
              target[batchPart].addAllUnsynchronized(batch, batched);
              batched = 0;
            }
            batchPart = part;
            batch[batched++] = buf.getLong(2);
          }
          n++;
        }
        it.status();
        if (batched > 0) {
          target[batchPart].addAllUnsynchronized(batch, batched);
        }
        if (hashed > 0) {
          keys.add(hashes, hashed);
        }
      }
    }
    return n;
  }

  /** Records counted by the rebuild at open. */
  long rebuiltRecords() {
    return rebuiltRecords;
  }

  StoreStats stats(
      long recordCount,
      long localWrites,
      long appliedRecords,
      long purged,
      long ingested,
      KeyFilter keys,
      long skippedReads,
      long falsePositives,
      long deniedReads) {
    return new StoreStats(
        recordCount,
        rebuildMillis,
        rebuildKeysPerSecond,
        rebuildCpuMillis,
        rebuildKeysPerCpuSecond,
        Math.min(s.options.rebuildThreads(), s.params.partitions()),
        localWrites,
        appliedRecords,
        purged,
        ingested,
        keys == null ? 0 : keys.bytes(),
        skippedReads,
        falsePositives,
        keys == null ? 0 : keys.segmentCount(),
        keys == null ? 0 : keys.rebuilds(),
        deniedReads);
  }

  /** False for a store opened with {@code maintainSketches=false}. */
  boolean maintained() {
    return states != null;
  }

  /** After a committed write: {@code old} (when {@code hadOld}) became {@code neu}. */
  void replace(int partition, boolean hadOld, long old, long neu) {
    if (states != null) {
      changes.incrementAndGet(); // before the sketch: see changes()
      states[partition].replace(hadOld, old, neu);
    }
  }

  /**
   * After a committed partition load: {@code elements[0, n)} were added, the large part of the
   * sketch updated now ({@link PartitionState#addAllLargeNow}).
   */
  void addAllLoaded(int partition, long[] elements, int n) {
    if (states != null) {
      changes.addAndGet(n);
      states[partition].addAllLargeNow(elements, n);
    }
  }

  /** After a committed purge: {@code element} is gone. */
  void remove(int partition, long element) {
    if (states != null) {
      changes.incrementAndGet();
      states[partition].remove(element);
    }
  }

  /**
   * How many records' elements the maintained sketches have taken since the store opened (one per
   * stored, replaced or removed record; the rebuild at open not counted). Counted before the sketch
   * changes: a fingerprint read after a change, then this count, includes the change.
   */
  long changes() {
    return changes.get();
  }

  /** A copy of the maintained sketch of {@code partition}, taken atomically. */
  PartitionSketch copy(int partition) {
    return states[partition].copy();
  }

  // ------------------------------------------------------------------------------- the session's
  // view

  @Override
  public SketchParams params() {
    return s.params;
  }

  @Override
  public Fingerprint fingerprint(int partition) {
    s.checkPartition(partition);
    return states[partition].fingerprint();
  }

  @Override
  public DifferenceEstimator estimator(int partition) {
    s.checkPartition(partition);
    return states[partition].estimatorCopy();
  }

  @Override
  public Iblt iblt(int partition, IbltShape shape) {
    checkFoldable(partition, shape);
    return states[partition].fold(shape);
  }

  @Override
  public FoldedTable foldWithFingerprint(int partition, IbltShape shape) {
    checkFoldable(partition, shape);
    return states[partition].foldWithFingerprint(shape);
  }

  private void checkFoldable(int partition, IbltShape shape) {
    s.checkPartition(partition);
    if (!s.params.allows(shape)) {
      throw new IllegalArgumentException(
          "shape "
              + shape
              + " cannot be folded from the maintained tables "
              + s.params.maxShape()
              + " / "
              + s.params.maxShapeBase3());
    }
  }

  @Override
  public CodedSymbols symbols(int partition) {
    s.checkPartition(partition);
    return states[partition].symbolsCopy();
  }

  @Override
  public Fingerprint addSymbols(int partition, SymbolSnapshot snapshot) {
    s.checkPartition(partition);
    return states[partition].addSymbolsTo(snapshot);
  }

  @Override
  public boolean hasSymbols() {
    return s.params.rateless();
  }

  @Override
  public boolean[] containsAll(int partition, long[] elements) {
    s.checkPartition(partition);
    boolean[] out = new boolean[elements.length];
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      // One walk for every lookup, in element order (IndexWalk: steps between near elements of a
      // dense list, one filtered seek each for a sparse one).
      boolean dense = IndexWalk.dense(elements.length, states[partition].fingerprint().count());
      try (IndexWalk walk = new IndexWalk(s, partition, null, dense)) {
        for (int i : DigestKeys.orderByElement(elements)) {
          out[i] = walk.moveTo(elements[i]); // a repeat stays where its element's rows are
        }
        walk.status();
      }
      return out;
    } catch (RocksDBException e) {
      throw new StoreException("digest index read failed: " + e.getMessage(), e);
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  @Override
  public boolean contains(int partition, long element) {
    return containsAll(partition, new long[] {element})[0];
  }

  @Override
  public ElementCursor sortedElements(int partition) {
    s.checkPartition(partition);
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      IndexCursor c = new IndexCursor(partition);
      openCursors.add(c);
      return c;
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /** Stops the coded-symbol upkeep thread (store close; what is queued is not needed any more). */
  void stopUpkeep() {
    if (upkeep != null) {
      upkeep.close();
    }
  }

  /** Symbol updates the upkeep thread applied so far (0 without one). */
  long upkeepApplied() {
    return upkeep == null ? 0 : upkeep.applied();
  }

  /** Symbol updates queued and not yet applied, over every partition (0 without sketches). */
  long symbolUpdatesPending() {
    long n = 0;
    if (states != null) {
      for (PartitionState st : states) {
        n += st.pendingSymbolUpdates();
      }
    }
    return n;
  }

  /** Releases every open cursor; the caller holds the lifecycle write lock (store close). */
  void releaseCursors() {
    for (IndexCursor c : List.copyOf(openCursors)) {
      c.release();
    }
  }

  /**
   * Cursor over one partition's index rows at a snapshot; owns a snapshot, read options, two bound
   * slices and an iterator, released by {@link #close()} (or by the store's close).
   */
  private final class IndexCursor implements ElementCursor {
    private final PartitionRange range;
    private final RocksIterator iterator;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(DigestKeys.PREFIX);
    private boolean started;
    private boolean released;
    private long element;

    IndexCursor(int partition) {
      range = new PartitionRange(s, s.digests, partition, false);
      iterator = range.iterator;
    }

    @Override
    public boolean next() {
      s.lifecycle.readLock().lock();
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
        s.lifecycle.readLock().unlock();
      }
    }

    @Override
    public long element() {
      return element;
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
      range.release();
      openCursors.remove(this);
    }
  }
}
