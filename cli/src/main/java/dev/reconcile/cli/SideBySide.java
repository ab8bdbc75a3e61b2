package dev.reconcile.cli;

import java.util.function.Supplier;

/**
 * Two independent pieces of work on the two sides of a comparison, done at once: the left one on
 * the calling thread, the right one on a second thread (reading, hashing and sketching one input
 * needs nothing from the other, nor does mapping its elements back to keys). Each side's wall time
 * is kept for the summary.
 *
 * <p>Failures are reported as if the sides had been done one after the other: the left side's
 * failure wins (the right side's thread is then interrupted and its result or failure dropped);
 * otherwise the right side's failure is rethrown as it was thrown.
 */
final class SideBySide<A, B> {
  private final A left;
  private final B right;
  private final long leftNanos;
  private final long rightNanos;

  private SideBySide(A left, B right, long leftNanos, long rightNanos) {
    this.left = left;
    this.right = right;
    this.leftNanos = leftNanos;
    this.rightNanos = rightNanos;
  }

  A left() {
    return left;
  }

  B right() {
    return right;
  }

  long leftNanos() {
    return leftNanos;
  }

  long rightNanos() {
    return rightNanos;
  }

  static <A, B> SideBySide<A, B> run(Supplier<A> left, Supplier<B> right) {
    Outcome<B> r = new Outcome<>();
    Thread t =
        new Thread(
            () -> {
              long t0 = System.nanoTime();
              try {
                r.value = right.get();
              } catch (RuntimeException | Error e) { // handed to the caller's thread below
                r.failure = e;
              }
              r.nanos = System.nanoTime() - t0;
            },
            "reconcile-right-side");
    t.setDaemon(true);
    t.start();
    long t0 = System.nanoTime();
    A l;
    try {
      l = left.get();
    } catch (RuntimeException | Error e) {
      t.interrupt();
      join(t);
      throw e;
    }
    long leftNanos = System.nanoTime() - t0;
    join(t);
    if (r.failure instanceof RuntimeException e) {
      throw e;
    }
    if (r.failure instanceof Error e) {
      throw e;
    }
    return new SideBySide<>(l, r.value, leftNanos, r.nanos);
  }

  private static void join(Thread t) {
    boolean interrupted = false;
    while (true) {
      try {
        t.join();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** What the right side's thread produced; read after {@link Thread#join}. */
  private static final class Outcome<B> {
    B value;
    Throwable failure;
    long nanos;
  }
}
