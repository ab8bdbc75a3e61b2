package dev.reconcile.core;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The one decode trial behind every sizing figure: {@link SizingSimulation} (the tables), {@code
 * SizingTest} and {@code DecodeStatisticsTest} (the assertions) all run this, so what is simulated
 * is what is asserted.
 *
 * <p>A trial draws {@code d} distinct random elements (within the layout's key width), each with a
 * random sign: +1 = only here, -1 = only there. That is the subtracted table of a session, {@code
 * T(A) - T(B) = T(A \ B) - T(B \ A)}; elements common to both sides cancel whatever their number
 * (the linearity {@code DecodeStatisticsTest} checks on real sets). The drawn difference is added
 * to a table and peeled; the outcome is {@link Outcome#DECODED} only when the peel is complete and
 * both lists equal the drawn sets, {@link Outcome#WRONG} when it is complete but the lists differ
 * (an undetected wrong decode), {@link Outcome#FAILED} otherwise.
 *
 * <p>Not thread-safe: one instance per thread; its arrays are reused between trials.
 */
final class DecodeTrial {
  enum Outcome {
    DECODED,
    FAILED,
    WRONG
  }

  private final long keyMask;
  private long[] plus;
  private long[] minus;
  private int np;
  private int nm;

  DecodeTrial(CellLayout layout) {
    this.keyMask = layout.keyMask();
    this.plus = new long[16];
    this.minus = new long[16];
  }

  /** Draws a new difference of {@code d} elements from {@code rnd}. */
  void draw(SplittableRandom rnd, int d) {
    if (plus.length < d) {
      plus = new long[d];
      minus = new long[d];
    }
    while (true) {
      np = 0;
      nm = 0;
      for (int i = 0; i < d; i++) {
        long x = rnd.nextLong() & keyMask;
        if (rnd.nextBoolean()) {
          plus[np++] = x;
        } else {
          minus[nm++] = x;
        }
      }
      // 64-bit elements collide with probability d^2 / 2^65: checked only for narrow keys, where
      // two equal elements would cancel (opposite signs) or share every cell (equal signs).
      if (keyMask == -1L || distinct(d)) {
        return;
      }
    }
  }

  private boolean distinct(int d) {
    long[] all = new long[d];
    System.arraycopy(plus, 0, all, 0, np);
    System.arraycopy(minus, 0, all, np, nm);
    Arrays.sort(all);
    for (int i = 1; i < d; i++) {
      if (all[i] == all[i - 1]) {
        return false;
      }
    }
    return true;
  }

  /** Adds the drawn difference to {@code t}. */
  void addTo(Iblt t) {
    for (int i = 0; i < np; i++) {
      t.update(plus[i], 1);
    }
    for (int i = 0; i < nm; i++) {
      t.update(minus[i], -1);
    }
  }

  /** Peels {@code t} (holding the drawn difference) in place and classifies the result. */
  Outcome peel(Iblt t) {
    PeelResult r = t.peel();
    if (!r.complete()) {
      return Outcome.FAILED;
    }
    return sameSet(plus, np, r.onlyHere()) && sameSet(minus, nm, r.onlyThere())
        ? Outcome.DECODED
        : Outcome.WRONG;
  }

  /**
   * Draws {@code d} elements, adds them to the empty table {@code t} and peels it. The table is
   * empty again afterwards whatever the outcome.
   */
  Outcome run(Iblt t, SplittableRandom rnd, int d) {
    draw(rnd, d);
    addTo(t);
    Outcome o = peel(t);
    if (o != Outcome.DECODED) {
      t.clear();
    }
    return o;
  }

  private static boolean sameSet(long[] truth, int n, long[] got) {
    if (got.length != n) {
      return false;
    }
    Arrays.sort(truth, 0, n);
    long[] g = got.clone();
    Arrays.sort(g);
    return Arrays.equals(truth, 0, n, g, 0, n);
  }
}
