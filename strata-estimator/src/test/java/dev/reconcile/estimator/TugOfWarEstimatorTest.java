package dev.reconcile.estimator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.reconcile.core.Estimate;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.wire.CellLayoutProto;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Linearity, invariants, serialization, hostile input and parameter validation. */
class TugOfWarEstimatorTest {
  private static final HashSpec SPEC = HashSpec.xxh3(7);
  private static final TugOfWarEstimatorFactory F = TugOfWarEstimatorFactory.defaults();

  private static long[] elements(long seed, int n) {
    return new SplittableRandom(seed).longs(n).toArray();
  }

  private static TugOfWarEstimator of(long[] xs) {
    TugOfWarEstimator e = F.create(SPEC);
    for (long x : xs) {
      e.add(x);
    }
    return e;
  }

  @Test
  void defaultsAreTheMeasuredChoiceAndFitIn4KiB() {
    EstimatorParams p = F.params();
    assertThat(p.getKind()).isEqualTo(2);
    assertThat(p.getStrata()).isEqualTo(1);
    assertThat(p.getCellsPerStratum()).isEqualTo(2016);
    assertThat(p.getHashCount()).isEqualTo(1);
    TugOfWarEstimator e = of(elements(1, 100_000));
    assertThat(e.wireBytes()).isEqualTo(e.toProto().getSerializedSize());
    assertThat(e.wireBytes())
        .isEqualTo(TugOfWarEstimator.DEFAULT_WIRE_BYTES)
        .isLessThanOrEqualTo(4096);
    assertThat(F.create(SPEC).wireBytes()).isEqualTo(e.wireBytes());
    assertThat(e.sizingFactor()).isEqualTo(TugOfWarEstimatorFactory.DEFAULT_SIZING_FACTOR);
  }

  @Test
  void incrementalAddRemoveEqualsFromScratch() {
    long[] base = elements(11, 20_000);
    long[] extra = elements(12, 3_000);
    TugOfWarEstimator inc = of(base);
    for (long x : extra) {
      inc.add(x);
    }
    for (int i = extra.length - 1; i >= 0; i--) {
      inc.remove(extra[i]);
    }
    for (int i = 0; i < base.length; i += 2) {
      inc.remove(base[i]);
    }
    TugOfWarEstimator scratch = F.create(SPEC);
    for (int i = 1; i < base.length; i += 2) {
      scratch.add(base[i]);
    }
    assertThat(inc.sameCounters(scratch)).isTrue();
    assertThat(inc.toProto()).isEqualTo(scratch.toProto());
  }

  @Test
  void mergeOfDisjointSetsEqualsTheUnionAndSubtractUndoesIt() throws FormatException {
    long[] a = elements(21, 5000);
    long[] b = elements(22, 7000);
    TugOfWarEstimator ea = of(a);
    TugOfWarEstimator sum = ea.copy();
    sum.merge(of(b));
    TugOfWarEstimator union = of(a);
    for (long x : b) {
      union.add(x);
    }
    assertThat(sum.sameCounters(union)).isTrue();
    sum.subtract(of(b));
    assertThat(sum.sameCounters(ea)).isTrue();
    assertThat(ea.estimate(ea.toProto()).value()).isZero();
    assertThatThrownBy(() -> ea.merge(StrataEstimatorFactory.defaults().create(SPEC)))
        .hasMessageContaining("cannot merge StrataEstimator");
    assertThatThrownBy(() -> ea.merge(F.create(HashSpec.xxh3(8))))
        .hasMessageContaining("hash spec mismatch");
  }

  @Test
  void copyIsIndependent() {
    TugOfWarEstimator e = of(elements(31, 100));
    TugOfWarEstimator c = e.copy();
    c.add(42);
    assertThat(c.sameCounters(e)).isFalse();
    c.remove(42);
    assertThat(c.sameCounters(e)).isTrue();
  }

  /** One differing element always estimates 1, two differing ones 2 unless they share a bucket. */
  @Test
  void smallDifferencesAreCountedExactlyUnlessTheyShareABucket() throws FormatException {
    long[] common = elements(41, 50_000);
    SplittableRandom r = new SplittableRandom(42);
    for (int t = 0; t < 2000; t++) {
      TugOfWarEstimator a = of(common);
      TugOfWarEstimator b = of(common);
      long x = r.nextLong();
      long y = r.nextLong();
      a.add(x);
      assertThat(a.estimate(b.toProto()))
          .as("one element, trial %d", t)
          .isEqualTo(Estimate.approximate(1));
      b.add(y);
      long two = a.estimate(b.toProto()).value();
      if (a.bucketOf(x) != a.bucketOf(y)) {
        assertThat(two).as("two elements, trial %d", t).isEqualTo(2);
      } else {
        assertThat(two).as("two elements sharing a bucket, trial %d", t).isIn(0L, 4L);
      }
    }
  }

  @Test
  void countersWrapOnTheWireButDifferencesSurvive() throws FormatException {
    // 3 million common elements drive absolute counters far beyond 16 bits on one bucket count.
    TugOfWarEstimator a = F.create(SPEC);
    SplittableRandom r = new SplittableRandom(51);
    for (int i = 0; i < 3_000_000; i++) {
      a.add(r.nextLong() | 1); // only odd elements here
    }
    TugOfWarEstimator b = a.copy();
    long[] diff = new SplittableRandom(52).longs(500).map(x -> x & ~1L).toArray();
    for (long x : diff) {
      a.add(x);
    }
    TugOfWarEstimator onlyDiff = of(diff);
    assertThat(a.estimate(b.toProto()).value())
        .isEqualTo(onlyDiff.estimate(F.create(SPEC).toProto()).value());
  }

  private static Estimator valid() {
    return of(elements(61, 1000)).toProto();
  }

  private static void refused(Estimator remote, String... fragments) {
    var t =
        assertThatThrownBy(() -> of(elements(62, 1000)).estimate(remote).value())
            .isInstanceOf(FormatException.class);
    for (String f : fragments) {
      t.hasMessageContaining(f);
    }
  }

  @Test
  void hostileRemotesAreRefusedBeforeAnythingIsRead() {
    refused(
        valid().toBuilder().setFormatVersion(2).build(),
        "estimator format version 2, this peer reads 1");
    refused(
        valid().toBuilder().setParams(valid().getParams().toBuilder().setKind(1)).build(),
        "estimator kind 1, this peer reads kind 2 (tug-of-war estimator)");
    refused(valid().toBuilder().setHashId(9).build(), "estimator hash id 9");
    refused(
        valid().toBuilder().setSeedFingerprint(123).build(),
        "seed fingerprint 0x0000007b",
        "possible corruption or another seed");
    refused(
        valid().toBuilder().setParams(TugOfWarEstimatorFactory.params(1 << 30)).build(),
        "estimator parameters mismatch: peer {kind=2, strata=1, cells_per_stratum=1073741824",
        "local {kind=2, strata=1, cells_per_stratum=2016");
    refused(
        valid().toBuilder()
            .setLayout(CellLayoutProto.newBuilder().setCountBytes(1).build())
            .build(),
        "estimator cell layout {count_bytes=1, key_bytes=0, check_bytes=0}",
        "this peer reads {count_bytes=2");
    ByteString cells = valid().getCells();
    refused(
        valid().toBuilder().setCells(cells.substring(1)).build(),
        "estimator cells: expected 4032 bytes, got 4031");
    refused(
        valid().toBuilder().setCells(cells.concat(ByteString.copyFrom(new byte[1]))).build(),
        "expected 4032 bytes, got 4033");
    refused(Estimator.getDefaultInstance(), "estimator format version 0");
  }

  @Test
  void randomCountersWithAValidHeaderGiveAFiniteEstimate() throws FormatException {
    SplittableRandom r = new SplittableRandom(71);
    for (int t = 0; t < 50; t++) {
      byte[] junk = new byte[4032];
      r.nextBytes(junk);
      Estimator e = valid().toBuilder().setCells(ByteString.copyFrom(junk)).build();
      long est = of(elements(72, 10)).estimate(e).value();
      assertThat(est).isBetween(0L, 2016L * 32768 * 32768);
    }
  }

  @Test
  void factoryValidatesParameters() {
    assertThatThrownBy(
            () ->
                TugOfWarEstimatorFactory.of(
                    TugOfWarEstimatorFactory.params(2016).toBuilder().setKind(1).build()))
        .hasMessageContaining("estimator kind 1 is not 2");
    assertThatThrownBy(
            () ->
                TugOfWarEstimatorFactory.of(
                    TugOfWarEstimatorFactory.params(2016).toBuilder().setStrata(2).build()))
        .hasMessageContaining("strata = 1 and hash_count = 1");
    assertThatThrownBy(() -> TugOfWarEstimatorFactory.of(TugOfWarEstimatorFactory.params(15)))
        .hasMessageContaining("buckets 15 outside [16, 1048576]");
    assertThatThrownBy(() -> TugOfWarEstimatorFactory.of(TugOfWarEstimatorFactory.params(-1)))
        .hasMessageContaining("buckets 4294967295");
    assertThat(TugOfWarEstimatorFactory.of(TugOfWarEstimatorFactory.params(1008)).sizingFactor())
        .isGreaterThan(F.sizingFactor());
  }
}
