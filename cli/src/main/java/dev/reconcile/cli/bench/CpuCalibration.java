package dev.reconcile.cli.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * How fast this machine's cores are right now: the CPU time (not the wall time) one thread needs
 * for two fixed pieces of work. {@link #sampleMemory}: a chain of dependent multiply-xorshift steps
 * that each read and write one random slot of an 8 MB array (past the private caches: core speed,
 * shared cache and memory together). {@link #sampleCore}: the same chain in registers only (the
 * core alone). On a virtual machine whose cores are shared with other tenants (a busy sibling
 * hyperthread, a neighbour filling the shared cache), the same work takes more CPU time while the
 * hypervisor reports no steal; run beside each timed trial, this tells a slow trial of slow code
 * from a trial on a slow machine.
 *
 * <p>Each sample runs its work {@link #RUNS} times and returns the median in milliseconds; the
 * constructor runs both a few times first, until the JIT has compiled them (each is one long loop,
 * compiled on the stack in its first run).
 */
final class CpuCalibration {
  static final int RUNS = 5;
  private static final int STEPS = 1 << 22;
  private final long[] table = new long[1 << 20];
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private long sink;

  CpuCalibration() {
    long x = 0x9E3779B97F4A7C15L;
    for (int i = 0; i < table.length; i++) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
      table[i] = x;
    }
    for (int i = 0; i < 3; i++) {
      memoryWork();
      coreWork();
    }
  }

  /** Median CPU milliseconds of {@link #RUNS} runs of the work through the 8 MB array. */
  double sampleMemory() {
    return sample(this::memoryWork);
  }

  /** Median CPU milliseconds of {@link #RUNS} runs of the work in registers. */
  double sampleCore() {
    return sample(this::coreWork);
  }

  private double sample(Runnable work) {
    double[] ms = new double[RUNS];
    for (int r = 0; r < RUNS; r++) {
      long t0 = threads.getCurrentThreadCpuTime();
      work.run();
      ms[r] = (threads.getCurrentThreadCpuTime() - t0) / 1e6;
    }
    Arrays.sort(ms);
    return ms[RUNS / 2];
  }

  private void coreWork() {
    long h = sink | 1;
    for (int i = 0; i < STEPS * 4; i++) {
      h *= 0xBF58476D1CE4E5B9L;
      h ^= h >>> 31;
    }
    sink = h;
  }

  private void memoryWork() {
    long[] t = table;
    int mask = t.length - 1;
    long h = sink | 1;
    for (int i = 0; i < STEPS; i++) {
      int j = (int) (h >>> 40) & mask;
      h = (h ^ t[j]) * 0xBF58476D1CE4E5B9L;
      h ^= h >>> 31;
      t[j] = h;
    }
    sink = h;
  }
}
