package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.PartitionOutcome.Path;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.HelloAck;
import dev.reconcile.core.wire.Refusal;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Two sessions against each other in memory, forcing every path of the protocol. */
class ReconcileSessionTest {
  private static final int P_LOG2 = 2;

  record Run(ReconcileSession i, ReconcileSession r, TestSets sets) {
    long[] missingAtInitiator() {
      return sorted(i.outcomes().stream().flatMapToLong(o -> Arrays.stream(o.missingLocal())));
    }

    long[] missingAtResponder() {
      return sorted(i.outcomes().stream().flatMapToLong(o -> Arrays.stream(o.missingRemote())));
    }

    List<PartitionOutcome> unequal() {
      return i.outcomes().stream().filter(o -> o.path() != Path.FAST).toList();
    }
  }

  static long[] sorted(LongStream s) {
    return s.sorted().toArray();
  }

  static Run run(long seed, int common, int da, int db, double estimateFactor, int maxLog2) {
    EstimatorFactory f = ExactEstimator.factory(estimateFactor);
    SketchParams params = TestSets.params(seed, P_LOG2, maxLog2, f.params());
    TestSets s = TestSets.random(seed, common, da, db);
    MemorySketches a = MemorySketches.of(params, f, TestSets.partitionsOf(s.a, P_LOG2), s.a);
    MemorySketches b = MemorySketches.of(params, f, TestSets.partitionsOf(s.b, P_LOG2), s.b);
    ReconcileSession i = ReconcileSession.initiator(SessionConfig.of("c", "a", seed), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    LocalRound.run(i, r);
    return new Run(i, r, s);
  }

  static void assertCorrect(Run run, String ctx) {
    assertListsCorrect(run, ctx);
    assertThat(run.i.stats().unverified() + run.r.stats().unverified()).as(ctx).isZero();
  }

  static void assertListsCorrect(Run run, String ctx) {
    assertThat(run.i.failure()).as(ctx).isEmpty();
    assertThat(run.r.failure()).as(ctx).isEmpty();
    assertThat(run.i.succeeded()).as(ctx).isTrue();
    assertThat(run.r.succeeded()).as(ctx).isTrue();
    assertThat(run.missingAtInitiator())
        .as(ctx)
        .containsExactly(sorted(Arrays.stream(run.sets.onlyB)));
    assertThat(run.missingAtResponder())
        .as(ctx)
        .containsExactly(sorted(Arrays.stream(run.sets.onlyA)));
    // Both sides agree, mirrored.
    long[] rLocal =
        sorted(run.r.outcomes().stream().flatMapToLong(o -> Arrays.stream(o.missingLocal())));
    assertThat(rLocal).as(ctx).containsExactly(run.missingAtResponder());
  }

  @Test
  void identicalSetsTakeTheFastPathEverywhere() {
    Run run = run(1, 10_000, 0, 0, 1.0, 12);
    assertCorrect(run, "seed 1");
    assertThat(run.i.outcomes()).hasSize(1 << P_LOG2).allMatch(o -> o.path() == Path.FAST);
    assertThat(run.i.stats().fastPath()).isEqualTo(1 << P_LOG2);
    assertThat(run.i.stats().estimatorBytes() + run.i.stats().ibltBytes()).isZero();
    assertThat(run.i.stats().roundTrips()).isEqualTo(1); // the Hello carries the fingerprints
  }

  @ParameterizedTest(name = "seed {0}: {2}+{3} differences")
  @CsvSource({
    "11, 20000, 1, 0",
    "12, 20000, 0, 1",
    "13, 20000, 30, 20",
    "14, 50000, 400, 600",
    "15, 20000, 2000, 0"
  })
  void accurateEstimateDecodesAtTheFirstTry(long seed, int common, int da, int db) {
    Run run = run(seed, common, da, db, 1.0, 14);
    assertCorrect(run, "seed " + seed);
    assertThat(run.unequal())
        .isNotEmpty()
        .allMatch(o -> o.path() == Path.IBLT && o.attempts() == 1);
    assertThat(run.i.stats().doublings()).isZero();
    assertThat(run.i.stats().fallbacks()).isZero();
  }

  @Test
  void lowEstimateDoubles() {
    // A hundredth of the truth, with equal counts on both sides (no count bound): the first table
    // is too small, a doubled one decodes.
    Run run = run(21, 20_000, 400, 400, 0.01, 14);
    assertCorrect(run, "seed 21");
    assertThat(run.unequal()).allMatch(o -> o.path() == Path.IBLT);
    assertThat(run.unequal()).anyMatch(o -> o.attempts() >= 2);
    assertThat(run.i.stats().doublings()).isPositive();
    assertThat(run.r.stats().decodeFailures()).isEqualTo(run.r.stats().doublings());
  }

  @Test
  void farTooLowEstimateDoublesSeveralTimes() {
    Run run = run(22, 20_000, 2000, 2000, 0.001, 14);
    assertCorrect(run, "seed 22");
    assertThat(run.unequal()).allMatch(o -> o.path() == Path.IBLT);
    assertThat(run.unequal()).anyMatch(o -> o.attempts() >= 4);
  }

  @Test
  void differenceBeyondTheLargestTableFallsBackToDigestLists() {
    // Largest table 3 * 2^8 = 768 cells per partition; ~1000 differences per partition cannot
    // decode.
    Run run = run(23, 20_000, 2000, 2000, 0.01, 8);
    assertCorrect(run, "seed 23");
    assertThat(run.unequal()).allMatch(o -> o.path() == Path.FALLBACK);
    assertThat(run.i.stats().fallbacks()).isEqualTo(1 << P_LOG2);
    assertThat(run.r.stats().doublings()).isPositive(); // it tried up to the largest table first
  }

  @Test
  void groupThatFailsAtTheLargestTableIsSplit() {
    // 1200 differences over 4 partitions with equal counts per partition (every element only at A
    // has a partner only at B in the same partition), largest table 768 cells, estimate a
    // thousandth: one table for the whole group doubles up to the largest, fails, and is split.
    EstimatorFactory f = ExactEstimator.factory(0.001);
    SketchParams params = TestSets.params(27, P_LOG2, 8, f.params());
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(27);
    long[] common = rnd.longs(40_000).toArray();
    long[] onlyA = rnd.longs(600).toArray();
    long[] onlyB = new long[600];
    for (int i = 0; i < onlyB.length; i++) {
      onlyB[i] = (onlyA[i] & HashSpec.PARTITION_BITS) | (rnd.nextLong() & ~HashSpec.PARTITION_BITS);
    }
    long[] a = LongStream.concat(Arrays.stream(common), Arrays.stream(onlyA)).toArray();
    long[] b = LongStream.concat(Arrays.stream(common), Arrays.stream(onlyB)).toArray();
    ReconcileSession i =
        ReconcileSession.initiator(
            SessionConfig.of("c", "a", 27),
            MemorySketches.of(params, f, TestSets.partitionsOf(a, P_LOG2), a));
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "b", 0),
            MemorySketches.of(params, f, TestSets.partitionsOf(b, P_LOG2), b));
    LocalRound.run(i, r);
    assertThat(i.succeeded()).as(String.valueOf(i.failure())).isTrue();
    List<PartitionOutcome> os = i.outcomes();
    assertThat(os).hasSize(4).allMatch(o -> o.path() != Path.FAST);
    assertThat(sorted(os.stream().flatMapToLong(o -> Arrays.stream(o.missingLocal()))))
        .containsExactly(sorted(Arrays.stream(onlyB)));
    assertThat(sorted(os.stream().flatMapToLong(o -> Arrays.stream(o.missingRemote()))))
        .containsExactly(sorted(Arrays.stream(onlyA)));
    // The largest table was sent for the whole group and again for parts of it.
    assertThat(r.stats().ibltCells()).isGreaterThanOrEqualTo(3L * 768);
    // Each half got the largest table again after the whole group's failed.
    assertThat(os).allMatch(o -> o.finalShape().cells() == 768 && o.attempts() > 2);
  }

  /**
   * Sets of {@code common} shared elements and {@code pairs} pairs that differ, the two elements of
   * a pair in the same partition (so every partition's counts are equal).
   */
  static long[][] pairedSets(long seed, int common, int pairs) {
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(seed);
    long[] shared = rnd.longs(common).toArray();
    long[] onlyA = rnd.longs(pairs).toArray();
    long[] onlyB = new long[pairs];
    for (int i = 0; i < pairs; i++) {
      onlyB[i] = (onlyA[i] & HashSpec.PARTITION_BITS) | (rnd.nextLong() & ~HashSpec.PARTITION_BITS);
    }
    return new long[][] {
      LongStream.concat(Arrays.stream(shared), Arrays.stream(onlyA)).toArray(),
      LongStream.concat(Arrays.stream(shared), Arrays.stream(onlyB)).toArray(),
      onlyA,
      onlyB
    };
  }

  static ReconcileSession[] runSets(
      long seed, EstimatorFactory f, int maxLog2, long[] a, long[] b) {
    SketchParams params = TestSets.params(seed, P_LOG2, maxLog2, f.params());
    ReconcileSession i =
        ReconcileSession.initiator(
            SessionConfig.of("c", "a", seed),
            MemorySketches.of(params, f, TestSets.partitionsOf(a, P_LOG2), a));
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "b", 0),
            MemorySketches.of(params, f, TestSets.partitionsOf(b, P_LOG2), b));
    LocalRound.run(i, r);
    return new ReconcileSession[] {i, r};
  }

  @Test
  void aFailedTableIsContinuedByItsExtensionSoTheCellsSentAreTheFinalTables() {
    // A tenth of the truth: the first table fails at least once. Each retry sends only the m new
    // cells of the doubled table, so the cells sent add up to the table that decoded (one group:
    // 600 differences fit below half of the largest table). Sending whole doubled tables would
    // cost m + 2m + ... > 1.5 x the final table.
    Run run = run(28, 20_000, 300, 300, 0.1, 14);
    assertCorrect(run, "seed 28");
    List<PartitionOutcome> u = run.unequal();
    assertThat(u).hasSize(1 << P_LOG2).allMatch(o -> o.path() == Path.IBLT && o.attempts() >= 2);
    long finalCells = u.get(0).finalShape().cells();
    assertThat(u).allMatch(o -> o.finalShape().cells() == finalCells);
    assertThat(run.i.stats().ibltCells()).isEqualTo(finalCells);
    assertThat(run.r.stats().ibltCells()).isEqualTo(finalCells);
    assertThat(run.r.stats().decodeFailures()).isEqualTo(u.get(0).attempts() - 1L);
  }

  @Test
  void aRoundWithOneFailureSendsTheDecodingTableOnceInBytes() {
    // Half the truth as the estimate: some seeds fail once and decode at the doubled table. For
    // those, the initiator's table frames (first table + extension) carry 2m cells of 14 bytes
    // plus two frame headers (about 70 bytes each) and in each the snapshot digests of the group's
    // partitions (a varint partition and 8 bytes each: at most 10 per partition); whole tables
    // would carry 3m cells.
    int oneFailure = 0;
    for (long seed = 300; seed < 340; seed++) {
      Run run = run(seed, 10_000, 100, 100, 0.5, 14);
      assertCorrect(run, "seed " + seed);
      List<PartitionOutcome> u = run.unequal();
      if (u.stream().anyMatch(o -> o.path() != Path.IBLT || o.attempts() != 2)) {
        continue;
      }
      oneFailure++;
      long m2 = u.get(0).finalShape().cells();
      long cellBytes = CellLayout.WIDE.cellBytes();
      assertThat(run.i.stats().ibltCells()).as("seed " + seed).isEqualTo(m2);
      assertThat(run.i.stats().ibltBytes())
          .as("seed " + seed)
          .isBetween(m2 * cellBytes, m2 * cellBytes + 2 * (96 + 10 * (1 << P_LOG2)));
    }
    assertThat(oneFailure).as("seeds with exactly one failure").isGreaterThanOrEqualTo(3);
  }

  @Test
  void fewDifferencesByCountTakeASmallFirstTableAndNoEstimator() {
    // 3 elements only at A: the count difference bounds d from below at 3, a table for d = 3 costs
    // far less than half of a 4 KiB estimator, so none is sent.
    EstimatorFactory f = ExactEstimator.factory(1.0, 4059);
    TestSets s = TestSets.random(29, 20_000, 3, 0);
    ReconcileSession[] ir = runSets(29, f, 14, s.a, s.b);
    Run run = new Run(ir[0], ir[1], s);
    assertCorrect(run, "seed 29");
    assertThat(run.unequal()).isNotEmpty().allMatch(o -> o.path() == Path.IBLT);
    assertThat(run.i.stats().estimatorBytes() + run.r.stats().estimatorBytes()).isZero();
    assertThat(run.i.stats().ibltCells())
        .isEqualTo(Sizing.firstShape(Sizing.differenceLowerBound(3, run.unequal().size())).cells());
  }

  @Test
  void aSmallFirstTableThatFailsIsExtendedThenTheEstimatorIsOffered() {
    // 500 differences with equal counts in every partition: the fingerprints bound d at 2 per
    // partition, the small table fails, extensions follow while they cost less than the
    // estimator, then the estimator sizes a table that decodes.
    EstimatorFactory f = ExactEstimator.factory(1.0, 4059);
    long[][] sets = pairedSets(30, 20_000, 250);
    ReconcileSession[] ir = runSets(30, f, 14, sets[0], sets[1]);
    ReconcileSession i = ir[0];
    ReconcileSession r = ir[1];
    assertThat(i.succeeded()).as(String.valueOf(i.failure())).isTrue();
    assertThat(r.succeeded()).as(String.valueOf(r.failure())).isTrue();
    List<PartitionOutcome> os = i.outcomes();
    assertThat(sorted(os.stream().flatMapToLong(o -> Arrays.stream(o.missingLocal()))))
        .containsExactly(sorted(Arrays.stream(sets[3])));
    assertThat(sorted(os.stream().flatMapToLong(o -> Arrays.stream(o.missingRemote()))))
        .containsExactly(sorted(Arrays.stream(sets[2])));
    assertThat(os).allMatch(o -> o.path() == Path.IBLT);
    assertThat(r.stats().estimatorBytes()).isPositive();
    assertThat(r.stats().decodeFailures()).isPositive();
  }

  @Test
  void anExtensionOfTheWrongLengthIsMalformed() {
    for (int delta : new int[] {-1, 1, -14}) {
      EstimatorFactory f = ExactEstimator.factory(0.1);
      SketchParams params = TestSets.params(31, 0, 12, f.params());
      TestSets s = TestSets.random(31, 5000, 100, 100);
      ReconcileSession i =
          ReconcileSession.initiator(
              SessionConfig.of("c", "a", 31), MemorySketches.ofSinglePartition(params, f, s.a));
      ReconcileSession r =
          ReconcileSession.responder(
              SessionConfig.of("c", "b", 0), MemorySketches.ofSinglePartition(params, f, s.b));
      LocalRound.run(
          i,
          r,
          e -> {
            if (e.hasIblt() && e.getIblt().getExtension()) {
              var cells = e.getIblt().getTable().getCells();
              var changed =
                  delta < 0
                      ? cells.substring(0, cells.size() + delta)
                      : cells.concat(com.google.protobuf.ByteString.copyFrom(new byte[delta]));
              var t = e.getIblt().getTable().toBuilder().setCells(changed);
              return e.toBuilder().setIblt(e.getIblt().toBuilder().setTable(t)).build();
            }
            return e;
          },
          e -> e);
      assertThat(r.failure())
          .as("delta " + delta)
          .get()
          .satisfies(
              x -> {
                assertThat(x.code()).isEqualTo(Code.MALFORMED);
                assertThat(x.message()).contains("extension").contains("bytes, got");
              });
    }
  }

  @Test
  void anExtensionThatWasNotAskedForIsMalformed() {
    EstimatorFactory f = ExactEstimator.factory(1.0);
    SketchParams params = TestSets.params(32, 0, 12, f.params());
    TestSets s = TestSets.random(32, 5000, 50, 50);
    ReconcileSession i =
        ReconcileSession.initiator(
            SessionConfig.of("c", "a", 32), MemorySketches.ofSinglePartition(params, f, s.a));
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "b", 0), MemorySketches.ofSinglePartition(params, f, s.b));
    LocalRound.run(
        i,
        r,
        e ->
            e.hasIblt()
                ? e.toBuilder().setIblt(e.getIblt().toBuilder().setExtension(true)).build()
                : e,
        e -> e);
    assertThat(r.failure())
        .get()
        .satisfies(
            x -> {
              assertThat(x.code()).isEqualTo(Code.MALFORMED);
              assertThat(x.message()).contains("was not asked for");
            });
  }

  @Test
  void accurateLargeEstimateGoesStraightToTheDigestList() {
    Run run = run(24, 20_000, 2000, 2000, 1.0, 6);
    assertCorrect(run, "seed 24");
    assertThat(run.unequal()).allMatch(o -> o.path() == Path.FALLBACK && o.attempts() == 0);
    assertThat(run.i.stats().ibltBytes()).isZero();
  }

  @Test
  void tinyPartitionsAreListedRatherThanSketched() {
    // ExactEstimator claims 64 wire bytes: when the initiator's unequal partitions hold <= 8
    // elements in all, their lists are cheaper than one estimator.
    Run run = run(25, 4, 2, 1, 1.0, 12);
    assertCorrect(run, "seed 25");
    assertThat(run.unequal()).allMatch(o -> o.path() == Path.FALLBACK);
    assertThat(run.i.stats().estimatorBytes()).isZero();
  }

  @Test
  void oneSideEmpty() {
    Run run = run(26, 0, 3000, 0, 1.0, 14);
    assertCorrect(run, "seed 26");
  }

  @Test
  void randomisedAgainstTheTruth() {
    for (long seed = 100; seed < 140; seed++) {
      java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
      int common = r.nextInt(0, 20_000);
      int da = r.nextInt(0, 300);
      int db = r.nextInt(0, 300);
      double factor = new double[] {1.0, 0.3, 0.05, 3.0}[r.nextInt(4)];
      int maxLog2 = 6 + r.nextInt(8);
      Run run = run(seed, common, da, db, factor, maxLog2);
      assertCorrect(
          run,
          "seed "
              + seed
              + " common "
              + common
              + " da "
              + da
              + " db "
              + db
              + " factor "
              + factor
              + " maxLog2 "
              + maxLog2);
    }
  }

  @Test
  void chunkedResultsAndDigestsReassemble() {
    EstimatorFactory f = ExactEstimator.factory(1.0);
    SketchParams params = TestSets.params(31, 0, 4, f.params());
    TestSets s = TestSets.random(31, 3000, 500, 700);
    MemorySketches a = MemorySketches.ofSinglePartition(params, f, s.a);
    MemorySketches b = MemorySketches.ofSinglePartition(params, f, s.b);
    SessionLimits small = new SessionLimits(1 << 20, 97);
    ReconcileSession i =
        ReconcileSession.initiator(new SessionConfig("c", "a", 31, null, small), a);
    ReconcileSession r = ReconcileSession.responder(new SessionConfig("c", "b", 0, null, small), b);
    LocalRound.run(i, r);
    assertCorrect(new Run(i, r, s), "seed 31");
    assertThat(i.stats().framesSent()).isGreaterThan(3700 / 97);
  }

  @Test
  void listedElementsThatTheOwnSetContradictsAreDroppedAndCounted() {
    // Tamper with the result in flight: claim the initiator lacks an element it has, and that the
    // responder lacks a random element the initiator does not have. Neither may be acted on.
    EstimatorFactory f = ExactEstimator.factory(1.0);
    SketchParams params = TestSets.params(32, 0, 12, f.params());
    TestSets s = TestSets.random(32, 5000, 10, 10);
    MemorySketches a = MemorySketches.ofSinglePartition(params, f, s.a);
    MemorySketches b = MemorySketches.ofSinglePartition(params, f, s.b);
    ReconcileSession i = ReconcileSession.initiator(SessionConfig.of("c", "a", 32), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    boolean[] tampered = {false};
    LocalRound.run(
        i,
        r,
        e -> e,
        e -> {
          if (e.hasMissing() && !tampered[0]) {
            tampered[0] = true;
            var m = e.getMissing();
            long[] atI = Wire.unpackLongsUnchecked(m.getMissingAtInitiator());
            long[] atR = Wire.unpackLongsUnchecked(m.getMissingAtResponder());
            long[] atI2 = Arrays.copyOf(atI, atI.length + 1);
            atI2[atI.length] = s.a[0]; // the initiator has it
            long[] atR2 = Arrays.copyOf(atR, atR.length + 1);
            atR2[atR.length] = 0x1234_5678_9abc_def0L; // the initiator does not have it
            return e.toBuilder()
                .setMissing(
                    m.toBuilder()
                        .setMissingAtInitiator(Wire.packLongs(atI2, 0, atI2.length))
                        .setMissingAtResponder(Wire.packLongs(atR2, 0, atR2.length)))
                .build();
          }
          return e;
        });
    assertThat(tampered[0]).isTrue();
    assertListsCorrect(new Run(i, r, s), "seed 32");
    assertThat(i.stats().unverified()).isEqualTo(2);
    assertThat(r.stats().unverified()).isZero();
  }

  // ------------------------------------------------------------------ refusals

  static ReconcileSession[] pair(
      SketchParams pa, SketchParams pb, String clusterA, String clusterB) {
    EstimatorFactory f = ExactEstimator.factory(1.0);
    TestSets s = TestSets.random(5, 100, 1, 1);
    MemorySketches a = MemorySketches.ofSinglePartition(pa, f, s.a);
    MemorySketches b = MemorySketches.ofSinglePartition(pb, f, s.b);
    return new ReconcileSession[] {
      ReconcileSession.initiator(SessionConfig.of(clusterA, "a", 9), a),
      ReconcileSession.responder(SessionConfig.of(clusterB, "b", 0), b)
    };
  }

  static SketchParams params(long seed, int maxLog2) {
    return TestSets.params(seed, 0, maxLog2, ExactEstimator.factory(1.0).params());
  }

  @Test
  void wrongSeedIsRefusedNamingBothFingerprints() {
    ReconcileSession[] p = pair(params(1, 8), params(2, 8), "c", "c");
    LocalRound.run(p[0], p[1]);
    assertThat(p[1].failure()).get().extracting(SessionFailure::code).isEqualTo(Code.SEED);
    assertThat(p[0].failure())
        .get()
        .satisfies(
            f -> {
              assertThat(f.byPeer()).isTrue();
              assertThat(f.message())
                  .contains(HashSpec.hex(HashSpec.xxh3(1).seedFingerprint()))
                  .contains(HashSpec.hex(HashSpec.xxh3(2).seedFingerprint()));
            });
    assertThat(p[0].outcomes()).isEmpty();
  }

  @Test
  void wrongClusterIsRefused() {
    ReconcileSession[] p = pair(params(1, 8), params(1, 8), "east", "west");
    LocalRound.run(p[0], p[1]);
    assertThat(p[0].failure())
        .get()
        .satisfies(
            f -> {
              assertThat(f.code()).isEqualTo(Code.CLUSTER);
              assertThat(f.message()).contains("'east'").contains("'west'");
            });
  }

  @Test
  void differentTableLimitsAreRefused() {
    ReconcileSession[] p = pair(params(1, 8), params(1, 9), "c", "c");
    LocalRound.run(p[0], p[1]);
    assertThat(p[0].failure())
        .get()
        .satisfies(
            f -> {
              assertThat(f.code()).isEqualTo(Code.PARAMS);
              assertThat(f.message())
                  .contains("IBLT max log2")
                  .contains("peer 8")
                  .contains("local 9");
            });
  }

  @Test
  void unknownFrameVersionIsRefused() {
    ReconcileSession[] p = pair(params(1, 8), params(1, 8), "c", "c");
    LocalRound.run(p[0], p[1], e -> e.toBuilder().setFormatVersion(1).build(), e -> e);
    assertThat(p[1].failure())
        .get()
        .satisfies(
            f -> {
              assertThat(f.code()).isEqualTo(Code.VERSION);
              assertThat(f.message()).contains("frame format version 1").contains("speaks 2");
            });
  }

  @Test
  void unsupportedProtocolRangeIsRefused() {
    ReconcileSession[] p = pair(params(1, 8), params(1, 8), "c", "c");
    LocalRound.run(
        p[0],
        p[1],
        e ->
            e.hasHello()
                ? e.toBuilder()
                    .setHello(e.getHello().toBuilder().setMinVersion(3).setMaxVersion(4))
                    .build()
                : e,
        e -> e);
    assertThat(p[0].failure()).get().extracting(SessionFailure::code).isEqualTo(Code.VERSION);
  }

  @Test
  void replayedFrameIsRefused() {
    ReconcileSession[] p = pair(params(1, 8), params(1, 8), "c", "c");
    Envelope[] first = new Envelope[1];
    LocalRound.run(
        p[0],
        p[1],
        e -> {
          if (first[0] == null) {
            first[0] = e;
          } else {
            return first[0]; // replay the Hello instead of the next frame
          }
          return e;
        },
        e -> e);
    assertThat(p[1].failure())
        .get()
        .satisfies(
            f -> {
              assertThat(f.code()).isEqualTo(Code.MALFORMED);
              assertThat(f.message()).contains("sequence");
            });
  }

  @Test
  void busyRefusalBeforeTheHelloWasReadEndsTheSessionWithTheRefusal() {
    ReconcileSession[] p = pair(params(1, 8), params(1, 8), "c", "c");
    p[0].start();
    assertThat(p[0].poll().hasHello()).isTrue();
    // A busy responder refuses without having read the Hello: session id 0, its own sequence 0.
    p[0].receive(
        Envelope.newBuilder()
            .setFormatVersion(Wire.FORMAT_VERSION)
            .setRefusal(Refusal.newBuilder().setCode(Code.BUSY).setMessage("busy: 1 rounds active"))
            .build());
    assertThat(p[0].failure())
        .get()
        .satisfies(
            f -> {
              assertThat(f.code()).isEqualTo(Code.BUSY);
              assertThat(f.byPeer()).isTrue();
              assertThat(f.message()).contains("peer refused (BUSY): busy");
            });
    assertThat(p[0].poll()).as("nothing is sent back to a refusal").isNull();
  }

  @Test
  void frameOfAnotherSessionIsRefused() {
    ReconcileSession[] p = pair(params(1, 8), params(1, 8), "c", "c");
    LocalRound.run(
        p[0], p[1], e -> e.hasHello() ? e : e.toBuilder().setSessionId(77).build(), e -> e);
    assertThat(p[1].failure())
        .get()
        .extracting(SessionFailure::message)
        .asString()
        .contains("session 77");
  }

  @Test
  void tamperedTableShapeIsRefusedBeforeAllocating() {
    EstimatorFactory f = ExactEstimator.factory(1.0);
    SketchParams params = TestSets.params(3, 0, 10, f.params());
    TestSets s = TestSets.random(3, 5000, 50, 50);
    ReconcileSession i =
        ReconcileSession.initiator(
            SessionConfig.of("c", "a", 3), MemorySketches.ofSinglePartition(params, f, s.a));
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "b", 0), MemorySketches.ofSinglePartition(params, f, s.b));
    LocalRound.run(
        i,
        r,
        e -> {
          if (e.hasIblt()) {
            var t =
                e.getIblt().getTable().toBuilder().setShape(Wire.toProto(new IbltShape(3, 1, 26)));
            return e.toBuilder().setIblt(e.getIblt().toBuilder().setTable(t)).build();
          }
          return e;
        },
        e -> e);
    assertThat(r.failure())
        .get()
        .satisfies(
            x -> {
              assertThat(x.code()).isEqualTo(Code.LIMIT);
              assertThat(x.message()).contains("not allowed");
            });
    assertThat(i.failure()).get().extracting(SessionFailure::byPeer).isEqualTo(true);
  }

  @Test
  void unsortedDigestListIsRefused() {
    EstimatorFactory f = ExactEstimator.factory(1.0);
    SketchParams params = TestSets.params(4, 0, 4, f.params());
    TestSets s = TestSets.random(4, 500, 300, 300);
    ReconcileSession i =
        ReconcileSession.initiator(
            SessionConfig.of("c", "a", 4), MemorySketches.ofSinglePartition(params, f, s.a));
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "b", 0), MemorySketches.ofSinglePartition(params, f, s.b));
    LocalRound.run(
        i,
        r,
        e -> {
          if (e.hasDigestChunk()) {
            long[] reversed = {5L, 4L, 3L};
            return e.toBuilder()
                .setDigestChunk(
                    e.getDigestChunk().toBuilder().setElements(Wire.packLongs(reversed, 0, 3)))
                .build();
          }
          return e;
        },
        e -> e);
    assertThat(r.failure())
        .get()
        .extracting(SessionFailure::message)
        .asString()
        .contains("not sorted");
  }

  @Test
  void aResultLongerThanTheListCapIsCutAndFlaggedPartialNotRefused() {
    EstimatorFactory f = ExactEstimator.factory(1.0);
    SketchParams params = TestSets.params(6, 0, 12, f.params());
    TestSets s = TestSets.random(6, 500, 30, 30);
    SessionLimits tight = new SessionLimits(10, 1 << 16);
    ReconcileSession i =
        ReconcileSession.initiator(
            new SessionConfig("c", "a", 6, null, tight),
            MemorySketches.ofSinglePartition(params, f, s.a));
    ReconcileSession r =
        ReconcileSession.responder(
            SessionConfig.of("c", "b", 0), MemorySketches.ofSinglePartition(params, f, s.b));
    LocalRound.run(i, r);
    assertThat(i.succeeded()).as("%s", i.failure()).isTrue();
    PartitionOutcome o = i.outcomes().get(0);
    assertThat(o.partial()).isTrue();
    assertThat(o.missingLocal().length + o.missingRemote().length).isEqualTo(10);
    // What is listed is exact: a part of the true difference, each element on its side.
    assertThat(Arrays.stream(s.onlyB).boxed().toList())
        .containsAll(Arrays.stream(o.missingLocal()).boxed().toList());
    assertThat(Arrays.stream(s.onlyA).boxed().toList())
        .containsAll(Arrays.stream(o.missingRemote()).boxed().toList());
  }

  @Test
  void messageForTheWrongRoleIsRefused() {
    ReconcileSession[] p = pair(params(1, 8), params(1, 8), "c", "c");
    // The responder receives a HelloAck instead of a Hello.
    LocalRound.run(
        p[0],
        p[1],
        e -> e.hasHello() ? e.toBuilder().setHelloAck(HelloAck.getDefaultInstance()).build() : e,
        e -> e);
    assertThat(p[1].failure())
        .get()
        .extracting(SessionFailure::message)
        .asString()
        .contains("HelloAck sent to the responder");
  }

  @Test
  void droppedFrameEndsWithAnErrorNotAHang() {
    ReconcileSession[] p = pair(params(1, 8), params(1, 8), "c", "c");
    int[] n = {0};
    LocalRound.run(p[0], p[1], e -> n[0]++ == 1 ? null : e, e -> e);
    // Fingerprints dropped: nothing further moves; the driver (agent: a timeout) aborts.
    assertThat(p[0].isFinished()).isFalse();
    p[0].abort("peer timed out");
    assertThat(p[0].isFinished()).isTrue();
    assertThat(p[0].failure()).get().satisfies(x -> assertThat(x.byPeer()).isFalse());
  }

  @Test
  void subsetOfPartitions() {
    EstimatorFactory f = ExactEstimator.factory(1.0);
    SketchParams params = TestSets.params(8, 3, 10, f.params());
    TestSets s = TestSets.random(8, 10_000, 200, 200);
    MemorySketches a = MemorySketches.of(params, f, TestSets.partitionsOf(s.a, 3), s.a);
    MemorySketches b = MemorySketches.of(params, f, TestSets.partitionsOf(s.b, 3), s.b);
    int[] subset = {1, 5, 6};
    ReconcileSession i =
        ReconcileSession.initiator(SessionConfig.of("c", "a", 8).withPartitions(subset), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    LocalRound.run(i, r);
    assertThat(i.succeeded()).isTrue();
    assertThat(r.partitions()).containsExactly(subset);
    assertThat(i.outcomes()).extracting(PartitionOutcome::partition).containsExactly(1, 5, 6);
    long[] expected =
        Arrays.stream(s.onlyB)
            .filter(x -> Arrays.stream(subset).anyMatch(q -> q == HashSpec.partition(x, 3)))
            .sorted()
            .toArray();
    assertThat(new Run(i, r, s).missingAtInitiator()).containsExactly(expected);
  }
}
