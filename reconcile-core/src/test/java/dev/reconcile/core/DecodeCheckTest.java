package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Refusal.Code;
import dev.reconcile.core.wire.SymbolChunk;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Checking a rateless decode against the responder's snapshot fingerprints (RatelessExchange,
 * "checking a decode"): the lookups it saves, and every way it falls back to them.
 */
class DecodeCheckTest {
  private static final EstimatorFactory F = ExactEstimator.factory(1.0);

  /** The initiator's sketches, counting the elements it looks up. */
  static final class Counting extends DelegatingSketches {
    long lookedUp;

    Counting(MemorySketches inner) {
      super(inner);
    }

    @Override
    public boolean contains(int partition, long element) {
      lookedUp++;
      return inner.contains(partition, element);
    }

    @Override
    public boolean[] containsAll(int partition, long[] elements) {
      lookedUp += elements.length;
      return inner.containsAll(partition, elements);
    }
  }

  record Run(ReconcileSession i, ReconcileSession r, TestSets sets, Counting a) {
    int ratelessPartitions() {
      return (int)
          i.outcomes().stream().filter(o -> o.path() == PartitionOutcome.Path.RATELESS).count();
    }
  }

  static Run run(
      long seed, int pLog2, int common, int da, int db, UnaryOperator<Envelope> toInitiator) {
    SketchParams params = RatelessSessionTest.params(seed, pLog2, 12);
    TestSets s = TestSets.random(seed, common, da, db);
    Counting a = new Counting(MemorySketches.of(params, F, TestSets.partitionsOf(s.a, pLog2), s.a));
    MemorySketches b = MemorySketches.of(params, F, TestSets.partitionsOf(s.b, pLog2), s.b);
    ReconcileSession i = ReconcileSession.initiator(SessionConfig.of("c", "a", seed), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    LocalRound.run(i, r, UnaryOperator.identity(), toInitiator);
    return new Run(i, r, s, a);
  }

  static void assertExact(Run run, String ctx) {
    RatelessSessionTest.assertExact(new RatelessSessionTest.Run(run.i, run.r, run.sets), ctx);
  }

  /** One partition's stream (d = 1), grouped streams, and a group that splits (d = 3 000). */
  @ParameterizedTest
  @CsvSource({"1, 1, 0", "2, 0, 3", "3, 20, 20", "4, 300, 200", "5, 1500, 1500"})
  void aDecodeThatMatchesTheSnapshotsIsNotLookedUp(long seed, int da, int db) {
    Run run = run(seed, 4, 20_000, da, db, UnaryOperator.identity());
    String ctx = "seed " + seed + ", d = " + (da + db);
    assertExact(run, ctx);
    assertThat(run.ratelessPartitions()).as(ctx).isPositive();
    assertThat(run.i.stats().checkedByFingerprint()).as(ctx).isEqualTo(run.ratelessPartitions());
    assertThat(run.a.lookedUp).as(ctx).isZero();
  }

  /** A group that splits: each partition's new stream comes with its own digest. */
  @Test
  void afterASplitEachPartitionIsCheckedAgainstItsNewSnapshot() {
    Run run = run(5, 4, 20_000, 1500, 1500, UnaryOperator.identity());
    assertExact(run, "split");
    assertThat(run.i.stats().splits).isPositive();
    assertThat(run.i.stats().checkedByFingerprint()).isEqualTo(run.ratelessPartitions());
    assertThat(run.a.lookedUp).isZero();
  }

  @Test
  void aResponderThatSendsNoDigestsIsCheckedByLookups() {
    Run run =
        run(
            11,
            4,
            20_000,
            40,
            40,
            e ->
                e.hasSymbols()
                    ? e.toBuilder()
                        .setSymbols(
                            e.getSymbols().toBuilder()
                                .clearSnapshotPartitions()
                                .clearSnapshotDigests())
                        .build()
                    : e);
    assertExact(run, "no digests");
    assertThat(run.i.stats().checkedByFingerprint()).isZero();
    assertThat(run.a.lookedUp).isEqualTo(80);
  }

  @Test
  void aDigestThatDoesNotMatchFallsBackToLookupsForItsPartitionOnly() {
    int[] tampered = {-1};
    Run run =
        run(
            12,
            4,
            20_000,
            40,
            40,
            e -> {
              if (!e.hasSymbols() || e.getSymbols().getSnapshotDigestsCount() == 0) {
                return e;
              }
              SymbolChunk c = e.getSymbols();
              tampered[0] = c.getSnapshotPartitions(0);
              return e.toBuilder()
                  .setSymbols(c.toBuilder().setSnapshotDigests(0, c.getSnapshotDigests(0) ^ 1))
                  .build();
            });
    assertExact(run, "one digest off by a bit");
    long inTampered =
        run.i.outcomes().stream()
            .filter(o -> o.partition() == tampered[0])
            .mapToLong(o -> o.missingLocal().length + o.missingRemote().length)
            .sum();
    assertThat(inTampered).isPositive();
    assertThat(run.a.lookedUp).isEqualTo(inTampered);
    assertThat(run.i.stats().checkedByFingerprint()).isEqualTo(run.ratelessPartitions() - 1);
  }

  @Test
  void snapshotListsOfDifferentLengthsAreRefused() {
    Run run =
        run(
            13,
            2,
            2_000,
            5,
            5,
            e ->
                e.hasSymbols() && e.getSymbols().getSnapshotDigestsCount() > 0
                    ? e.toBuilder()
                        .setSymbols(e.getSymbols().toBuilder().addSnapshotDigests(7))
                        .build()
                    : e);
    assertThat(run.i.failure()).isPresent();
    assertThat(run.i.failure().get().code()).isEqualTo(Code.MALFORMED);
    assertThat(run.i.failure().get().message()).contains("snapshot digests");
  }

  @Test
  void aDigestForAPartitionThatIsNotDecodingIsRefused() {
    Run run =
        run(
            14,
            2,
            2_000,
            5,
            5,
            e -> {
              if (!e.hasSymbols() || e.getSymbols().getSnapshotDigestsCount() == 0) {
                return e;
              }
              // A partition of the session's that is equal, so settled on the fast path, or one
              // outside the session: either way not decoding.
              return e.toBuilder()
                  .setSymbols(e.getSymbols().toBuilder().setSnapshotPartitions(0, 1 << 20))
                  .build();
            });
    assertThat(run.i.failure()).isPresent();
    assertThat(run.i.failure().get().code()).isEqualTo(Code.MALFORMED);
  }

  /**
   * The check itself: the right lists pass; a list with one element dropped, added, moved to the
   * other side or with one bit flipped never does (20 000 seeded trials each; a false pass has
   * probability about 2^-64 per trial).
   */
  @Test
  void onlyTheRightListsTurnOneFingerprintIntoTheOther() {
    long seed = 20_261_202L;
    HashSpec spec = HashSpec.xxh3(seed);
    SplittableRandom r = new SplittableRandom(seed);
    int trials = 20_000;
    int wrongPasses = 0;
    for (int t = 0; t < trials; t++) {
      int common = r.nextInt(50);
      int here = 1 + r.nextInt(20);
      int there = 1 + r.nextInt(20);
      Fingerprint.Accumulator mine = new Fingerprint.Accumulator(spec);
      Fingerprint.Accumulator theirs = new Fingerprint.Accumulator(spec);
      for (int k = 0; k < common; k++) {
        long x = r.nextLong();
        mine.add(x);
        theirs.add(x);
      }
      LongList onlyHere = new LongList(here);
      LongList onlyThere = new LongList(there);
      for (int k = 0; k < here; k++) {
        long x = r.nextLong();
        mine.add(x);
        onlyHere.add(x);
      }
      for (int k = 0; k < there; k++) {
        long x = r.nextLong();
        theirs.add(x);
        onlyThere.add(x);
      }
      long digest = spec.fingerprintDigest(theirs.snapshot());
      Fingerprint m = mine.snapshot();
      assertThat(RatelessExchange.turnsInto(spec, m, onlyHere, onlyThere, digest))
          .as("seed %d, trial %d: the right lists", seed, t)
          .isTrue();
      long[] h = onlyHere.toArray();
      long[] o = onlyThere.toArray();
      int j = r.nextInt(h.length);
      long[] dropped = new long[h.length - 1]; // h without h[j]
      for (int k = 0, n = 0; k < h.length; k++) {
        if (k != j) {
          dropped[n++] = h[k];
        }
      }
      long[] added = Arrays.copyOf(o, o.length + 1);
      added[o.length] = r.nextLong();
      long[] flipped = o.clone();
      flipped[r.nextInt(o.length)] ^= 1L << r.nextInt(64);
      long[] movedThere = Arrays.copyOf(o, o.length + 1);
      movedThere[o.length] = h[j];
      long[][][] wrong = {
        {dropped, o}, {h, added}, {h, flipped}, {dropped, movedThere},
      };
      for (long[][] w : wrong) {
        if (RatelessExchange.turnsInto(spec, m, LongList.of(w[0]), LongList.of(w[1]), digest)) {
          wrongPasses++;
        }
      }
    }
    assertThat(wrongPasses).as("seed %d: wrong lists that passed", seed).isZero();
  }
}
