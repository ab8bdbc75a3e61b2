package dev.reconcile.agent.store;

import dev.reconcile.core.ConflictRule;
import dev.reconcile.core.ReplicaRecord;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Hybrid logical clock (Kulkarni et al., "Logical Physical Clocks", OPODIS 2014) packed in 64 bits:
 *
 * <pre>
 *   version = physicalMillis << 16 | logical        physicalMillis = version >>> 16
 * </pre>
 *
 * {@link #now()} returns {@code max(last + 1, wallMillis << 16)}: strictly increasing, close to the
 * wall clock, and after {@link #observe(long)} of a remote version, larger than it (so a local
 * write after a repair always beats what the repair brought). When more than 65 535 versions are
 * taken in one millisecond the logical counter carries into the physical part, which then runs
 * slightly ahead of the wall clock until the wall clock catches up. 48 bits of milliseconds last
 * until the year 10889. Versions compare as unsigned numbers, as in {@link ConflictRule}. Lock-free
 * and thread-safe.
 */
public final class HybridClock {
  private final LongSupplier millis;
  private final AtomicLong last = new AtomicLong();

  /** A clock over the millisecond source {@code millis} (tests inject a manual one). */
  public HybridClock(LongSupplier millis) {
    this.millis = millis;
  }

  public static HybridClock system() {
    return new HybridClock(System::currentTimeMillis);
  }

  /** A new version, larger than every version returned or observed before. */
  public long now() {
    long wall = millis.getAsLong() << 16;
    while (true) {
      long prev = last.get();
      long next = Long.compareUnsigned(prev + 1, wall) >= 0 ? prev + 1 : wall;
      if (last.compareAndSet(prev, next)) {
        return next;
      }
    }
  }

  /** Moves the clock past a version seen elsewhere (a remote record or a stored one). */
  public void observe(long remoteVersion) {
    last.accumulateAndGet(remoteVersion, (a, b) -> Long.compareUnsigned(a, b) >= 0 ? a : b);
  }

  /** The largest version returned or observed so far. */
  public long last() {
    return last.get();
  }

  /** Wall-clock milliseconds of the source. */
  public long wallMillis() {
    return millis.getAsLong();
  }

  public static long physicalMillis(long version) {
    return ReplicaRecord.physicalMillis(version);
  }

  public static int logical(long version) {
    return ReplicaRecord.logical(version);
  }

  public static long version(long physicalMillis, int logical) {
    return ReplicaRecord.version(physicalMillis, logical);
  }

  /** {@code physical.logical}, e.g. {@code 1712000000000.3}. */
  public static String describe(long version) {
    return ReplicaRecord.describeVersion(version);
  }
}
