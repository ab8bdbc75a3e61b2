package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.IbltOffer;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Checking a decode of tables (the estimator path) against the fingerprints of the instants the two
 * sides' tables were folded at (TableExchange, ResultStream; design.md, "checking a decode"): the
 * lookups it saves on both sides, and every way it falls back to them.
 */
class TableCheckTest {
  record Run(
      ReconcileSession i,
      ReconcileSession r,
      TestSets sets,
      DecodeCheckTest.Counting a,
      DecodeCheckTest.Counting b) {
    long tablePartitions() {
      return i.outcomes().stream().filter(o -> o.path() == PartitionOutcome.Path.IBLT).count();
    }

    long listed(int partition) {
      return i.outcomes().stream()
          .filter(o -> o.partition() == partition)
          .mapToLong(o -> o.missingLocal().length + o.missingRemote().length)
          .sum();
    }
  }

  /** A dry run without coded symbols (the estimator path), with estimates of {@code factor d}. */
  static Run run(
      long seed,
      double factor,
      int da,
      int db,
      UnaryOperator<Envelope> toResponder,
      UnaryOperator<Envelope> toInitiator) {
    int pLog2 = 4;
    EstimatorFactory f = ExactEstimator.factory(factor);
    SketchParams params = TestSets.params(seed, pLog2, 12, f.params());
    TestSets s = TestSets.random(seed, 20_000, da, db);
    DecodeCheckTest.Counting a =
        new DecodeCheckTest.Counting(
            MemorySketches.of(params, f, TestSets.partitionsOf(s.a, pLog2), s.a));
    DecodeCheckTest.Counting b =
        new DecodeCheckTest.Counting(
            MemorySketches.of(params, f, TestSets.partitionsOf(s.b, pLog2), s.b));
    ReconcileSession i = ReconcileSession.initiator(SessionConfig.of("c", "a", seed), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    LocalRound.run(i, r, toResponder, toInitiator);
    return new Run(i, r, s, a, b);
  }

  static Run run(long seed, double factor, int da, int db) {
    return run(seed, factor, da, db, UnaryOperator.identity(), UnaryOperator.identity());
  }

  static void assertExact(Run run, String ctx) {
    RatelessSessionTest.assertExact(new RatelessSessionTest.Run(run.i, run.r, run.sets), ctx);
  }

  /** Envelopes toward the responder with the IbltOffer's digests rewritten by {@code f}. */
  static UnaryOperator<Envelope> offers(UnaryOperator<IbltOffer.Builder> f) {
    return e -> e.hasIblt() ? e.toBuilder().setIblt(f.apply(e.getIblt().toBuilder())).build() : e;
  }

  /**
   * Small first tables, estimated groups, and underestimates (a quarter of d) that need extensions
   * and doublings: every table-decoded partition is settled without a lookup on either side.
   */
  @ParameterizedTest
  @CsvSource({"1, 1.0, 1, 0", "2, 1.0, 20, 20", "3, 1.0, 300, 200", "4, 0.25, 300, 300"})
  void aTableDecodeThatMatchesTheFingerprintsIsNotLookedUp(
      long seed, double factor, int da, int db) {
    Run run = run(seed, factor, da, db);
    String ctx = "seed " + seed + ", d = " + (da + db) + ", estimates x " + factor;
    assertExact(run, ctx);
    assertThat(run.tablePartitions()).as(ctx).isPositive();
    if (factor < 1) {
      assertThat(run.r.stats().decodeFailures).as(ctx + ": tables grown").isPositive();
    }
    assertThat(run.r.stats().checkedByFingerprint()).as(ctx).isEqualTo(run.tablePartitions());
    assertThat(run.i.stats().checkedByFingerprint()).as(ctx).isEqualTo(run.tablePartitions());
    assertThat(run.a.lookedUp).as(ctx).isZero();
    assertThat(run.b.lookedUp).as(ctx).isZero();
  }

  /** An initiator that sends no digests (older): both sides look every element up, as before. */
  @Test
  void anOfferWithoutDigestsIsLookedUpOnBothSides() {
    Run run =
        run(
            5,
            1.0,
            40,
            40,
            offers(o -> o.clearSnapshotPartitions().clearSnapshotDigests()),
            UnaryOperator.identity());
    assertExact(run, "no digests");
    assertThat(run.r.stats().checkedByFingerprint()).isZero();
    assertThat(run.i.stats().checkedByFingerprint()).isZero();
    assertThat(run.b.lookedUp).isEqualTo(80);
    assertThat(run.a.lookedUp).isEqualTo(80);
  }

  /** A responder that sends no digest with its lists (older): the initiator looks them up. */
  @Test
  void listsWithoutADigestAreLookedUpByTheInitiator() {
    Run run =
        run(
            6,
            1.0,
            40,
            40,
            UnaryOperator.identity(),
            e ->
                e.hasMissing()
                    ? e.toBuilder()
                        .setMissing(e.getMissing().toBuilder().clearSnapshotDigest())
                        .build()
                    : e);
    assertExact(run, "no digest with the lists");
    assertThat(run.r.stats().checkedByFingerprint()).isEqualTo(run.tablePartitions());
    assertThat(run.b.lookedUp).isZero();
    assertThat(run.i.stats().checkedByFingerprint()).isZero();
    assertThat(run.a.lookedUp).isEqualTo(80);
  }

  /**
   * A digest off by one bit: that partition is looked up by the responder, which then sends no
   * digest, so the initiator looks it up too; the others are checked.
   */
  @Test
  void aDigestThatDoesNotMatchFallsBackToLookupsForItsPartitionOnly() {
    int[] tampered = {-1};
    Run run =
        run(
            7,
            1.0,
            40,
            40,
            offers(
                o -> {
                  if (o.getSnapshotDigestsCount() > 0 && tampered[0] < 0) {
                    tampered[0] = o.getSnapshotPartitions(0);
                    o.setSnapshotDigests(0, o.getSnapshotDigests(0) ^ 1);
                  }
                  return o;
                }),
            UnaryOperator.identity());
    assertExact(run, "one digest off by a bit");
    long inTampered = run.listed(tampered[0]);
    assertThat(inTampered).isPositive();
    assertThat(run.b.lookedUp).isEqualTo(inTampered);
    assertThat(run.a.lookedUp).isEqualTo(inTampered);
    assertThat(run.r.stats().checkedByFingerprint()).isEqualTo(run.tablePartitions() - 1);
    assertThat(run.i.stats().checkedByFingerprint()).isEqualTo(run.tablePartitions() - 1);
  }

  @Test
  void snapshotListsOfDifferentLengthsAreRefused() {
    Run run = run(8, 1.0, 5, 5, offers(o -> o.addSnapshotDigests(7)), UnaryOperator.identity());
    assertThat(run.r.failure()).isPresent();
    assertThat(run.r.failure().get().code()).isEqualTo(Code.MALFORMED);
    assertThat(run.r.failure().get().message()).contains("snapshot digests");
  }

  @Test
  void aDigestForAPartitionOutsideTheGroupIsRefused() {
    Run run =
        run(
            9,
            1.0,
            5,
            5,
            offers(
                o -> o.getSnapshotPartitionsCount() > 0 ? o.setSnapshotPartitions(0, 1 << 20) : o),
            UnaryOperator.identity());
    assertThat(run.r.failure()).isPresent();
    assertThat(run.r.failure().get().code()).isEqualTo(Code.MALFORMED);
    assertThat(run.r.failure().get().message()).contains("not of the group");
  }
}
