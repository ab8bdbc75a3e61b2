package dev.reconcile.agent.store;

import dev.reconcile.core.CodedSymbols;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PartitionSketch;
import dev.reconcile.core.SketchParams;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A partition's {@link PartitionSketch} behind its own monitor: the single writer updates it after
 * each committed batch; readers copy or fold under the same monitor.
 *
 * <h2>Deferred coded symbols</h2>
 *
 * Keeping the rateless prefix up to date is the largest part of the write path's sketch upkeep
 * (about 19 index steps per update at {@code M = 2^14}, each a serial square root; see {@code
 * CodedSymbols}). So the writer updates the fingerprint, estimator and tables at once, but only
 * queues the symbols' update (element, check hash, sign: 17 bytes) in a pending buffer of at most
 * {@link #PENDING} entries; {@link SymbolUpkeep}'s thread applies the buffers off the write path.
 * The symbols are linear, so the order of updates does not matter, only that every update is
 * applied before anyone reads them: every reader of the symbols ({@link #symbolsCopy}, {@link
 * #addSymbolsTo}, {@link #copy}) applies what is pending first, under the monitor, so it sees every
 * write acknowledged before it exactly as if the updates were immediate.
 *
 * <p>Locks: the monitor guards the sketch's other parts and the pending buffer; {@code symbolsLock}
 * guards the symbols. Anyone holding both takes the monitor first. The upkeep thread takes the
 * pending buffer and {@code symbolsLock} under the monitor, then releases the monitor and applies
 * the buffer holding only {@code symbolsLock}: writers go on meanwhile, and a reader that comes
 * next waits on {@code symbolsLock} until that buffer is in. A writer that finds the buffer full
 * applies it itself (the upkeep thread is behind: the write path then costs what it costs without
 * deferral, and memory stays bounded).
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
  private long[] pendingC;
  private byte[] pendingD;
  private int pending;

  PartitionState(SketchParams params, EstimatorFactory estimators) {
    this(params, estimators, null);
  }

  /**
   * A state whose symbol updates are deferred to an upkeep thread that {@code wake} signals; null
   * for immediate updates.
   */
  PartitionState(SketchParams params, EstimatorFactory estimators, Runnable wake) {
    this.sketch = new PartitionSketch(params, estimators);
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
    update(element, 1);
  }

  synchronized void remove(long element) {
    update(element, -1);
  }

  /** Replaces {@code old} (when {@code hadOld}) by {@code neu}. */
  synchronized void replace(boolean hadOld, long old, long neu) {
    if (hadOld) {
      update(old, -1);
    }
    update(neu, 1);
  }

  /** Holding the monitor. */
  private void update(long element, int delta) {
    if (wake == null) {
      if (delta > 0) {
        sketch.add(element);
      } else {
        sketch.remove(element);
      }
      return;
    }
    long c = sketch.updateDeferringSymbols(element, delta);
    if (pendingX == null) {
      pendingX = new long[PENDING];
      pendingC = new long[PENDING];
      pendingD = new byte[PENDING];
    } else if (pending == PENDING) {
      applyPendingHoldingMonitor();
    }
    pendingX[pending] = element;
    pendingC[pending] = c;
    pendingD[pending] = (byte) delta;
    if (++pending == WAKE_AT) {
      wake.run();
    }
  }

  /** Holding the monitor: applies the pending updates (after any the upkeep thread is applying). */
  private void applyPendingHoldingMonitor() {
    symbolsLock.lock();
    try {
      apply(pendingX, pendingC, pendingD, pending);
      pending = 0;
    } finally {
      symbolsLock.unlock();
    }
  }

  /** Holding {@code symbolsLock}. */
  private void apply(long[] xs, long[] cs, byte[] ds, int n) {
    sketch.updateSymbolsAll(xs, cs, ds, n);
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
      xs = pendingX;
      cs = pendingC;
      ds = pendingD;
      pendingX = null; // the writer allocates a fresh buffer: this one is being applied
      pendingC = null;
      pendingD = null;
      pending = 0;
      symbolsLock.lock(); // before the monitor is released: see the class comment
    }
    try {
      apply(xs, cs, ds, n);
    } finally {
      symbolsLock.unlock();
    }
    return n;
  }

  /** Symbol updates queued and not yet applied (for tests and metrics). */
  synchronized int pendingSymbolUpdates() {
    return pending;
  }

  synchronized Fingerprint fingerprint() {
    return sketch.fingerprint();
  }

  synchronized DifferenceEstimator estimatorCopy() {
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
   * Adds the coded symbols to {@code sum}, atomically with respect to writes, and returns the
   * fingerprint of the same instant (both read under the monitor, every write applied).
   */
  synchronized Fingerprint addSymbolsTo(CodedSymbols sum) {
    symbolsLock.lock();
    try {
      applyPendingIfAny();
      sketch.addSymbolsTo(sum);
      return sketch.fingerprint();
    } finally {
      symbolsLock.unlock();
    }
  }

  /** Holding the monitor and {@code symbolsLock}. */
  private void applyPendingIfAny() {
    if (pending > 0) {
      apply(pendingX, pendingC, pendingD, pending);
      pending = 0;
    }
  }

  /** A new table of {@code shape} folded from the maintained table of its ladder. */
  synchronized Iblt fold(IbltShape shape) {
    return sketch.fold(shape);
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
