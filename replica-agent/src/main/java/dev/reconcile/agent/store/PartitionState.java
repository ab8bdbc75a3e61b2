package dev.reconcile.agent.store;

import dev.reconcile.core.CodedSymbols;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PartitionSketch;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.SketchParams;
import dev.reconcile.core.SymbolSnapshot;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * A partition's {@link PartitionSketch} behind its own monitor: the single writer updates it after
 * each committed batch; readers copy or fold under the same monitor.
 *
 * <h2>Deferred updates</h2>
 *
 * Keeping the sketch up to date is the write path's sketch upkeep, and the rateless prefix is its
 * largest part (about 19 index steps per update at {@code M = 2^14}, each a serial square root; see
 * {@code CodedSymbols}). So a writer only queues each update (element, sign, and room for its check
 * hash) in a pending buffer of at most {@link #PENDING} entries, and {@link SymbolUpkeep}'s thread
 * applies the buffers off the write path in two parts: the <em>large part</em> (fingerprint,
 * estimator, the ladder's large tables) one update at a time, and the symbols with the small tables
 * of the IBLT ladder ({@code IbltLadder}, "small tables") side by side. Until stop 44 every writer
 * applied the large part itself (benchmarks.md section 3, "stop 44"); a partition load still does
 * ({@link #addAllLargeNow}). The updates are linear, so their order does not matter, only that
 * every update is applied before anyone reads: every reader applies what is pending of the part it
 * reads first ({@link #fingerprint} and {@link #estimatorCopy} the large part; {@link
 * #symbolsCopy}, {@link #addSymbolsTo(SymbolSnapshot)}, {@link #fold} and {@link #copy} both), so
 * it sees every write acknowledged before it exactly as if the updates were immediate.
 *
 * <p>Locks: the monitor guards the pending buffer; {@code largeLock} guards the large part, {@code
 * symbolsLock} the symbols and small tables. Anyone holding more than one takes them in that order
 * (monitor, {@code largeLock}, {@code symbolsLock}). The upkeep thread takes the buffer, and {@code
 * largeLock} (when the buffer holds updates without their large part) and {@code symbolsLock},
 * under the monitor, then releases the monitor and applies the buffer's large parts, releases
 * {@code largeLock}, applies the symbols and releases {@code symbolsLock}. So writers go on
 * queueing meanwhile; a reader of the large part that comes next waits on {@code largeLock}, and
 * one of the symbols on {@code symbolsLock}, until that buffer is in. Until stop 47 the upkeep
 * thread applied the large parts holding the monitor, and a writer that came meanwhile waited for
 * them (up to a buffer's, about 0.2 ms): without that wait a put's sketch overhead fell from
 * 7.9-12.3 % to 0.7-7.0 % (eight alternated pairs, benchmarks.md section 3, "stop 47"). A partition
 * load holds {@code largeLock} for a chunk of {@link #LOAD_CHUNK} elements at a time. A writer that
 * finds the buffer full applies it itself (the upkeep thread is behind: the write path then costs
 * what it costs without deferral, and memory stays bounded). Without a rateless prefix nothing is
 * deferred: the writer updates the sketch under the monitor.
 *
 * <h2>Streams' snapshots, copied on write</h2>
 *
 * A rateless stream's snapshot ({@link #addSymbolsTo(SymbolSnapshot)}) copies nothing at its
 * instant: the partition joins it as a member that owes its symbols ({@link SymbolSnapshot}). The
 * stream has them added as it reaches them ({@link SymbolSnapshot.Member#extend}); the symbols are
 * still those of the instant, because before anything changes them ({@link #beforeSymbolsChange},
 * called by every symbol update) each snapshot still owed is given all the rest and forgotten. So a
 * round whose partitions nobody writes meanwhile copies {@code O(d)} symbols instead of {@code M}
 * per partition, and one that meets a write pays the copy once, on the thread that applies it (the
 * upkeep thread, in the deferred mode). The snapshots owed are guarded by the lock that guards the
 * symbols' updates: {@code symbolsLock} in the deferred mode, the monitor when updates are
 * immediate; joining, extending and releasing take both. They are held weakly: a session dropped
 * without {@link SymbolSnapshot#release} costs nothing once collected.
 */
final class PartitionState {
  /** Most queued symbol updates per partition. */
  static final int PENDING = 1024;

  /** Queued updates at which the writer wakes the upkeep thread. */
  static final int WAKE_AT = 256;

  /**
   * Elements of a partition load queued under one hold of the monitor ({@link #addAllLargeNow}).
   */
  static final int LOAD_CHUNK = 64;

  private final PartitionSketch sketch;
  private final ReentrantLock symbolsLock = new ReentrantLock();
  private final ReentrantLock largeLock = new ReentrantLock();
  private final Runnable wake; // null: symbols updated at once
  private long[] pendingX;
  private long[] pendingC; // check hashes of pendingX[0, largeDone)
  private byte[] pendingD;
  private int pending;
  private int largeDone; // pendingX[0, largeDone) are in the large part
  private final List<WeakReference<Owed>> owed = new ArrayList<>(2);
  private final int symbolCount;

  PartitionState(SketchParams params, EstimatorFactory estimators) {
    this(params, estimators, null);
  }

  /**
   * A state whose symbol updates are deferred to an upkeep thread that {@code wake} signals; null
   * for immediate updates.
   */
  PartitionState(SketchParams params, EstimatorFactory estimators, Runnable wake) {
    this.sketch = new PartitionSketch(params, estimators);
    this.symbolCount = 1 << params.ratelessLog2();
    this.wake = sketch.hasSymbols() ? wake : null;
  }

  /** Unsynchronized add, for a sketch not yet shared (the self-check's fresh copy). */
  void addUnsynchronized(long element) {
    sketch.add(element);
  }

  /**
   * Unsynchronized add of {@code elements[0..n)}, for the rebuild at open (one thread per
   * partition, before publication).
   */
  void addAllUnsynchronized(long[] elements, int n) {
    sketch.addAll(elements, n);
  }

  synchronized void add(long element) {
    enqueue(element, 1, false);
  }

  synchronized void remove(long element) {
    enqueue(element, -1, false);
  }

  /** Replaces {@code old} (when {@code hadOld}) by {@code neu}. */
  synchronized void replace(boolean hadOld, long old, long neu) {
    if (hadOld) {
      enqueue(old, -1, false);
    }
    enqueue(neu, 1, false);
  }

  /**
   * Adds {@code elements[0, n)} with their large part applied now, on the caller's thread, and only
   * the symbols and small tables deferred: a partition load's writer ({@link
   * RecordWriter#ingested}), which adds thousands of elements at once. Deferred whole, they made
   * cold catch-ups run 0.88-0.96 x (benchmarks.md section 3, "stop 44").
   */
  void addAllLargeNow(long[] elements, int n) {
    int i = 0;
    while (i < n) {
      int end = Math.min(n, i + LOAD_CHUNK);
      synchronized (this) { // a chunk at a time: the upkeep thread takes the buffer in between
        largeLock.lock();
        try {
          for (; i < end; i++) {
            enqueue(elements[i], 1, true);
          }
        } finally {
          largeLock.unlock();
        }
      }
    }
  }

  /**
   * Holding the monitor: queues an update, its large part applied now when {@code largeNow} (then
   * holding {@code largeLock} too: {@link #addAllLargeNow}); applies it whole at once when nothing
   * is deferred.
   */
  private void enqueue(long element, int delta, boolean largeNow) {
    if (wake == null) {
      beforeSymbolsChange();
      if (delta > 0) {
        sketch.add(element);
      } else {
        sketch.remove(element);
      }
      return;
    }
    if (pendingX == null) {
      pendingX = new long[PENDING];
      pendingC = new long[PENDING];
      pendingD = new byte[PENDING];
    } else if (pending == PENDING) {
      applyPendingHoldingMonitor();
    }
    if (largeNow) {
      applyLargeParts(); // keeps the applied ones a prefix of the queue
      pendingC[pending] = sketch.updateDeferringSymbols(element, delta);
    }
    pendingX[pending] = element;
    pendingD[pending] = (byte) delta;
    pending++;
    if (largeNow) {
      largeDone = pending;
    }
    if (pending == WAKE_AT) {
      wake.run();
    }
  }

  /**
   * Holding the monitor: the large part (fingerprint, estimator, large tables) of the queued
   * updates that do not have it yet, with their check hashes, which the symbols' part needs.
   */
  private void applyLargeParts() {
    largeLock.lock();
    try {
      largeParts(pendingX, pendingC, pendingD, largeDone, pending);
      largeDone = pending;
    } finally {
      largeLock.unlock();
    }
  }

  /**
   * Holding {@code largeLock}: the large part of updates {@code [from, to)}, their check hashes.
   */
  private void largeParts(long[] xs, long[] cs, byte[] ds, int from, int to) {
    for (int i = from; i < to; i++) {
      cs[i] = sketch.updateDeferringSymbols(xs[i], ds[i]);
    }
  }

  /** Holding the monitor: applies the pending updates (after any the upkeep thread is applying). */
  private void applyPendingHoldingMonitor() {
    applyLargeParts();
    symbolsLock.lock();
    try {
      applySymbols(pendingX, pendingC, pendingD, pending);
      pending = 0;
      largeDone = 0;
    } finally {
      symbolsLock.unlock();
    }
  }

  /** Holding {@code symbolsLock}: the symbols' and small tables' part of {@code n} updates. */
  private void applySymbols(long[] xs, long[] cs, byte[] ds, int n) {
    beforeSymbolsChange();
    sketch.updateSymbolsAll(xs, cs, ds, n);
  }

  /**
   * Holding the lock that guards symbol updates, before they change: each snapshot still owed its
   * symbols takes all the rest now, and is forgotten (see the class comment).
   */
  private void beforeSymbolsChange() {
    if (owed.isEmpty()) {
      return;
    }
    for (WeakReference<Owed> r : owed) {
      Owed o = r.get();
      if (o != null) {
        o.addUpTo(symbolCount);
      }
    }
    owed.clear();
  }

  /** A snapshot this partition owes its symbols from {@code from} up. */
  private final class Owed implements SymbolSnapshot.Member {
    private final SymbolSnapshot snapshot;
    private int from; // guarded as the list of snapshots owed

    Owed(SymbolSnapshot snapshot) {
      this.snapshot = snapshot;
    }

    /** Holding the lock that guards symbol updates. */
    void addUpTo(int to) {
      if (from < to) {
        sketch.addSymbolsTo(snapshot, from, to);
        from = to;
      }
    }

    @Override
    public void extend(int to) {
      synchronized (PartitionState.this) {
        symbolsLock.lock();
        try {
          addUpTo(to); // after a change, from is already M: nothing is added
        } finally {
          symbolsLock.unlock();
        }
      }
    }

    @Override
    public void release() {
      synchronized (PartitionState.this) {
        symbolsLock.lock();
        try {
          owed.removeIf(r -> r.get() == null || r.get() == this);
        } finally {
          symbolsLock.unlock();
        }
      }
    }
  }

  /** Snapshots this partition still owes symbols (for tests). */
  synchronized int snapshotsOwed() {
    symbolsLock.lock();
    try {
      owed.removeIf(r -> r.get() == null);
      return owed.size();
    } finally {
      symbolsLock.unlock();
    }
  }

  /**
   * The upkeep thread: applies the pending symbol updates, holding the monitor only to take them.
   * Returns how many it applied.
   */
  int drainSymbols() {
    long[] xs;
    long[] cs;
    byte[] ds;
    int n;
    int from;
    synchronized (this) {
      n = pending;
      if (n == 0) {
        return 0;
      }
      from = largeDone;
      xs = pendingX;
      cs = pendingC;
      ds = pendingD;
      pendingX = null; // the writer allocates a fresh buffer: this one is being applied
      pendingC = null;
      pendingD = null;
      pending = 0;
      largeDone = 0;
      if (from < n) {
        largeLock.lock(); // both before the monitor is released: see the class comment
      }
      symbolsLock.lock();
    }
    try {
      if (from < n) {
        try {
          largeParts(xs, cs, ds, from, n);
        } finally {
          largeLock.unlock();
        }
      }
      applySymbols(xs, cs, ds, n);
    } finally {
      symbolsLock.unlock();
    }
    return n;
  }

  /** Queued updates whose large part is not applied yet (for tests). */
  synchronized int pendingLargeParts() {
    return pending - largeDone;
  }

  /** Symbol updates queued and not yet applied (for tests and metrics). */
  synchronized int pendingSymbolUpdates() {
    return pending;
  }

  /** The fingerprint, every write applied. */
  synchronized Fingerprint fingerprint() {
    applyLargeParts();
    return sketch.fingerprint();
  }

  /** A copy of the difference estimator, every write applied. */
  synchronized DifferenceEstimator estimatorCopy() {
    applyLargeParts();
    return sketch.estimatorCopy();
  }

  /** A copy of the coded symbols (null without a rateless prefix), every write applied. */
  synchronized CodedSymbols symbolsCopy() {
    return withPendingApplied(sketch::symbolsCopy);
  }

  /**
   * Joins {@code snapshot} as a member owing its symbols as of now (every write applied, none
   * copied yet; see the class comment) and returns the fingerprint of the same instant. Without a
   * rateless prefix nothing is owed.
   */
  synchronized Fingerprint addSymbolsTo(SymbolSnapshot snapshot) {
    return withPendingApplied(
        () -> {
          if (sketch.hasSymbols()) {
            Owed o = new Owed(snapshot);
            owed.removeIf(r -> r.get() == null);
            owed.add(new WeakReference<>(o));
            snapshot.owe(o);
          }
          return sketch.fingerprint();
        });
  }

  /**
   * Holding the monitor: {@code body} with every queued update applied, holding {@code largeLock}
   * and {@code symbolsLock} (so after any buffer the upkeep thread is applying).
   */
  private <T> T withPendingApplied(Supplier<T> body) {
    largeLock.lock();
    try {
      symbolsLock.lock();
      try {
        if (pending > 0) {
          applyPendingHoldingMonitor(); // both locks held already: taken again, reentrant
        }
        return body.get();
      } finally {
        symbolsLock.unlock();
      }
    } finally {
      largeLock.unlock();
    }
  }

  /**
   * A new table of {@code shape} folded from the maintained table of its ladder, every write
   * applied (a small table's updates are deferred with the symbols': see the class comment).
   */
  Iblt fold(IbltShape shape) {
    return foldWithFingerprint(shape).table();
  }

  /** {@link #fold} and the fingerprint of the same instant (both under the monitor). */
  synchronized PartitionSketches.FoldedTable foldWithFingerprint(IbltShape shape) {
    return withPendingApplied(
        () -> new PartitionSketches.FoldedTable(sketch.fold(shape), sketch.fingerprint()));
  }

  /** A copy of everything, taken atomically (for the self-check), every write applied. */
  synchronized PartitionSketch copy() {
    return withPendingApplied(sketch::copy);
  }

  /** The sketch itself, for a state that is not yet shared (a rebuild in progress). */
  PartitionSketch unsharedSketch() {
    return sketch;
  }
}
