package dev.reconcile.cli.bench;

import dev.reconcile.agent.LocalReplica;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.SketchParams;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * A client writing to a replica at a fixed rate while the bench repairs it: one thread puts a new
 * key every {@code 1 / rate} seconds, on a schedule fixed in advance, and times each put from the
 * moment it was due (not from when it started), so that a write held up behind the store's writer
 * lock also delays, and charges, the writes due after it (no coordinated omission). The times are
 * kept per write, so that the caller can take the writes due within any window (the repair phase of
 * a round, an idle stretch before it). Every key it writes is of partition 0, so that the other
 * partitions stay as the round found them (a catch-up's partitions stay bulk) while its writes
 * still wait for the store's one writer lock like any. Each put's own span (from its call to its
 * return: the store's locks, read, write and sketch update) is kept too, so that a tail of the
 * latency can be told apart from the writing thread waiting for a CPU to run on.
 */
final class ForegroundWrites {
  private final LocalReplica replica;
  private final long intervalNanos;
  private final String prefix;
  private final int valueBytes;
  private final long[] due;
  private final long[] latency;
  private final long[] service;
  private final Thread thread;
  private volatile boolean stopping;
  private volatile Throwable failure;
  private int n; // written by the thread, read after join

  /**
   * Starts writing to {@code replica}: for put {@code i} the first key {@code prefix + i + "." + j}
   * of partition 0 (found within the timed span: about 16 key hashes, a microsecond), values of
   * {@code valueBytes}, {@code rate} puts per second, at most {@code maxWrites} of them.
   */
  ForegroundWrites(
      LocalReplica replica, int rate, String prefix, int valueBytes, int maxWrites, long seed) {
    if (rate < 1 || maxWrites < 1) {
      throw new IllegalArgumentException("rate and maxWrites must be >= 1");
    }
    this.replica = replica;
    this.intervalNanos = 1_000_000_000L / rate;
    this.prefix = prefix;
    this.valueBytes = valueBytes;
    this.due = new long[maxWrites];
    this.latency = new long[maxWrites];
    this.service = new long[maxWrites];
    SplittableRandom rnd = new SplittableRandom(seed);
    this.thread = new Thread(() -> run(rnd), "foreground-writes");
    thread.setDaemon(true);
    thread.start();
  }

  private void run(SplittableRandom rnd) {
    try {
      long start = System.nanoTime();
      byte[] value = new byte[valueBytes];
      for (int i = 0; i < due.length && !stopping; i++) {
        long at = start + i * intervalNanos;
        long wait;
        while ((wait = at - System.nanoTime()) > 0 && !stopping) {
          LockSupport.parkNanos(wait);
        }
        rnd.nextBytes(value);
        byte[] key = keyOfPartition0(i);
        long called = System.nanoTime();
        replica.put(key, value);
        long done = System.nanoTime();
        due[i] = at;
        latency[i] = done - at;
        service[i] = done - called;
        n = i + 1;
      }
    } catch (Throwable t) {
      failure = t;
    }
  }

  /** The first key {@code prefix + i + "." + j} (j = 0, 1, ...) of partition 0. */
  private byte[] keyOfPartition0(int i) {
    SketchParams params = replica.params();
    for (int j = 0; ; j++) {
      byte[] key = (prefix + i + "." + j).getBytes(StandardCharsets.UTF_8);
      if (HashSpec.partition(params.spec().keyHash(key), params.partitionsLog2()) == 0) {
        return key;
      }
    }
  }

  /** Stops the writer and waits for it; rethrows what a put threw. */
  void stop() throws InterruptedException {
    stopping = true;
    thread.join();
    if (failure != null) {
      throw new IllegalStateException("a foreground write failed: " + failure, failure);
    }
  }

  /** Writes made so far (after {@link #stop}). */
  int writes() {
    return n;
  }

  /**
   * The latencies in microseconds, sorted, of the writes due in {@code [fromNanos, toNanos)}
   * ({@link System#nanoTime}); call after {@link #stop}.
   */
  double[] latencyMicros(long fromNanos, long toNanos) {
    return micros(latency, fromNanos, toNanos);
  }

  /**
   * The spans of the puts themselves in microseconds (call to return), sorted, of the writes due in
   * {@code [fromNanos, toNanos)}; call after {@link #stop}.
   */
  double[] serviceMicros(long fromNanos, long toNanos) {
    return micros(service, fromNanos, toNanos);
  }

  private double[] micros(long[] nanos, long fromNanos, long toNanos) {
    double[] out = new double[n];
    int k = 0;
    for (int i = 0; i < n; i++) {
      if (due[i] - fromNanos >= 0 && due[i] - toNanos < 0) {
        out[k++] = nanos[i] / 1e3;
      }
    }
    double[] sorted = Arrays.copyOf(out, k);
    Arrays.sort(sorted);
    return sorted;
  }
}
