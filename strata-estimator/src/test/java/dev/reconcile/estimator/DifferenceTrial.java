package dev.reconcile.estimator;

import dev.reconcile.core.CellLayout;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.Estimate;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.Sizing;
import dev.reconcile.core.wire.Estimator;
import java.util.SplittableRandom;

/**
 * One seeded trial of a difference of {@code d} elements, built from the differing elements only.
 *
 * <p>The estimator is linear, so {@code est(A) - est(B) = est(A \ B) - est(B \ A)}: adding the
 * elements of {@code A \ B}, removing those of {@code B \ A} and estimating against an empty
 * estimator gives exactly the estimate of two full sets ({@code SetShortcutTest} checks it).
 */
final class DifferenceTrial {
  /** Hash seed of every trial (the elements vary with the trial seed). */
  static final HashSpec SPEC = HashSpec.xxh3(0x5eed_0f_e57L);

  final long seed;
  final int d;
  final long[] onlyA;
  final long[] onlyB;

  private DifferenceTrial(long seed, int d, long[] onlyA, long[] onlyB) {
    this.seed = seed;
    this.d = d;
    this.onlyA = onlyA;
    this.onlyB = onlyB;
  }

  /** {@code d} distinct random elements, each on side A or B with probability 1/2. */
  static DifferenceTrial of(long seed, int d) {
    // Mixed, not seed * constant: SplittableRandom seeds that differ by its gamma give shifted
    // streams.
    SplittableRandom r =
        new SplittableRandom(new SplittableRandom(seed).nextLong() ^ (d * 0xC2B2_AE3D_27D4_EB4FL));
    int na = 0;
    long[] all = new long[d];
    boolean[] side = new boolean[d];
    for (int i = 0; i < d; i++) {
      all[i] = r.nextLong(); // distinct with probability 1 - d^2 / 2^65
      side[i] = r.nextBoolean();
      if (side[i]) {
        na++;
      }
    }
    long[] a = new long[na];
    long[] b = new long[d - na];
    int ia = 0;
    int ib = 0;
    for (int i = 0; i < d; i++) {
      if (side[i]) {
        a[ia++] = all[i];
      } else {
        b[ib++] = all[i];
      }
    }
    return new DifferenceTrial(seed, d, a, b);
  }

  /** The estimator of {@code A \ B} minus that of {@code B \ A}. */
  DifferenceEstimator differenceEstimator(EstimatorFactory f) {
    DifferenceEstimator e = f.create(SPEC);
    for (long x : onlyA) {
      e.add(x);
    }
    for (long x : onlyB) {
      e.remove(x);
    }
    return e;
  }

  long estimate(EstimatorFactory f, Estimator empty) {
    return estimateOf(f, empty).value();
  }

  Estimate estimateOf(EstimatorFactory f, Estimator empty) {
    try {
      return differenceEstimator(f).estimate(empty);
    } catch (FormatException e) {
      throw new AssertionError("seed " + seed + ", d " + d + ": " + e.getMessage(), e);
    }
  }

  /** The first table the session would send for {@code estimate} and {@code factor}. */
  static IbltShape firstShape(long estimate, double factor) {
    long planned = Math.max(1, (long) Math.ceil(estimate * factor));
    return IbltShape.atLeast(Sizing.HASH_COUNT, Sizing.cellsFor(planned));
  }

  /** True when a table of {@code shape} holding this difference peels completely and correctly. */
  boolean decodes(IbltShape shape) {
    Iblt t = new Iblt(SPEC, shape, CellLayout.WIDE);
    for (long x : onlyA) {
      t.insert(x);
    }
    for (long x : onlyB) {
      t.delete(x);
    }
    var r = t.peel();
    return r.complete()
        && r.onlyHere().length == onlyA.length
        && r.onlyThere().length == onlyB.length;
  }

  static Estimator emptyProto(EstimatorFactory f) {
    return f.create(SPEC).toProto();
  }
}
