package dev.reconcile.agent.store;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.rocksdb.RocksDBException;
import org.rocksdb.Snapshot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds a store's {@link KeyFilter} into one segment, on a thread of its own, whenever the
 * filter has grown a segment or the keys purged since its last rebuild are as many as the stored
 * ones ({@link KeyFilter#onRebuildWanted}): a store that grew from empty to 10^6 keys would
 * otherwise keep five segments until its next open, each asked by every query (4.1 % false
 * positives, five cache lines for a key it lacks), and every purged key as a false positive.
 *
 * <p>Steps: (1) with the ingest lock and then the writer lock held (no partition ingest between its
 * reserved range and its end, no write in progress), {@link KeyFilter#beginRebuild} for the store's
 * record count and a RocksDB snapshot; from here every added key also goes into the new segment.
 * (2) Without locks, a scan of the digest index at the snapshot hashes every stored key; a batch of
 * 1 024 goes into the new segment under the writer lock (a write waits for at most a batch's 1 024
 * bit settings). (3) Under the writer lock, {@link KeyFilter#finishRebuild}. Why nothing stored is
 * lost: a key's addition and the write that stores it happen in one hold of the writer lock (a
 * partition ingest's addition precedes its files, with its range reserved until the ingest's end
 * under the ingest lock), so a key stored before step 1 is in the snapshot, and one added after it
 * went into the new segment itself.
 *
 * <p>The amortized cost is a digest-index scan per doubling of the store (a segment is appended
 * when the keys double) and per halving by purges (the purged keys as many as those left), on a
 * background thread, deferred while the store takes new keys fast (a bulk load, a catch-up, a large
 * repair: the scan would take their CPU; measured in benchmarks.md section 3, "stop 52") for at
 * most ten minutes; the memory, a second filter during the scan (within the filter's budget, else
 * no rebuild). A failed scan drops the new segment and leaves the old ones, which hold every key;
 * the next growth or purge tries again. {@link #close} stops a scan between batches and waits for
 * it.
 */
final class KeyFilterRebuild implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(KeyFilterRebuild.class);

  /** A store whose record count moves slower than this is quiet enough for a rebuild's scan. */
  static final long QUIET_RECORDS_PER_SECOND = 10_000;

  /** A rebuild waits for quiet at most this long, then scans anyway. */
  static final long MAX_DEFER_NANOS = TimeUnit.MINUTES.toNanos(10);

  private final StoreDb s;
  private final StoreSketches sketches;
  private final KeyFilter keys;
  private final LongSupplier records;
  private final ExecutorService thread;
  private final AtomicBoolean queued = new AtomicBoolean();
  private volatile boolean stopped;

  /** Thrown out of the scan by a stop. */
  private static final class Stopped extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Stopped() {
      super("store closing", null, false, false);
    }
  }

  KeyFilterRebuild(StoreDb s, StoreSketches sketches, KeyFilter keys, LongSupplier records) {
    this.s = s;
    this.sketches = sketches;
    this.keys = keys;
    this.records = records;
    this.thread =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "key-filter-rebuild");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Asks for a rebuild (quick: may run under the writer lock); at most one waits besides a running
   * one, and a rebuild that finds no cause left ({@link KeyFilter#beginRebuild}) does nothing.
   */
  void request() {
    if (stopped || !queued.compareAndSet(false, true)) {
      return;
    }
    try {
      thread.execute(this::run);
    } catch (RejectedExecutionException e) {
      queued.set(false); // closing
    }
  }

  private void run() {
    queued.set(false);
    try {
      if (awaitQuiet()) {
        rebuild();
      }
    } catch (RuntimeException e) {
      LOG.warn("store at {}: key filter rebuild failed: {}", s.options.dataDir(), e.toString());
    }
  }

  /**
   * Waits until the store's record count moved by fewer than {@link #QUIET_RECORDS_PER_SECOND} over
   * one {@link StoreHooks#keyFilterQuietMillis} period (not in a bulk load, a catch-up or a large
   * repair, whose CPU the scan would take), or for {@link #MAX_DEFER_NANOS} at most; false when
   * stopped meanwhile.
   */
  private boolean awaitQuiet() {
    long period = s.hooks.keyFilterQuietMillis();
    long deadline = System.nanoTime() + MAX_DEFER_NANOS;
    long last = records.getAsLong();
    while (!stopped) {
      try {
        Thread.sleep(period);
      } catch (InterruptedException e) {
        return false; // the close's shutdownNow
      }
      long now = records.getAsLong();
      if (Math.abs(now - last) * 1000 < QUIET_RECORDS_PER_SECOND * Math.max(1, period)
          || System.nanoTime() > deadline) {
        return !stopped;
      }
      last = now;
    }
    return false;
  }

  private void rebuild() {
    if (stopped || !s.lifecycle.readLock().tryLock()) {
      return; // a closing store
    }
    try {
      if (s.isClosed()) {
        return;
      }
      Snapshot snap;
      s.ingest.lock();
      try {
        s.writer.lock();
        try {
          if (!keys.beginRebuild(records.getAsLong())) {
            return;
          }
          snap = s.db.getSnapshot();
        } finally {
          s.writer.unlock();
        }
      } finally {
        s.ingest.unlock();
      }
      boolean finished = false;
      try {
        long t0 = System.nanoTime();
        long n =
            sketches.scanKeys(
                snap,
                (hashes, count) -> {
                  if (stopped) {
                    throw new Stopped();
                  }
                  s.hooks.keyFilterRebuildBatch();
                  s.writer.lock();
                  try {
                    keys.addRebuilt(hashes, count);
                  } finally {
                    s.writer.unlock();
                  }
                });
        s.writer.lock();
        try {
          keys.finishRebuild();
          finished = true;
        } finally {
          s.writer.unlock();
        }
        LOG.info(
            "store at {}: key filter rebuilt into one segment of {} KiB from {} keys in {} ms",
            s.options.dataDir(),
            keys.bytes() >> 10,
            n,
            (System.nanoTime() - t0) / 1_000_000);
      } catch (RocksDBException e) {
        throw new StoreException("key filter rebuild: " + e.getMessage(), e);
      } catch (Stopped e) {
        // the store is closing: the old segments stay until it has closed
      } finally {
        if (!finished) {
          s.writer.lock();
          try {
            keys.abandonRebuild();
          } finally {
            s.writer.unlock();
          }
        }
        s.db.releaseSnapshot(snap);
      }
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /** Stops a running scan between batches and waits for its thread (before the store closes). */
  @Override
  public void close() {
    stopped = true;
    thread.shutdownNow();
    boolean interrupted = false;
    while (true) {
      try {
        if (thread.awaitTermination(60, TimeUnit.SECONDS)) {
          break;
        }
        LOG.warn("store at {}: still waiting for the key filter rebuild", s.options.dataDir());
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
