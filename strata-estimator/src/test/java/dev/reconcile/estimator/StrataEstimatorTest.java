package dev.reconcile.estimator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Linearity, invariants, serialization and parameter validation. */
class StrataEstimatorTest {
  private static final HashSpec SPEC = HashSpec.xxh3(7);
  private static final StrataEstimatorFactory F = StrataEstimatorFactory.defaults();

  private static long[] elements(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] a = new long[n];
    for (int i = 0; i < n; i++) {
      a[i] = r.nextLong();
    }
    return a;
  }

  private static StrataEstimator of(long[] xs) {
    StrataEstimator e = F.create(SPEC);
    for (long x : xs) {
      e.add(x);
    }
    return e;
  }

  @Test
  void defaultsAreTheMeasuredChoiceAndFitTheWireBudget() {
    EstimatorParams p = F.params();
    assertThat(p.getKind()).isEqualTo(1);
    assertThat(p.getStrata()).isEqualTo(18);
    assertThat(p.getCellsPerStratum()).isEqualTo(128);
    assertThat(p.getHashCount()).isEqualTo(4);
    StrataEstimator e = of(elements(1, 10_000));
    assertThat(e.wireBytes()).isEqualTo(e.toProto().getSerializedSize());
    assertThat(e.wireBytes()).isLessThanOrEqualTo(16 * 1024);
    assertThat(F.create(SPEC).wireBytes()).isEqualTo(e.wireBytes());
    assertThat(e.sizingFactor()).isEqualTo(F.sizingFactor()).isGreaterThanOrEqualTo(1.0);
  }

  @Test
  void incrementalAddRemoveEqualsFromScratch() {
    long[] base = elements(11, 20_000);
    long[] extra = elements(12, 3_000);
    StrataEstimator inc = of(base);
    for (long x : extra) {
      inc.add(x);
    }
    // remove half of base and all of extra again, in another order
    for (int i = extra.length - 1; i >= 0; i--) {
      inc.remove(extra[i]);
    }
    for (int i = 0; i < base.length; i += 2) {
      inc.remove(base[i]);
    }
    StrataEstimator scratch = F.create(SPEC);
    for (int i = 1; i < base.length; i += 2) {
      scratch.add(base[i]);
    }
    assertThat(inc.sameCells(scratch)).as("incremental == from scratch").isTrue();
    assertThat(inc.toProto()).isEqualTo(scratch.toProto());
  }

  @Test
  void subtractSelfIsEmptyAndEstimatesZero() throws FormatException {
    StrataEstimator e = of(elements(3, 50_000));
    assertThat(e.isEmpty()).isFalse();
    assertThat(e.estimate(e.toProto()).value()).isZero();
    StrataEstimator c = e.copy();
    c.subtract(e);
    assertThat(c.isEmpty()).isTrue();
    assertThat(e.isEmpty()).as("subtract leaves the argument alone").isFalse();
  }

  @Test
  void subtractEqualsDifferenceOnlyConstruction() {
    long[] common = elements(21, 10_000);
    long[] onlyA = elements(22, 300);
    long[] onlyB = elements(23, 200);
    StrataEstimator a = of(common);
    StrataEstimator b = of(common);
    StrataEstimator diff = F.create(SPEC);
    for (long x : onlyA) {
      a.add(x);
      diff.add(x);
    }
    for (long x : onlyB) {
      b.add(x);
      diff.remove(x);
    }
    a.subtract(b);
    assertThat(a.sameCells(diff)).isTrue();
    a.add(b);
    StrataEstimator a2 = of(common);
    for (long x : onlyA) {
      a2.add(x);
    }
    assertThat(a.sameCells(a2)).as("(a - b) + b == a").isTrue();
  }

  @Test
  void copyIsIndependent() {
    StrataEstimator e = of(elements(5, 1000));
    StrataEstimator c = e.copy();
    assertThat(c.sameCells(e)).isTrue();
    c.add(42);
    assertThat(c.sameCells(e)).isFalse();
    c.remove(42);
    assertThat(c.sameCells(e)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 100, 100_000})
  void serializationRoundTripsExactly(int n) throws Exception {
    StrataEstimator e = of(elements(100 + n, n));
    Estimator p = e.toProto();
    Estimator parsed = Estimator.parseFrom(p.toByteArray());
    assertThat(parsed).isEqualTo(p);
    StrataEstimator back = F.create(SPEC).read(parsed);
    assertThat(back.sameCells(e)).isTrue();
    assertThat(back.toProto().toByteArray()).isEqualTo(p.toByteArray());
    assertThat(p.getFormatVersion()).isEqualTo(1);
    assertThat(p.getHashId()).isEqualTo(SPEC.id());
    assertThat(p.getSeedFingerprint()).isEqualTo(SPEC.seedFingerprint());
    assertThat(p.getLayout().getCountBytes()).isEqualTo(1);
    assertThat(p.getLayout().getKeyBytes()).isEqualTo(4);
    assertThat(p.getLayout().getCheckBytes()).isEqualTo(2);
    assertThat(p.getCells().size()).isEqualTo(18 * 128 * 7);
  }

  @Test
  void stratumIsTrailingZerosOfTheStratumHashCapped() {
    StrataEstimator e = F.create(SPEC);
    long[] xs = elements(9, 200_000);
    int[] counts = new int[18];
    for (long x : xs) {
      int s = e.stratumOf(x);
      assertThat(s).isEqualTo(Math.min(17, Long.numberOfTrailingZeros(SPEC.stratumHash(x))));
      counts[s]++;
    }
    // stratum i gets ~n / 2^(i+1): check the first few within 5 sigma
    for (int i = 0; i < 6; i++) {
      double mean = xs.length / Math.pow(2, i + 1);
      assertThat(Math.abs(counts[i] - mean)).as("stratum %d", i).isLessThan(5 * Math.sqrt(mean));
    }
  }

  @Test
  void mismatchedEstimatorsRefuseToCombine() {
    StrataEstimator a = F.create(SPEC);
    assertThatThrownBy(() -> a.subtract(F.create(HashSpec.xxh3(8))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hash spec mismatch");
    StrataEstimator other = StrataEstimatorFactory.of(params(1, 16, 144, 3)).create(SPEC);
    assertThatThrownBy(() -> a.subtract(other))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("strata=18")
        .hasMessageContaining("strata=16");
  }

  static EstimatorParams params(int kind, int strata, int cells, int k) {
    return EstimatorParams.newBuilder()
        .setKind(kind)
        .setStrata(strata)
        .setCellsPerStratum(cells)
        .setHashCount(k)
        .build();
  }

  @Test
  void factoryAcceptsBothLadders() {
    assertThat(StrataEstimatorFactory.of(params(1, 1, 2, 2)).shape().cells()).isEqualTo(2);
    assertThat(StrataEstimatorFactory.of(params(1, 64, 96, 4)).shape().base()).isEqualTo(3);
    assertThat(StrataEstimatorFactory.of(params(1, 16, 128, 4)).shape().base()).isEqualTo(1);
    assertThat(StrataEstimatorFactory.of(params(1, 32, 80, 5)).shape().log2()).isEqualTo(4);
    assertThat(StrataEstimatorFactory.of(F.params()).params()).isEqualTo(F.params());
    assertThat(StrataEstimatorFactory.of(params(1, 20, 96, 3)).sizingFactor())
        .as("unmeasured parameters get the conservative factor")
        .isEqualTo(StrataEstimatorFactory.UNMEASURED_SIZING_FACTOR);
  }

  @Test
  void factoryRejectsInvalidParamsPrecisely() {
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(2, 32, 72, 3)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("estimator kind 2 is not 1 (strata estimator)");
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(1, 0, 72, 3)))
        .hasMessage("strata 0 outside [1, 64]");
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(1, 65, 72, 3)))
        .hasMessage("strata 65 outside [1, 64]");
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(1, -1, 72, 3)))
        .hasMessage("strata 4294967295 outside [1, 64]");
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(1, 32, 72, 1)))
        .hasMessage("hash count 1 outside [2, 8]");
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(1, 32, 72, 9)))
        .hasMessage("hash count 9 outside [2, 8]");
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(1, 32, 80, 3)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cells per stratum 80 is not hash count 3 x (1 or 3) x 2^j");
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(1, 32, 60, 3)))
        .hasMessageContaining("cells per stratum 60");
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(1, 32, 0, 3)))
        .hasMessageContaining("cells per stratum 0");
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(1, 64, 3 << 20, 3)))
        .hasMessageContaining("exceeds the cap");
    assertThatThrownBy(() -> StrataEstimatorFactory.of(params(1, 1, 3 << 27, 3)))
        .hasMessageContaining("cells per stratum " + (3L << 27));
  }
}
