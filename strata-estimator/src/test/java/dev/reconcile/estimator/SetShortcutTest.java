package dev.reconcile.estimator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.FormatException;
import dev.reconcile.core.wire.Estimator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Proves the shortcut of the accuracy tests: two estimators of real overlapping sets (50 000 common
 * elements) give exactly the estimate of the difference-only construction.
 */
class SetShortcutTest {
  private static final int COMMON = 50_000;

  @ParameterizedTest(name = "seed {0}, d {1}")
  @CsvSource({"1, 1", "2, 10", "3, 100", "4, 1000", "5, 3000", "6, 20000", "7, 20000"})
  void realSetsEstimateLikeTheDifferenceOnly(long seed, int d) throws FormatException {
    StrataEstimatorFactory f = StrataEstimatorFactory.defaults();
    DifferenceTrial trial = DifferenceTrial.of(seed, d);
    StrataEstimator a = f.create(DifferenceTrial.SPEC);
    StrataEstimator b = f.create(DifferenceTrial.SPEC);
    java.util.SplittableRandom r = new java.util.SplittableRandom(~seed);
    for (int i = 0; i < COMMON; i++) {
      long x = r.nextLong();
      a.add(x);
      b.add(x);
    }
    for (long x : trial.onlyA) {
      a.add(x);
    }
    for (long x : trial.onlyB) {
      b.add(x);
    }
    Estimator empty = DifferenceTrial.emptyProto(f);
    long shortcut = trial.estimate(f, empty);
    long real = a.estimate(b.toProto()).value();
    assertThat(real).as("seed %d, d %d", seed, d).isEqualTo(shortcut);
    // and the subtracted cells are the same, whichever side subtracts
    StrataEstimator diff = a.copy();
    diff.subtract(b);
    assertThat(diff.sameCells((StrataEstimator) trial.differenceEstimator(f)))
        .as("seed %d, d %d", seed, d)
        .isTrue();
    assertThat(b.estimate(a.toProto()).value())
        .as("symmetric, seed %d, d %d", seed, d)
        .isEqualTo(real);
  }

  @ParameterizedTest(name = "seed {0}, d {1}")
  @CsvSource({"1, 1", "2, 10", "3, 100", "4, 1000", "5, 3000", "6, 20000", "7, 20000"})
  void tugOfWarRealSetsEstimateLikeTheDifferenceOnly(long seed, int d) throws FormatException {
    TugOfWarEstimatorFactory f = TugOfWarEstimatorFactory.defaults();
    DifferenceTrial trial = DifferenceTrial.of(seed, d);
    TugOfWarEstimator a = f.create(DifferenceTrial.SPEC);
    TugOfWarEstimator b = f.create(DifferenceTrial.SPEC);
    java.util.SplittableRandom r = new java.util.SplittableRandom(~seed);
    for (int i = 0; i < COMMON; i++) {
      long x = r.nextLong();
      a.add(x);
      b.add(x);
    }
    for (long x : trial.onlyA) {
      a.add(x);
    }
    for (long x : trial.onlyB) {
      b.add(x);
    }
    long real = a.estimate(b.toProto()).value();
    assertThat(real)
        .as("seed %d, d %d", seed, d)
        .isEqualTo(trial.estimate(f, f.create(DifferenceTrial.SPEC).toProto()));
    TugOfWarEstimator diff = a.copy();
    diff.subtract(b);
    assertThat(diff.sameCounters((TugOfWarEstimator) trial.differenceEstimator(f))).isTrue();
    assertThat(b.estimate(a.toProto()).value())
        .as("symmetric, seed %d, d %d", seed, d)
        .isEqualTo(real);
  }
}
