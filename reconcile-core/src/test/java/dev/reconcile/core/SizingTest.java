package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The sizing table: its loading and validation, and (statistically) that a table of {@link
 * Sizing#cellsFor(long)} cells decodes a difference of {@code d} with probability at least 99.9 %.
 */
class SizingTest {
  static final int SCALE = Integer.getInteger("reconcile.trials.scale", 1);

  /**
   * Decode success at the table's sizes. Trials per d (times {@code reconcile.trials.scale}) keep
   * the class near 20 s on one core. The test fails when failures exceed {@code k}, the smallest
   * count with {@code P[Binomial(T, 0.001) > k] <= 1e-6}: at a true rate of exactly 0.1 % it raises
   * a false alarm at most once in a million runs; a rate of a few tenths of a percent fails it.
   */
  @ParameterizedTest(name = "d={0}")
  @CsvSource({
    "1, 100000",
    "2, 100000",
    "5, 100000",
    "10, 100000",
    "50, 50000",
    "100, 30000",
    "1000, 5000",
    "10000, 1000",
    "100000, 60"
  })
  void decodesAtLeast999PerMille(int d, int baseTrials) {
    int trials = baseTrials * SCALE;
    long seed = 0xD15EA5EL * 31 + d;
    IbltShape shape = Sizing.shapeFor(d);
    assertThat(shape.cells()).as("table rows are ladder sizes").isEqualTo(Sizing.cellsFor(d));
    int failures = failures(HashSpec.xxh3(seed), shape, d, trials, seed);
    int k = upperTailBound(trials, 1e-3, 1e-6);
    assertThat(failures)
        .as(
            "d=%d shape=%s seed=%d: %d failures in %d trials, allowed %d",
            d, shape, seed, failures, trials, k)
        .isLessThanOrEqualTo(k);
  }

  /**
   * Decode failures of {@code trials} random differences of {@code d} (random sides) in {@code
   * shape}.
   */
  static int failures(HashSpec spec, IbltShape shape, int d, int trials, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    Iblt t = new Iblt(spec, shape, CellLayout.WIDE);
    long[] plus = new long[d];
    long[] minus = new long[d];
    int failures = 0;
    for (int trial = 0; trial < trials; trial++) {
      // The simulation's own trial: complete and exact, else a failure (and the table is cleared).
      if (!SizingSimulation.trial(t, rnd, d, plus, minus)) {
        failures++;
        t.clear();
      }
    }
    return failures;
  }

  static boolean same(long[] truth, int n, long[] got) {
    long[] a = Arrays.copyOf(truth, n);
    long[] b = got.clone();
    Arrays.sort(a);
    Arrays.sort(b);
    return Arrays.equals(a, b);
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
