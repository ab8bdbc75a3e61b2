package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.PartitionOutcome.Path;
import dev.reconcile.core.RatelessSessionTest.Run;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Mode;
import dev.reconcile.core.wire.Refusal.Code;
import dev.reconcile.core.wire.SymbolRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Grouped rateless streams ({@code MODE_RATELESS_GROUPED}): one stream for the unequal partitions
 * of a round with a small known difference, split into streams of their own when the estimate says
 * the group's prefix is too short; negotiation with peers that do not group; malformed splits.
 */
class RatelessGroupTest {
  private static final EstimatorFactory F = ExactEstimator.factory(1.0);

  /** What crossed the wire in one session. */
  record Trace(Run run, Mode mode, List<Envelope> fromResponder, List<Envelope> fromInitiator) {}

  static Trace trace(
      long seed,
      int pLog2,
      int rLog2,
      int common,
      int da,
      int db,
      RatelessPacing.Config initiator,
      RatelessPacing.Config responder,
      UnaryOperator<Envelope> tamperInitiator) {
    SketchParams params = RatelessSessionTest.params(seed, pLog2, rLog2);
    TestSets s = TestSets.random(seed, common, da, db);
    MemorySketches a = MemorySketches.of(params, F, TestSets.partitionsOf(s.a, pLog2), s.a);
    MemorySketches b = MemorySketches.of(params, F, TestSets.partitionsOf(s.b, pLog2), s.b);
    ReconcileSession i =
        ReconcileSession.initiator(SessionConfig.of("c", "a", seed).withPacing(initiator), a);
    ReconcileSession r =
        ReconcileSession.responder(SessionConfig.of("c", "b", 0).withPacing(responder), b);
    List<Envelope> toI = new ArrayList<>();
    List<Envelope> toR = new ArrayList<>();
    Mode[] mode = {null};
    LocalRound.run(
        i,
        r,
        e -> {
          Envelope t = tamperInitiator.apply(e);
          toR.add(t);
          return t;
        },
        e -> {
          if (e.hasHelloAck()) {
            mode[0] = e.getHelloAck().getMode();
          }
          toI.add(e);
          return e;
        });
    return new Trace(new Run(i, r, s), mode[0], toI, toR);
  }

  static Trace trace(long seed, int pLog2, int rLog2, int common, int da, int db) {
    RatelessPacing.Config c = RatelessPacing.Config.SESSION;
    return trace(seed, pLog2, rLog2, common, da, db, c, c, UnaryOperator.identity());
  }

  /** A session of the default pacing, {@code half} elements only on each side, tampered. */
  static Trace tampered(
      long seed, int pLog2, int rLog2, int half, UnaryOperator<Envelope> tamperInitiator) {
    RatelessPacing.Config c = RatelessPacing.Config.SESSION;
    return trace(seed, pLog2, rLog2, 20_000, half, half, c, c, tamperInitiator);
  }

  @Test
  void aSmallDifferenceAcrossPartitionsTravelsInOneStream() {
    Trace t = trace(101, 4, 14, 20_000, 50, 50);
    RatelessSessionTest.assertExact(t.run, "d = 100");
    assertThat(t.mode).isEqualTo(Mode.MODE_RATELESS_GROUPED);
    List<Envelope> chunks = t.fromResponder.stream().filter(Envelope::hasSymbols).toList();
    assertThat(chunks).isNotEmpty();
    // Every chunk carries one stream, named by the lowest unequal partition.
    int lowest =
        t.run.i().outcomes().stream()
            .filter(o -> o.path() != Path.FAST)
            .mapToInt(PartitionOutcome::partition)
            .min()
            .orElseThrow();
    assertThat(chunks)
        .allSatisfy(e -> assertThat(e.getSymbols().getPartitionsList()).containsExactly(lowest));
    assertThat(t.run.i().outcomes().stream().filter(o -> o.path() != Path.FAST).count())
        .as("unequal partitions")
        .isGreaterThan(8);
    assertThat(t.run.i().stats().splits()).isZero();
    assertThat(t.run.i().outcomes())
        .filteredOn(o -> o.path() != Path.FAST)
        .allSatisfy(o -> assertThat(o.path()).isEqualTo(Path.RATELESS));
  }

  /**
   * The bytes claim of docs/rateless.md: at d = 100 over 16 partitions, one grouped stream costs at
   * least 15 % fewer session bytes than one stream per partition (median of 25 seeds; measured
   * about 28 % fewer in the bench).
   */
  @Test
  void oneStreamCostsFewerBytesThanOneStreamPerPartition() {
    int trials = 25;
    long[] grouped = new long[trials];
    long[] single = new long[trials];
    RatelessPacing.Config on = RatelessPacing.Config.SESSION;
    RatelessPacing.Config off = on.withGroups(false);
    for (int k = 0; k < trials; k++) {
      long seed = 200L + k;
      Trace g = trace(seed, 4, 14, 20_000, 50, 50, on, on, UnaryOperator.identity());
      Trace s = trace(seed, 4, 14, 20_000, 50, 50, off, on, UnaryOperator.identity());
      RatelessSessionTest.assertExact(g.run, "grouped, seed " + seed);
      RatelessSessionTest.assertExact(s.run, "per partition, seed " + seed);
      assertThat(s.mode).isEqualTo(Mode.MODE_RATELESS);
      grouped[k] = g.run.i().stats().bytesTotal();
      single[k] = s.run.i().stats().bytesTotal();
    }
    Arrays.sort(grouped);
    Arrays.sort(single);
    long g = grouped[trials / 2];
    long s = single[trials / 2];
    System.out.printf("rateless d=100 grouped median %d B, per partition %d B%n", g, s);
    assertThat((double) g).as("grouped %d vs per partition %d", g, s).isLessThan(0.85 * s);
  }

  @Test
  void aDifferenceTooLargeForTheGroupSplitsAndStillDecodes() {
    // M = 1024: the group forms (sum |Delta_p| is small) but d = 1200 needs about 1 620 symbols,
    // more than the group's prefix; split, each partition (about 300) decodes in its own.
    for (long seed = 301; seed <= 305; seed++) {
      Trace t = trace(seed, 2, 10, 20_000, 600, 600);
      String ctx = "seed " + seed;
      RatelessSessionTest.assertExact(t.run, ctx);
      assertThat(t.mode).as(ctx).isEqualTo(Mode.MODE_RATELESS_GROUPED);
      assertThat(t.run.i().stats().splits()).as(ctx).isEqualTo(1);
      assertThat(t.run.i().stats().fallbacks()).as(ctx).isZero();
      assertThat(t.run.i().outcomes())
          .as(ctx)
          .allSatisfy(o -> assertThat(o.path()).isEqualTo(Path.RATELESS));
      // The split came as soon as the estimate was trusted: the group got no grant past that.
      SymbolRequest split =
          t.fromInitiator.stream()
              .filter(e -> e.hasSymbolRequest() && e.getSymbolRequest().getSplitCount() > 0)
              .findFirst()
              .orElseThrow()
              .getSymbolRequest();
      assertThat(split.getPartitionsCount()).as(ctx).isEqualTo(4);
      long groupSymbols =
          t.fromResponder.stream()
              .filter(Envelope::hasSymbols)
              .takeWhile(e -> e.getSymbols().getPartitionsCount() == 1)
              .mapToLong(e -> e.getSymbols().getCounts(0))
              .sum();
      long firstBatch =
          t.fromResponder.stream()
              .filter(Envelope::hasSymbols)
              .findFirst()
              .get()
              .getSymbols()
              .getCounts(0);
      assertThat(groupSymbols)
          .as(ctx)
          .isLessThanOrEqualTo(Math.max(RatelessExchange.ESTIMATE_AFTER, firstBatch));
    }
  }

  @Test
  void aPeerThatDoesNotGroupGetsOneStreamPerPartition() {
    RatelessPacing.Config on = RatelessPacing.Config.SESSION;
    RatelessPacing.Config off = on.withGroups(false);
    for (boolean initiatorGroups : new boolean[] {true, false}) {
      Trace t =
          trace(
              401,
              3,
              12,
              10_000,
              20,
              20,
              initiatorGroups ? on : off,
              initiatorGroups ? off : on,
              UnaryOperator.identity());
      RatelessSessionTest.assertExact(t.run, "initiator groups: " + initiatorGroups);
      assertThat(t.mode).isEqualTo(Mode.MODE_RATELESS);
      Envelope first = t.fromResponder.stream().filter(Envelope::hasSymbols).findFirst().get();
      assertThat(first.getSymbols().getPartitionsCount()).isGreaterThan(1);
    }
  }

  @Test
  void aSplitOfNoGroupIsRefused() {
    Trace t =
        tampered(
            501,
            4,
            14,
            50,
            e ->
                e.hasSymbolRequest()
                    ? e.toBuilder()
                        .setSymbolRequest(e.getSymbolRequest().toBuilder().addSplit(99))
                        .build()
                    : e);
    assertThat(t.fromInitiator).anyMatch(Envelope::hasSymbolRequest);
    assertThat(t.run.r().failure()).isPresent();
    assertThat(t.run.r().failure().get().code()).isEqualTo(Code.MALFORMED);
    assertThat(t.run.r().failure().get().message()).contains("splits 99, which is no group");
    assertThat(t.run.i().succeeded()).isFalse();
  }

  @Test
  void aSplitThatLeavesAPartitionWithoutAStreamIsRefused() {
    Trace t =
        tampered(
            301,
            2,
            10,
            600,
            e -> {
              if (!e.hasSymbolRequest() || e.getSymbolRequest().getSplitCount() == 0) {
                return e;
              }
              SymbolRequest r = e.getSymbolRequest();
              SymbolRequest.Builder cut = r.toBuilder().clearPartitions().clearUpTo();
              for (int j = 0; j < r.getPartitionsCount() - 1; j++) {
                cut.addPartitions(r.getPartitions(j)).addUpTo(r.getUpTo(j));
              }
              return e.toBuilder().setSymbolRequest(cut).build();
            });
    assertThat(t.run.r().failure()).isPresent();
    assertThat(t.run.r().failure().get().code()).isEqualTo(Code.MALFORMED);
    assertThat(t.run.r().failure().get().message()).contains("grants it no symbols");
  }
}
