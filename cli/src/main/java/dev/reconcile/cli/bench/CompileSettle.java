package dev.reconcile.cli.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.function.LongSupplier;

/**
 * Whether the JIT has finished with a repeated piece of work: the latency bench's warm-up goes on,
 * past its fixed rounds, until the JVM's compilers have spent at most {@link #QUIET_MILLIS} over
 * the last {@code window} rounds (the caller stops after {@link AgentBench#MAX_SETTLE_ROUNDS} more
 * in any case), so that the timed rounds do not share the two cores with C2. A fixed count of
 * warm-up rounds was not enough at n = 10^6: in stop 39's profiles C2 used 0.5-0.6 CPU-s of the
 * 0.87 s of timed rounds with either jar (docs/benchmarks.md, section 2, "stop 40").
 *
 * <p>The clock is HotSpot's {@link CompilationMXBean#getTotalCompilationTime}: the compilers'
 * accumulated elapsed time in milliseconds, every compiler thread summed; on busy cores it counts a
 * compile's waits too, which only makes the warm-up wait longer. A JVM without it ({@link
 * #available} false) is never settled by it: the caller's maximum ends the warm-up.
 */
final class CompileSettle {
  /** Compile time over a whole window that still counts as settled. */
  static final long QUIET_MILLIS = 5;

  private final LongSupplier compileMillis;
  private final int window;
  private final long[] ring;
  private int seen;

  /** Reads this JVM's compilation time; {@code window} rounds make a quiet stretch. */
  static CompileSettle ofThisJvm(int window) {
    CompilationMXBean bean = ManagementFactory.getCompilationMXBean();
    boolean supported = bean != null && bean.isCompilationTimeMonitoringSupported();
    return new CompileSettle(supported ? bean::getTotalCompilationTime : () -> -1L, window);
  }

  /** {@code compileMillis}: accumulated compile time, or a negative value when unknown. */
  CompileSettle(LongSupplier compileMillis, int window) {
    if (window < 1) {
      throw new IllegalArgumentException("window must be >= 1, got " + window);
    }
    this.compileMillis = compileMillis;
    this.window = window;
    this.ring = new long[window + 1];
  }

  /** Whether the JVM reports its compilation time. */
  boolean available() {
    return compileMillis.getAsLong() >= 0;
  }

  /** The compilers' accumulated milliseconds now (negative when unknown). */
  long compileMillis() {
    return compileMillis.getAsLong();
  }

  /**
   * Records that one more round ended; true when the last {@code window} rounds together saw at
   * most {@link #QUIET_MILLIS} of compilation.
   */
  boolean roundEnded() {
    long now = compileMillis.getAsLong();
    if (now < 0) {
      return false;
    }
    ring[seen % ring.length] = now;
    seen++;
    if (seen <= window) {
      return false; // a window needs its start too: window + 1 readings
    }
    long start = ring[seen % ring.length];
    return now - start <= QUIET_MILLIS;
  }

  /** Marks the current reading as a window's start (call once before the first round). */
  void start() {
    seen = 0;
    roundEnded();
  }
}
