package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Decoding never lies: over many trials, most of them in deliberately undersized tables, a peel
 * that reports {@code complete} always returns exactly the true difference. Also the two algebraic
 * properties the protocol relies on: fold equals direct construction, and subtract + peel yields
 * the symmetric difference.
 */
class DecodeStatisticsTest {
  static final int SCALE = Integer.getInteger("reconcile.trials.scale", 1);

  /**
   * Trials: 10^5 by default; under the soak profile ({@code scale > 1}) 10^6 times the scale, i.e.
   * 10^7 with {@code -Psoak}.
   */
  static long wrongDecodeTrials() {
    return SCALE <= 1 ? 100_000L : 1_000_000L * SCALE;
  }

  /**
   * Each trial draws d in [1, 64] and a shape of the combined ladders with between d/2 and 4d cells
   * (many far too small to peel), and runs the sizing trial ({@link DecodeTrial}: d random elements
   * with random sides, peeled). A complete decode whose lists differ from the truth is an
   * undetected wrong decode; there must be none, for the reconciliation layout (WIDE: 64-bit keys,
   * 32-bit checks) and for the estimator's NARROW layout (32-bit keys, 16-bit checks, elements
   * drawn distinct in 32 bits). The test also requires that at least a fifth of the decodes failed,
   * so the undersized tables were really exercised. Any seed must pass (the assertion is not about
   * luck): {@code -Dreconcile.seed=N} runs another.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"WIDE", "NARROW"})
  void noUndetectedWrongDecode(String layoutName) {
    CellLayout layout = layoutName.equals("WIDE") ? CellLayout.WIDE : CellLayout.NARROW;
    long seed = Long.getLong("reconcile.seed", 0xBAD_DEC0DEL) + layoutName.hashCode();
    long trials = wrongDecodeTrials();
    SplittableRandom rnd = new SplittableRandom(seed);
    HashSpec spec = HashSpec.xxh3(seed);
    IbltShape[] ladder = SizingSimulation.ladder().subList(0, 12).toArray(IbltShape[]::new);
    Iblt[] tables = new Iblt[ladder.length];
    for (int i = 0; i < ladder.length; i++) {
      tables[i] = new Iblt(spec, ladder[i], layout);
    }
    DecodeTrial trial = new DecodeTrial(layout);
    long incomplete = 0;
    long wrong = 0;
    long firstWrongTrial = -1;
    for (long t = 0; t < trials; t++) {
      int d = 1 + rnd.nextInt(64);
      int lo = 0;
      while (ladder[lo].cells() < (d + 1) / 2) {
        lo++;
      }
      int hi = lo;
      while (hi + 1 < ladder.length && ladder[hi + 1].cells() <= 4L * d) {
        hi++;
      }
      DecodeTrial.Outcome o = trial.run(tables[lo + rnd.nextInt(hi - lo + 1)], rnd, d);
      if (o == DecodeTrial.Outcome.FAILED) {
        incomplete++;
      } else if (o == DecodeTrial.Outcome.WRONG) {
        wrong++;
        if (firstWrongTrial < 0) {
          firstWrongTrial = t;
        }
      }
    }
    assertThat(wrong)
        .as(
            "%s seed=%d trials=%d: %d wrong complete decodes, first at trial %d",
            layout, seed, trials, wrong, firstWrongTrial)
        .isZero();
    assertThat(incomplete)
        .as("%s seed=%d: undersized tables must fail often", layout, seed)
        .isGreaterThan(trials / 5);
  }

  @ParameterizedTest(name = "base={0}")
  @ValueSource(ints = {1, 3})
  void foldEqualsDirectConstructionAtEverySmallerSize(int base) {
    for (long seed = 1; seed <= 4; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed * 7919 + base);
      HashSpec spec = HashSpec.xxh3(rnd.nextLong());
      for (CellLayout layout : new CellLayout[] {CellLayout.WIDE, CellLayout.NARROW}) {
        int bigLog2 = 11;
        IbltShape big = new IbltShape(3, base, bigLog2);
        long[] xs = new long[5000];
        int[] deltas = new int[xs.length];
        Iblt table = new Iblt(spec, big, layout);
        for (int i = 0; i < xs.length; i++) {
          xs[i] = rnd.nextLong();
          deltas[i] = rnd.nextInt(5) == 0 ? -1 : 1;
          table.update(xs[i], deltas[i]);
        }
        for (int log2 = bigLog2; log2 >= 0; log2--) {
          IbltShape small = big.withLog2(log2);
          Iblt direct = new Iblt(spec, small, layout);
          for (int i = 0; i < xs.length; i++) {
            direct.update(xs[i], deltas[i]);
          }
          assertThat(table.fold(small).sameCells(direct))
              .as("seed=%d base=%d layout=%s log2=%d", seed, base, layout, log2)
              .isTrue();
        }
      }
    }
  }

  /**
   * Real overlapping sets: the subtracted table equals the table of the difference alone (cell by
   * cell, whatever the common part), and a complete peel lists exactly the symmetric difference.
   * Tables have the 99.9 % size ({@link Sizing#shapeFor}), so a few trials may fail to decode: they
   * must be reported incomplete (never a partial list as complete) and be at most the count a
   * failure rate of 0.1 % reaches with probability 10^-6.
   */
  @Test
  void subtractThenPeelYieldsTheSymmetricDifference() {
    long master = Long.getLong("reconcile.seed", 0x5EBDL);
    int trials = 200 * SCALE;
    int incomplete = 0;
    for (int trial = 0; trial < trials; trial++) {
      long seed = master + trial;
      SplittableRandom rnd = new SplittableRandom(seed);
      HashSpec spec = HashSpec.xxh3(seed);
      int common = 1 + rnd.nextInt(100_000);
      TestSets s = TestSets.random(rnd.nextLong(), common, rnd.nextInt(300), rnd.nextInt(300));
      IbltShape shape = Sizing.shapeFor(s.onlyA.length + s.onlyB.length);
      Iblt a = new Iblt(spec, shape, CellLayout.WIDE);
      Iblt b = new Iblt(spec, shape, CellLayout.WIDE);
      Arrays.stream(s.a).forEach(a::insert);
      Arrays.stream(s.b).forEach(b::insert);
      a.subtract(b);
      Iblt differenceOnly = new Iblt(spec, shape, CellLayout.WIDE);
      Arrays.stream(s.onlyA).forEach(differenceOnly::insert);
      Arrays.stream(s.onlyB).forEach(differenceOnly::delete);
      String why = "seed=" + seed + " common=" + common + " d=" + (s.onlyA.length + s.onlyB.length);
      assertThat(a.sameCells(differenceOnly)).as("linearity, " + why).isTrue();
      PeelResult r = a.peel();
      if (!r.complete()) {
        incomplete++;
        assertThat(a.isEmpty()).as("an incomplete peel leaves cells, " + why).isFalse();
        continue;
      }
      assertThat(sorted(r.onlyHere())).as(why).containsExactly(sorted(s.onlyA));
      assertThat(sorted(r.onlyThere())).as(why).containsExactly(sorted(s.onlyB));
      assertThat(a.isEmpty()).as(why).isTrue();
    }
    assertThat(incomplete)
        .as("master seed %d: incomplete decodes in %d trials", master, trials)
        .isLessThanOrEqualTo(SizingTest.upperTailBound(trials, 1e-3, 1e-6));
  }

  private static long[] sorted(long[] a) {
    long[] c = a.clone();
    Arrays.sort(c);
    return c;
  }
}
