package dev.reconcile.estimator.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.fuzz.FuzzLoop;
import dev.reconcile.core.fuzz.Mutator;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.estimator.StrataEstimator;
import dev.reconcile.estimator.StrataEstimatorFactory;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fuzzing of {@link StrataEstimator#estimate} with mutated remote estimators (bytes through {@link
 * Estimator#parseFrom}, and field edits such as strata = 2^30 or 1 MiB of cells). Documented
 * rejections: {@link InvalidProtocolBufferException} and {@link FormatException}; an accepted input
 * yields an estimate in [0, 2^48].
 */
class EstimatorFuzzTest {
  private static final HashSpec SPEC = HashSpec.xxh3(21);
  private static final StrataEstimatorFactory F = StrataEstimatorFactory.defaults();
  private static final int N = 3000 * Mutator.scale();
  private static final StrataEstimator LOCAL = filled(1, 4000);
  private static final Estimator REMOTE = filled(2, 3000).toProto();

  private static StrataEstimator filled(long seed, int n) {
    StrataEstimator e = F.create(SPEC);
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < n; i++) {
      e.add(r.nextLong());
    }
    return e;
  }

  static boolean one(SplittableRandom r) throws Exception {
    Estimator m;
    if (r.nextBoolean()) {
      try {
        m = Estimator.parseFrom(Mutator.mutateBytes(REMOTE.toByteArray(), r));
      } catch (InvalidProtocolBufferException e) {
        FuzzLoop.clearMessage("Estimator.parseFrom", e);
        return false;
      }
    } else {
      m = Mutator.mutateFields(REMOTE, r);
    }
    try {
      long est = LOCAL.estimate(m).value();
      assertThat(est).isBetween(0L, 1L << 48);
      return true;
    } catch (FormatException e) {
      FuzzLoop.clearMessage("StrataEstimator.estimate", e);
      return false;
    }
  }

  @Test
  void estimateSurvivesMutatedEstimators() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(120L * Mutator.scale()),
        () -> FuzzLoop.run("StrataEstimator.estimate", 5, N, EstimatorFuzzTest::one));
  }

  /** Regression seeds (a failing seed from the loop above goes here). */
  @ParameterizedTest
  @ValueSource(longs = {0L})
  void regressions(long seed) {
    FuzzLoop.one("StrataEstimator.estimate", seed, EstimatorFuzzTest::one);
  }
}
