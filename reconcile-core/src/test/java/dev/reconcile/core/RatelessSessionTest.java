package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.reconcile.core.PartitionOutcome.Path;
import dev.reconcile.core.wire.Mode;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.Arrays;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Whole sessions in the rateless mode: decode per partition, pacing, fallback, negotiation. */
class RatelessSessionTest {
  private static final EstimatorFactory F = ExactEstimator.factory(1.0);

  static SketchParams params(long seed, int partitionsLog2, int ratelessLog2) {
    return TestSets.params(seed, partitionsLog2, 12, F.params()).withRatelessLog2(ratelessLog2);
  }

  record Run(ReconcileSession i, ReconcileSession r, TestSets sets) {}

  static Run run(long seed, int pLog2, int rLog2, int common, int da, int db) {
    SketchParams params = params(seed, pLog2, rLog2);
    TestSets s = TestSets.random(seed, common, da, db);
    MemorySketches a = MemorySketches.of(params, F, TestSets.partitionsOf(s.a, pLog2), s.a);
    MemorySketches b = MemorySketches.of(params, F, TestSets.partitionsOf(s.b, pLog2), s.b);
    ReconcileSession i = ReconcileSession.initiator(SessionConfig.of("c", "a", seed), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    LocalRound.run(i, r);
    return new Run(i, r, s);
  }

  static long[] sorted(long[] a) {
    long[] c = a.clone();
    Arrays.sort(c);
    return c;
  }

  static void assertExact(Run run, String ctx) {
    assertThat(run.i.failure()).as(ctx).isEmpty();
    assertThat(run.r.failure()).as(ctx).isEmpty();
    long[] atI =
        run.i.outcomes().stream().flatMapToLong(o -> Arrays.stream(o.missingLocal())).toArray();
    long[] atR =
        run.i.outcomes().stream().flatMapToLong(o -> Arrays.stream(o.missingRemote())).toArray();
    assertThat(sorted(atI)).as(ctx).containsExactly(sorted(run.sets.onlyB));
    assertThat(sorted(atR)).as(ctx).containsExactly(sorted(run.sets.onlyA));
    assertThat(run.i.stats().unverified()).as(ctx).isZero();
  }

  @ParameterizedTest
  @CsvSource({
    "1, 1, 0",
    "2, 0, 1",
    "3, 1, 1",
    "4, 5, 5",
    "5, 40, 0",
    "6, 60, 60",
    "7, 500, 300",
    "8, 3000, 2000"
  })
  void everyDifferenceIsFoundOnTheRatelessPath(long seed, int da, int db) {
    Run run = run(seed, 4, 12, 20_000, da, db);
    String ctx = "seed " + seed + ", d = " + (da + db);
    assertExact(run, ctx);
    assertThat(run.i.outcomes())
        .filteredOn(o -> o.path() != Path.FAST)
        .isNotEmpty()
        .allSatisfy(o -> assertThat(o.path()).isEqualTo(Path.RATELESS));
    assertThat(run.i.stats().estimatorBytes() + run.i.stats().ibltBytes()).isZero();
    assertThat(run.i.stats().symbolBytes()).isPositive();
  }

  @Test
  void oneDifferenceCostsUnderAKilobyteAllTold() {
    Run run = run(21, 4, 14, 100_000, 1, 0);
    assertExact(run, "d = 1");
    assertThat(run.i.stats().bytesTotal()).isLessThan(1024);
  }

  @Test
  void aStreamBeyondTheMaintainedSymbolsFallsBackToTheEstimatorPath() {
    // 64 symbols per partition decode about 45 differences; 400 in one partition cannot.
    Run run = run(31, 0, 6, 5000, 250, 150);
    assertExact(run, "fallback");
    assertThat(run.i.outcomes().get(0).path()).isIn(Path.IBLT, Path.FALLBACK);
    assertThat(run.i.stats().fallbacks()).isPositive();
    assertThat(run.i.stats().symbolBytes()).isPositive();
  }

  @Test
  void withoutSymbolsOnOneSideTheEstimatorModeIsUsed() {
    SketchParams params = params(41, 2, 10);
    TestSets s = TestSets.random(41, 2000, 20, 20);
    MemorySketches a = MemorySketches.of(params, F, TestSets.partitionsOf(s.a, 2), s.a);
    MemorySketches b = MemorySketches.of(params, F, TestSets.partitionsOf(s.b, 2), s.b);
    ReconcileSession i =
        ReconcileSession.initiator(SessionConfig.of("c", "a", 41).withPacing(null), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    Mode[] chosen = new Mode[1];
    LocalRound.run(
        i,
        r,
        UnaryOperator.identity(),
        e -> {
          if (e.hasHelloAck()) {
            chosen[0] = e.getHelloAck().getMode();
          }
          return e;
        });
    assertExact(new Run(i, r, s), "estimator mode");
    assertThat(chosen[0]).isEqualTo(Mode.MODE_ESTIMATOR_IBLT);
    assertThat(i.stats().symbolBytes()).isZero();
  }

  @Test
  void tamperedSymbolsAreRefusedNeverDecodedWrong() {
    SketchParams params = params(51, 2, 10);
    TestSets s = TestSets.random(51, 2000, 30, 30);
    MemorySketches a = MemorySketches.of(params, F, TestSets.partitionsOf(s.a, 2), s.a);
    MemorySketches b = MemorySketches.of(params, F, TestSets.partitionsOf(s.b, 2), s.b);
    ReconcileSession i = ReconcileSession.initiator(SessionConfig.of("c", "a", 51), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    LocalRound.run(
        i,
        r,
        UnaryOperator.identity(),
        e -> {
          if (!e.hasSymbols()) {
            return e;
          }
          byte[] bytes = e.getSymbols().getSymbols().toByteArray();
          bytes[3] ^= 0x40; // an element sum bit of symbol 0
          return e.toBuilder()
              .setSymbols(e.getSymbols().toBuilder().setSymbols(ByteString.copyFrom(bytes)))
              .build();
        });
    // Either the decode proves inconsistent (refused) or, if it completed, every listed element
    // was verified: never a wrong list.
    if (i.failure().isPresent()) {
      assertThat(i.failure().get().code()).isEqualTo(Code.MALFORMED);
    } else {
      assertExact(new Run(i, r, s), "tampered");
    }
  }

  @Test
  void aRepairRoundConvergesTwoReplicasOnTheRatelessPath() {
    SketchParams params = params(61, 3, 12);
    MemoryReplica left = new MemoryReplica(params, F);
    MemoryReplica right = new MemoryReplica(params, F);
    long v = ReplicaRecord.version(1_750_000_000_000L, 0);
    for (int k = 0; k < 5000; k++) {
      ReplicaRecord x =
          ReplicaRecord.of(
              ("k" + k).getBytes(java.nio.charset.StandardCharsets.UTF_8),
              ("v" + k).getBytes(java.nio.charset.StandardCharsets.UTF_8),
              v,
              1);
      left.write(x);
      if (k % 97 != 0) {
        right.write(x);
      }
    }
    for (int k = 0; k < 40; k++) {
      right.write(
          ReplicaRecord.of(
              ("r" + k).getBytes(java.nio.charset.StandardCharsets.UTF_8),
              "x".getBytes(java.nio.charset.StandardCharsets.UTF_8),
              v + 1,
              2));
    }
    ReconcileSession i =
        LocalRound.repair(
            SessionConfig.of("c", "left", 61).withRepair(RepairConfig.DEFAULT), left, right);
    assertThat(OutcomeSummary.of(i.outcomes()).rateless()).isPositive();
    assertThat(i.repairStats().stillDiffering()).isEmpty();
    assertThat(left.size()).isEqualTo(right.size()).isEqualTo(5040);
    assertThat(i.stats().resultBytes()).isLessThan(100 * 8);
  }

  /**
   * Writes on the initiator between its Hello and the HelloAck change its counts; both sides must
   * still size each stream's first batch from the same counts (the Hello's), or the initiator waits
   * for symbols that never come. Regression: an agent round with writes during it hung until its
   * idle timeout.
   */
  @Test
  void writesBetweenHelloAndHelloAckDoNotStallTheStreams() {
    SketchParams params = params(67, 3, 12);
    MemoryReplica left = new MemoryReplica(params, F);
    MemoryReplica right = new MemoryReplica(params, F);
    long v = ReplicaRecord.version(1_750_000_000_000L, 0);
    for (int k = 0; k < 3000; k++) {
      ReplicaRecord x = ReplicaRecord.of(bytes("k" + k), bytes("v" + k), v, 1);
      right.write(x);
      if (k % 10 != 0) {
        left.write(x);
      }
    }
    ReconcileSession i =
        ReconcileSession.initiator(
            SessionConfig.of("c", "left", 67).withRepair(RepairConfig.DEFAULT),
            left.sketches(),
            left,
            RoundProgress.NONE);
    ReconcileSession r =
        ReconcileSession.responder(SessionConfig.of("c", "right", 0), right.sketches(), right);
    LocalRound.run(
        i,
        r,
        e -> {
          if (e.hasHello()) { // the Hello is out: the initiator's store moves on
            for (int k = 0; k < 200; k++) {
              left.write(ReplicaRecord.of(bytes("late" + k), bytes("x"), v + 1, 1));
            }
          }
          return e;
        },
        UnaryOperator.identity());
    assertThat(i.succeeded()).as("initiator: %s", i.failure()).isTrue();
    assertThat(r.succeeded()).as("responder: %s", r.failure()).isTrue();
    assertThat(OutcomeSummary.of(i.outcomes()).rateless()).isPositive();
    ReconcileSession again =
        LocalRound.repair(
            SessionConfig.of("c", "left", 68).withRepair(RepairConfig.DEFAULT), left, right);
    assertThat(again.repairStats().stillDiffering()).isEmpty();
    assertThat(left.size()).isEqualTo(right.size()).isEqualTo(3200);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }
}
