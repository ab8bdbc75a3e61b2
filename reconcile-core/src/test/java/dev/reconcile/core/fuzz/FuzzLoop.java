package dev.reconcile.core.fuzz;

import java.time.Duration;
import java.util.SplittableRandom;

/**
 * Runs a decoder over many seeded inputs. Each input {@code i} gets its own {@link
 * SplittableRandom} seeded with {@code seed(base, i)}, so any failure names the one seed that
 * reproduces it (add it to the decoder's regression {@code @ValueSource}). The body returns
 * normally when the decoder accepted the input or rejected it with a documented checked exception
 * and a clear message; anything else (another exception, an error, a blank message, an input over
 * the time bound) fails the test with the seed in the message. Totals go to stdout as one {@code
 * fuzz ...} line.
 */
public final class FuzzLoop {
  /** Longest time one input may take before it counts as a hang. */
  public static final Duration PER_INPUT = Duration.ofSeconds(2);

  /** One fuzz input. */
  @FunctionalInterface
  public interface Body {
    /** Returns true when the input was accepted, false when rejected as documented. */
    boolean run(SplittableRandom r) throws Exception;
  }

  private FuzzLoop() {}

  public static long seed(long base, long i) {
    return base * 0x9E37_79B9_7F4A_7C15L + i;
  }

  /** Runs one input with the given seed (regression cases call this directly). */
  public static boolean one(String name, long seed, Body body) {
    return one(name, seed, PER_INPUT, body);
  }

  /** As {@link #one(String, long, Body)} with another time bound (inputs that wait on sockets). */
  public static boolean one(String name, long seed, Duration bound, Body body) {
    long t0 = System.nanoTime();
    boolean accepted;
    try {
      accepted = body.run(new SplittableRandom(seed));
    } catch (Throwable t) {
      throw new AssertionError(
          "fuzz "
              + name
              + ": seed "
              + seed
              + "L: unexpected "
              + t.getClass().getName()
              + ": "
              + t.getMessage(),
          t);
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    if (ms > bound.toMillis()) {
      throw new AssertionError(
          "fuzz "
              + name
              + ": seed "
              + seed
              + "L took "
              + ms
              + " ms (bound "
              + bound.toMillis()
              + " ms)");
    }
    return accepted;
  }

  /** Runs {@code n} inputs; returns the number run. */
  public static long run(String name, long base, long n, Body body) {
    return run(name, base, n, PER_INPUT, body);
  }

  /** As {@link #run(String, long, long, Body)} with another per-input time bound. */
  public static long run(String name, long base, long n, Duration bound, Body body) {
    long accepted = 0;
    long t0 = System.nanoTime();
    for (long i = 0; i < n; i++) {
      if (one(name, seed(base, i), bound, body)) {
        accepted++;
      }
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.printf(
        "fuzz %s: %d inputs (%d accepted, %d rejected) in %d ms%n",
        name, n, accepted, n - accepted, ms);
    return n;
  }

  /** Rejection messages must say something: not null, not blank. */
  public static void clearMessage(String name, Throwable t) {
    if (t.getMessage() == null || t.getMessage().isBlank()) {
      throw new AssertionError("fuzz " + name + ": rejection without a message: " + t, t);
    }
  }
}
