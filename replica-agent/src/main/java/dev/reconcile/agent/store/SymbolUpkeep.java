package dev.reconcile.agent.store;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thread that applies the partitions' deferred coded-symbol updates ({@link PartitionState}):
 * woken by a writer whose partition queued {@link PartitionState#WAKE_AT} updates, it drains every
 * partition until none has any left, then sleeps; an idle partition's few queued updates wait at
 * most {@link #IDLE_NANOS} (or until a reader of the symbols applies them itself). Nothing depends
 * on it for correctness: readers apply what is pending, and a writer whose buffer is full applies
 * it. Stopped by {@link #close()} before the store releases its handles.
 */
final class SymbolUpkeep implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SymbolUpkeep.class);

  /** Longest sleep between drains when no writer wakes the thread. */
  static final long IDLE_NANOS = 50_000_000L;

  private final Thread thread;
  private final AtomicLong applied = new AtomicLong();
  private volatile PartitionState[] states = new PartitionState[0];
  private volatile boolean running = true;

  SymbolUpkeep(String name) {
    this.thread = new Thread(this::loop, name);
    thread.setDaemon(true);
  }

  /** Starts draining {@code states} (once their rebuild is done). */
  void start(PartitionState[] s) {
    this.states = s;
    thread.start();
  }

  /** A writer's signal: a partition has enough queued updates to be worth a drain. */
  void wake() {
    LockSupport.unpark(thread);
  }

  /** Symbol updates this thread has applied so far. */
  long applied() {
    return applied.get();
  }

  private void loop() {
    while (running) {
      int n = 0;
      try {
        for (PartitionState st : states) {
          n += st.drainSymbols();
        }
      } catch (RuntimeException e) {
        // Never lose the store over this thread: readers and full buffers apply the updates.
        LOG.error("coded-symbol upkeep failed; writers and readers apply the updates", e);
      }
      applied.addAndGet(n);
      if (n == 0) {
        LockSupport.parkNanos(this, IDLE_NANOS);
      }
    }
  }

  /** Stops the thread and waits for it; what is still queued stays queued. Idempotent. */
  @Override
  public void close() {
    running = false;
    LockSupport.unpark(thread);
    if (thread.isAlive() && thread != Thread.currentThread()) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
