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
 * <p>Locks: the monitor guards the pending buffer and the large part, which only a holder of the
 * monitor changes, applying the updates queued without it (their large parts are a suffix of the
 * queue). {@code symbolsLock} guards the symbols and small tables. Anyone holding both takes the
 * monitor first. The upkeep thread applies the buffer's large parts and takes the buffer and {@code
 * symbolsLock} under the monitor (a writer that comes meanwhile waits for those large parts, at
 * most a buffer's), then releases the monitor and applies the symbols holding only {@code
 * symbolsLock}: writers go on meanwhile, and a reader of the symbols that comes next waits on
 * {@code symbolsLock} until that buffer is in. A writer that finds the buffer full applies it
 * itself (the upkeep thread is behind: the write path then costs what it costs without deferral,
 * and memory stays bounded). Without a rateless prefix nothing is deferred: the writer updates the
 * sketch under the monitor.
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

  private final PartitionSketch sketch;
  private final ReentrantLock symbolsLock = new ReentrantLock();
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
    for (int i = 0; i < n; i++) {
      synchronized (this) { // one at a time: the upkeep thread takes the buffer in between
        enqueue(elements[i], 1, true);
      }
    }
  }

  /**
   * Holding the monitor: queues an update, its large part applied now when {@code largeNow};
   * applies it whole at once when nothing is deferred.
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
    for (int i = largeDone; i < pending; i++) {
      pendingC[i] = sketch.updateDeferringSymbols(pendingX[i], pendingD[i]);
    }
    largeDone = pending;
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
    synchronized (this) {
      n = pending;
      if (n == 0) {
        return 0;
      }
      applyLargeParts();
      xs = pendingX;
      cs = pendingC;
      ds = pendingD;
      pendingX = null; // the writer allocates a fresh buffer: this one is being applied
      pendingC = null;
      pendingD = null;
      pending = 0;
      largeDone = 0;
      symbolsLock.lock(); // before the monitor is released: see the class comment
    }
    try {
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
    symbolsLock.lock();
    try {
      applyPendingIfAny();
      return sketch.symbolsCopy();
    } finally {
      symbolsLock.unlock();
    }
  }

  /**
   * Joins {@code snapshot} as a member owing its symbols as of now (every write applied, none
   * copied yet; see the class comment) and returns the fingerprint of the same instant. Without a
   * rateless prefix nothing is owed.
   */
  synchronized Fingerprint addSymbolsTo(SymbolSnapshot snapshot) {
    symbolsLock.lock();
    try {
      applyPendingIfAny();
      if (sketch.hasSymbols()) {
        Owed o = new Owed(snapshot);
        owed.removeIf(r -> r.get() == null);
        owed.add(new WeakReference<>(o));
        snapshot.owe(o);
      }
      return sketch.fingerprint();
    } finally {
      symbolsLock.unlock();
    }
  }

  /** Holding the monitor and {@code symbolsLock}. */
  private void applyPendingIfAny() {
    if (pending > 0) {
      applyLargeParts();
      applySymbols(pendingX, pendingC, pendingD, pending);
      pending = 0;
      largeDone = 0;
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
    symbolsLock.lock();
    try {
      applyPendingIfAny();
      return new PartitionSketches.FoldedTable(sketch.fold(shape), sketch.fingerprint());
    } finally {
      symbolsLock.unlock();
    }
  }

  /** A copy of everything, taken atomically (for the self-check), every write applied. */
  synchronized PartitionSketch copy() {
    symbolsLock.lock();
    try {
      applyPendingIfAny();
      return sketch.copy();
    } finally {
      symbolsLock.unlock();
    }
  }

  /** The sketch itself, for a state that is not yet shared (a rebuild in progress). */
  PartitionSketch unsharedSketch() {
    return sketch;
  }
}
