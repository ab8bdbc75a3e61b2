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
import org.junit.jupiter.params.provider.CsvSource;

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
    return refusal(r) == null;
  }

  /** The refusal of the input drawn from {@code r} (null: accepted, with a sane estimate). */
  static String refusal(SplittableRandom r) throws Exception {
    Estimator m;
    if (r.nextBoolean()) {
      try {
        m = Estimator.parseFrom(Mutator.mutateBytes(REMOTE.toByteArray(), r));
      } catch (InvalidProtocolBufferException e) {
        FuzzLoop.clearMessage("Estimator.parseFrom", e);
        return "parse: " + e.getMessage();
      }
    } else {
      m = Mutator.mutateFields(REMOTE, r);
    }
    try {
      long est = LOCAL.estimate(m).value();
      assertThat(est).isBetween(0L, 1L << 48);
      return null;
    } catch (FormatException e) {
      FuzzLoop.clearMessage("StrataEstimator.estimate", e);
      return e.getMessage();
    }
  }

  @Test
  void estimateSurvivesMutatedEstimators() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(120L * Mutator.scale()),
        () -> FuzzLoop.run("StrataEstimator.estimate", 5, N, EstimatorFuzzTest::one));
  }

  /**
   * Inputs of the loop above replayed on every build with the outcome they had when recorded: the
   * first seed (in the loop's order) of each check of {@link StrataEstimator#estimate} that refused
   * its input, and one accepted input. A failing seed from the loop is added the same way.
   */
  @ParameterizedTest(name = "seed {0}L: {1}")
  @CsvSource({
    "1663341875487337577, estimator format version",
    "1663341875487337578, estimator cells: expected",
    "1663341875487337579, ACCEPTED",
    "1663341875487337581, estimator seed fingerprint",
    "1663341875487337584, estimator parameters mismatch",
    "1663341875487337585, estimator cell layout",
    "1663341875487337597, estimator hash id",
    "1663341875487337631, estimator kind",
  })
  void regressions(long seed, String expected) {
    String[] got = new String[1];
    FuzzLoop.one(
        "StrataEstimator.estimate",
        seed,
        r -> {
          got[0] = refusal(r);
          return got[0] == null;
        });
    if (expected.equals("ACCEPTED")) {
      assertThat(got[0]).as("seed %dL", seed).isNull();
    } else {
      assertThat(got[0]).as("seed %dL", seed).startsWith(expected);
    }
  }
}
