package dev.reconcile.agent;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The serial worker of one round: its tasks run one at a time, in order, on threads of the agent's
 * shared pool ({@link #pool}). A round used to start a thread of its own, which cost about a
 * millisecond before its first step on a loaded 2-core machine (docs/benchmarks.md, section 2);
 * pooled threads are warm. While it runs a round's tasks a pooled thread carries the round's name
 * ({@code round-to-...}, {@code round-from-...}), so thread dumps and {@code
 * docs/tools/thread_cpu.py} still see the round; idle, it is called {@code idle-round-worker-N}
 * (not {@code round-...}, which the tool takes for a running round).
 *
 * <p>{@link #shutdown} behaves as {@link ExecutorService#shutdown}: tasks queued before it still
 * run, later ones are rejected with {@link RejectedExecutionException}.
 */
final class RoundWorker implements Executor {
  private static final Logger LOG = LoggerFactory.getLogger(RoundWorker.class);

  private final Executor pool;
  private final String name;
  private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
  private boolean scheduled;
  private boolean shutdown;

  RoundWorker(Executor pool, String name) {
    this.pool = pool;
    this.name = name;
  }

  /**
   * The agent's pool: threads are created on demand (one per concurrent round at most, since a
   * round's tasks never run at once) and end after a minute idle.
   */
  static ExecutorService pool() {
    AtomicInteger n = new AtomicInteger();
    return new ThreadPoolExecutor(
        0,
        Integer.MAX_VALUE,
        60,
        TimeUnit.SECONDS,
        new SynchronousQueue<>(),
        r -> {
          Thread t = new Thread(r, "idle-round-worker-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }

  @Override
  public void execute(Runnable task) {
    boolean schedule;
    synchronized (this) {
      if (shutdown) {
        throw new RejectedExecutionException("round " + name + " has ended");
      }
      tasks.addLast(task);
      schedule = !scheduled;
      scheduled = true;
    }
    if (schedule) {
      try {
        pool.execute(this::drain);
      } catch (RejectedExecutionException e) {
        synchronized (this) {
          scheduled = false;
          tasks.clear();
        }
        throw e;
      }
    }
  }

  /** Rejects tasks from now on; those already queued still run. */
  synchronized void shutdown() {
    shutdown = true;
  }

  private void drain() {
    Thread t = Thread.currentThread();
    String idle = t.getName();
    t.setName(name);
    try {
      while (true) {
        Runnable next;
        synchronized (this) {
          next = tasks.pollFirst();
          if (next == null) {
            scheduled = false;
            return;
          }
        }
        try {
          next.run();
        } catch (RuntimeException | Error e) {
          LOG.error("round {}: task failed", name, e);
        }
      }
    } finally {
      t.setName(idle);
    }
  }
}
