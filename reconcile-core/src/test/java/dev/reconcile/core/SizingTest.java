package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The sizing tables: their loading and validation, and (statistically) their claims: a table of
 * {@link Sizing#cellsFor(long)} cells decodes a difference of {@code d} with probability at least
 * 99.9 % per attempt, and the failure rates of the decode table ({@code decode-k3.csv}) behind
 * {@link Sizing#firstShape(long)} are what a new run measures.
 */
class SizingTest {
  static final int SCALE = Integer.getInteger("reconcile.trials.scale", 1);

  /** Trials per d for the 99.9 % claim. */
  static final int TRIALS = 5000;

  /** False-alarm probability of the 99.9 % assertion at a true rate of exactly 0.1 %. */
  static final double FALSE_ALARM = 1e-4;

  /**
   * Decode success at the table's sizes: {@code TRIALS x reconcile.trials.scale} trials (the sizing
   * trial, {@link DecodeTrial}), failing when failures exceed {@code k}, the smallest count with
   * {@code P[Binomial(T, 0.001) > k] <= 10^-4}. At a true failure rate of 0.5 % the test fails with
   * probability at least 97.5 % ({@link #theAssertionCanFailAHalfPercentRate}). Larger d (each
   * trial is O(d)) run in the soak profile: {@link #decodesAtLeast999PerMilleAtLargeD}.
   */
  @ParameterizedTest(name = "d={0}")
  @ValueSource(ints = {1, 2, 3, 5, 10, 20, 50, 100, 300, 1000, 3000, 10_000})
  void decodesAtLeast999PerMille(int d) {
    assertDecodesAtLeast999PerMille(d, TRIALS * SCALE);
  }

  /** As above for large d, {@value #TRIALS} trials each, in the soak profile only. */
  @ParameterizedTest(name = "d={0}")
  @ValueSource(ints = {31_623, 100_000})
  @EnabledIfSystemProperty(named = "reconcile.trials.scale", matches = "([2-9]|\\d{2,})")
  void decodesAtLeast999PerMilleAtLargeD(int d) {
    assertDecodesAtLeast999PerMille(d, TRIALS);
  }

  private static void assertDecodesAtLeast999PerMille(int d, int trials) {
    long seed = 0xD15EA5EL * 31 + d;
    IbltShape shape = Sizing.shapeFor(d);
    assertThat(shape.cells()).as("table rows are ladder sizes").isEqualTo(Sizing.cellsFor(d));
    int failures = failures(HashSpec.xxh3(seed), shape, d, trials, seed);
    int k = upperTailBound(trials, 1e-3, FALSE_ALARM);
    assertThat(failures)
        .as(
            "d=%d shape=%s seed=%d: %d failures in %d trials, allowed %d",
            d, shape, seed, failures, trials, k)
        .isLessThanOrEqualTo(k);
  }

  @Test
  void theAssertionCanFailAHalfPercentRate() {
    int k = upperTailBound(TRIALS, 1e-3, FALSE_ALARM);
    // P[Binomial(T, 0.005) <= k]: the chance that a 0.5 % failure rate passes unnoticed
    assertThat(binomialCdf(TRIALS, 0.005, k)).isLessThan(0.025);
  }

  /**
   * The decode table's first-try failure rates, re-measured with fresh seeds at the shapes the
   * planner picks ({@link Sizing#firstShape(long)}) and at the next smaller shape of each ladder:
   * the new count must agree with the table's within 5 standard deviations of the difference of two
   * binomial proportions (about one false alarm in 3 million).
   */
  @ParameterizedTest(name = "d={0}")
  @ValueSource(ints = {2, 5, 10, 20, 50, 100, 237, 1000})
  void decodeTableRatesAreReproduced(int d) {
    int trials = 4000 * SCALE;
    IbltShape first = Sizing.firstShape(d);
    for (IbltShape shape :
        new IbltShape[] {first, first.log2() > 0 ? first.withLog2(first.log2() - 1) : first}) {
      if (shape.cells() < d) {
        continue;
      }
      long seed = 0x7AB1EL * 31 + d * 7L + shape.cells();
      double p = Sizing.failureRate(d, shape);
      int tableTrials = SizingSimulation.decodeTrials(d, false);
      int failures = failures(HashSpec.xxh3(seed), shape, d, trials, seed);
      double q = (double) failures / trials;
      double pooled = (p * tableTrials + failures) / (tableTrials + trials);
      double sd = Math.sqrt(pooled * (1 - pooled) * (1.0 / trials + 1.0 / tableTrials));
      assertThat(Math.abs(q - p))
          .as(
              "d=%d shape=%s seed=%d: table says %.4f (%d trials), measured %d/%d",
              d, shape, seed, p, tableTrials, failures, trials)
          .isLessThanOrEqualTo(5 * sd + 1e-9);
    }
  }

  /**
   * Decode failures of {@code trials} random differences of {@code d} (random sides) in {@code
   * shape}.
   */
  static int failures(HashSpec spec, IbltShape shape, int d, int trials, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    Iblt t = new Iblt(spec, shape, CellLayout.WIDE);
    DecodeTrial trial = new DecodeTrial(CellLayout.WIDE);
    int failures = 0;
    for (int i = 0; i < trials; i++) {
      if (trial.run(t, rnd, d) != DecodeTrial.Outcome.DECODED) {
        failures++;
      }
    }
    return failures;
  }

  /** Smallest k with P[Binomial(n, p) > k] <= alpha. */
  static int upperTailBound(int n, double p, double alpha) {
    double logPmf = n * Math.log1p(-p);
    double cdf = Math.exp(logPmf);
    int k = 0;
    while (1 - cdf > alpha) {
      logPmf += Math.log((double) (n - k) / (k + 1)) + Math.log(p / (1 - p));
      cdf += Math.exp(logPmf);
      k++;
    }
    return k;
  }

  /** P[Binomial(n, p) <= k]. */
  static double binomialCdf(int n, double p, int k) {
    double logPmf = n * Math.log1p(-p);
    double cdf = 0;
    for (int i = 0; i <= k; i++) {
      cdf += Math.exp(logPmf);
      logPmf += Math.log((double) (n - i) / (i + 1)) + Math.log(p / (1 - p));
    }
    return cdf;
  }

  // ------------------------------------------------------------ least expected bytes

  private static final int CB = CellLayout.WIDE.cellBytes();
  private static final long RT = Sizing.DEFAULT_ROUND_TRIP_BYTES;

  /** Every shape of both ladders with at most {@code maxCells} cells. */
  private static java.util.List<IbltShape> shapesUpTo(long maxCells) {
    return SizingSimulation.ladder().stream().filter(s -> s.cells() <= maxCells).toList();
  }

  @Test
  void firstShapeHasTheLeastExpectedBytesOfAllShapes() {
    for (long d : SizingSimulation.grid(Sizing.decodeTableMaxD())) {
      IbltShape best = Sizing.firstShape(d);
      double bytes = Sizing.expectedBytes(d, best, CB, RT);
      assertThat(best.cells()).as("d=%d", d).isGreaterThanOrEqualTo(d);
      assertThat(bytes).as("d=%d: at least the table", d).isGreaterThanOrEqualTo(best.cells() * CB);
      for (IbltShape s : shapesUpTo(4 * Sizing.cellsFor(d))) {
        assertThat(Sizing.expectedBytes(d, s, CB, RT))
            .as("d=%d: %s vs the chosen %s", d, s, best)
            .isGreaterThanOrEqualTo(bytes);
      }
      // never more than starting with the 99.9 % table (which fails in under 1 % of the trials)
      assertThat(bytes).as("d=%d", d).isLessThanOrEqualTo(Sizing.cellsFor(d) * CB * 1.01 + RT);
    }
  }

  @Test
  void expectedBytesFollowTheDecodeTable() {
    // d = 10: a table with fewer cells than d always fails and continues from the first level
    IbltShape tiny = new IbltShape(3, 1, 0);
    assertThat(Sizing.failureRate(10, tiny)).isEqualTo(1.0);
    IbltShape first = new IbltShape(3, 1, 2); // 12 cells, the smallest base-1 level >= 10
    assertThat(Sizing.expectedBytes(10, tiny, CB, RT))
        .isEqualTo(Sizing.expectedBytes(10, first, CB, RT) + 2 * RT);
    // far above the simulated levels: the table decodes at once
    IbltShape huge = new IbltShape(3, 1, 20);
    assertThat(Sizing.expectedBytes(10, huge, CB, RT)).isEqualTo(huge.cells() * CB);
    assertThat(Sizing.failureRate(10, huge)).isZero();
    // round-trip cost only matters through the retries
    double noRt = Sizing.expectedBytes(10, first, CB, 0);
    double withRt = Sizing.expectedBytes(10, first, CB, 1000);
    assertThat(withRt - noRt).isBetween(0.0, 1000 * 5.0);
    assertThatThrownBy(() -> Sizing.expectedBytes(10, new IbltShape(4, 1, 3), CB, RT))
        .hasMessageContaining("hash count 3");
  }

  @Test
  void firstShapeForAnEstimateAveragesOverItsError() {
    assertThat(Sizing.firstShape(100, true, 1.5)).isEqualTo(Sizing.firstShape(100));
    assertThat(Sizing.firstShape(100, false, 1.0)).isEqualTo(Sizing.firstShape(100));
    assertThat(Sizing.firstShape(0, false, 1.1)).isEqualTo(Sizing.firstShape(1));
    assertThat(Sizing.firstShape(1, false, 1.1, 500).cells()).isGreaterThanOrEqualTo(500);
    for (long est : new long[] {3, 10, 47, 100, 333, 1000, 2500, 10_000, 30_000}) {
      for (double f : new double[] {1.1, 1.35, 2.0}) {
        IbltShape chosen = Sizing.firstShape(est, false, f);
        double sigma = Math.min(Sizing.MAX_SIGMA, (1 - 1 / f) / 2.576);
        double best = averaged(est, sigma, chosen);
        for (IbltShape s : shapesUpTo(8 * Sizing.cellsFor(est) + 100)) {
          assertThat(averaged(est, sigma, s))
              .as("estimate %d, factor %.2f: %s vs the chosen %s", est, f, s, chosen)
              .isGreaterThanOrEqualTo(best - 1e-6);
        }
      }
    }
    long beyond = 3 * Sizing.decodeTableMaxD();
    assertThat(Sizing.firstShape(beyond).cells()).isGreaterThanOrEqualTo(beyond);
    assertThat(Sizing.firstShape(beyond, false, 1.1).cells()).isGreaterThanOrEqualTo(beyond);
  }

  /** The objective of {@link Sizing#firstShape(long, boolean, double)}, recomputed. */
  private static double averaged(long est, double sigma, IbltShape s) {
    double b = 0;
    for (int k = 0; k < Sizing.GH_NODES.length; k++) {
      long d = Math.max(1, Math.round(est / (1 + sigma * Sizing.GH_NODES[k])));
      b += Sizing.GH_WEIGHTS[k] * Sizing.expectedBytes(d, s, CB, RT);
    }
    return b;
  }

  @Test
  void smallFirstTableFromTheFingerprints() {
    assertThat(Sizing.differenceLowerBound(0, 1)).isEqualTo(2); // equal counts: an update
    assertThat(Sizing.differenceLowerBound(1, 1)).isEqualTo(1);
    assertThat(Sizing.differenceLowerBound(5, 3)).isEqualTo(5);
    assertThat(Sizing.differenceLowerBound(2, 6)).isEqualTo(10);
    long estimator = 4059;
    // one missing record: the smallest table, far cheaper than an estimator
    assertThat(Sizing.smallFirstTable(1, 1, estimator)).isEqualTo(Sizing.firstShape(1));
    IbltShape ten = Sizing.smallFirstTable(10, 4, estimator);
    assertThat(ten).isEqualTo(Sizing.firstShape(10));
    // the proposed table never wastes more than half an estimator
    for (long c = 0; c < 2000; c += c < 50 ? 1 : 37) {
      IbltShape s = Sizing.smallFirstTable(c, 1, estimator);
      if (s != null) {
        assertThat(s.cells() * CB + RT).as("c=%d", c).isLessThanOrEqualTo(estimator / 2);
      }
    }
    assertThat(Sizing.smallFirstTable(1000, 16, estimator)).isNull();
    assertThat(Sizing.extendBeforeEstimating(new IbltShape(3, 1, 6), estimator, CB)).isTrue();
    assertThat(Sizing.extendBeforeEstimating(new IbltShape(3, 1, 7), estimator, CB)).isFalse();
    assertThatThrownBy(() -> Sizing.smallFirstTable(-1, 1, estimator))
        .hasMessageContaining("need >= 0 and >= 1");
    assertThatThrownBy(() -> Sizing.smallFirstTable(1, 0, estimator))
        .hasMessageContaining("need >= 0 and >= 1");
  }

  @Test
  void brokenDecodeTablesAreRefusedClearly() {
    String h = "d,base,log2,cells,trials,failures,wrong,unresolved,mean_final_cells,mean_retries\n";
    Sizing.DecodeTable ok =
        Sizing.DecodeTable.parse(h + "1,1,0,3,10,0,0,0,3,0\n1,3,0,9,10,0,0,0,9,0\n");
    assertThat(ok.failureRate(1, new IbltShape(3, 1, 0))).isZero();
    assertThatThrownBy(() -> Sizing.DecodeTable.parse(""))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> Sizing.DecodeTable.parse("d,base\n1,1\n"))
        .hasMessageContaining("lacks column log2");
    assertThatThrownBy(() -> Sizing.DecodeTable.parse(h)).hasMessageContaining("no rows");
    assertThatThrownBy(() -> Sizing.DecodeTable.parse(h + "1,1,0,3,10,11,0,0,3,0\n"))
        .hasMessageContaining("line 2")
        .hasMessageContaining("failures <= trials");
    assertThatThrownBy(() -> Sizing.DecodeTable.parse(h + "1,1,0,3,10,0,0,0,2,0\n"))
        .hasMessageContaining("mean_final_cells >= cells");
    assertThatThrownBy(
            () -> Sizing.DecodeTable.parse(h + "1,1,0,3,10,0,0,0,3,0\n1,1,2,12,10,0,0,0,12,0\n"))
        .hasMessageContaining("log2 must follow");
    assertThatThrownBy(
            () ->
                Sizing.DecodeTable.parse(
                    h + "2,1,0,3,10,0,0,0,3,0\n2,3,0,9,10,0,0,0,9,0\n1,1,0,3,10,0,0,0,3,0\n"))
        .hasMessageContaining("must not decrease");
    assertThatThrownBy(() -> Sizing.DecodeTable.parse(h + "1,1,0,3,10,0,0,0,3,0\n"))
        .hasMessageContaining("lacks a ladder");
    assertThatThrownBy(() -> Sizing.DecodeTable.parse(h + "1,2,0,3,10,0,0,0,3,0\n"))
        .hasMessageContaining("malformed");
  }

  @Test
  void upperTailBoundMatchesPoissonIntuition() {
    // mean 10: P[X > 28] ~ 1e-6 for Poisson(10)
    assertThat(upperTailBound(10_000, 1e-3, 1e-6)).isBetween(25, 30);
    assertThat(upperTailBound(1000, 1e-3, 0.5)).isEqualTo(1);
  }

  @Test
  void confidenceRuleOfTheSimulation() {
    // f(T): largest failure count that still shows rate < 0.1 % with 95 % confidence
    assertThat(SizingSimulation.maxFailures(10_000, 1e-3, 0.05)).isEqualTo(4);
    assertThat(SizingSimulation.maxFailures(3000, 1e-3, 0.05)).isEqualTo(0);
    assertThat(SizingSimulation.maxFailures(2000, 1e-3, 0.05)).isEqualTo(-1);
  }

  @Test
  void tableIsMonotoneAndOnTheLadders() {
    long prev = 0;
    for (long d = 1; d <= 2_000_000; d = d < 100 ? d + 1 : d + d / 50) {
      long c = Sizing.cellsFor(d);
      assertThat(c).as("d=%d", d).isGreaterThanOrEqualTo(prev).isGreaterThanOrEqualTo(d);
      if (d <= Sizing.tableMaxD()) {
        assertThat(IbltShape.atLeast(Sizing.HASH_COUNT, c).cells()).as("d=%d", d).isEqualTo(c);
      }
      prev = c;
    }
    assertThat(Sizing.cellsFor(0)).isEqualTo(Sizing.cellsFor(1));
    assertThat(Sizing.tableMaxD()).isEqualTo(1_000_000);
  }

  @Test
  void betweenGridPointsTheNextRowIsUsedAndBeyondItExtrapolates() {
    Sizing.Table t = Sizing.Table.parse("d,cells\n1,3\n10,96\n100,768\n");
    assertThat(t.cellsFor(1)).isEqualTo(3);
    assertThat(t.cellsFor(2)).isEqualTo(96);
    assertThat(t.cellsFor(10)).isEqualTo(96);
    assertThat(t.cellsFor(11)).isEqualTo(768);
    assertThat(t.cellsFor(100)).isEqualTo(768);
    assertThat(t.cellsFor(1000)).isEqualTo((long) Math.ceil(1000 * 7.68 * 1.05));
  }

  @Test
  void columnsAreFoundByHeaderName() {
    Sizing.Table t = Sizing.Table.parse("cells,x,d\n3,a,1\n6,b,2\n");
    assertThat(t.cellsFor(2)).isEqualTo(6);
  }

  @Test
  void brokenTablesAreRefusedClearly() {
    assertThatThrownBy(() -> Sizing.Table.parse(""))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> Sizing.Table.parse("1,3\n2,6\n"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("header");
    assertThatThrownBy(() -> Sizing.Table.parse("d,cells\n"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no rows");
    assertThatThrownBy(() -> Sizing.Table.parse("d,cells\n1,6\n2,3\n"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("line 3");
    assertThatThrownBy(() -> Sizing.Table.parse("d,cells\n2,6\n2,9\n"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("must increase");
    assertThatThrownBy(() -> Sizing.Table.parse("d,cells\n1,x\n"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("malformed");
    assertThatThrownBy(() -> Sizing.Table.parse("d,cells\n1\n"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("malformed");
    assertThatThrownBy(() -> Sizing.Table.parse("d,cells\n0,3\n"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(">= 1");
  }
}
