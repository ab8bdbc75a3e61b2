package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.RatelessSessionTest.Run;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The initiator's expected difference ({@code Hello.expected_difference}, echoed in the HelloAck):
 * it sizes the rateless streams' first batches, so a right expectation decodes in fewer round
 * trips; a peer that does not know the field streams without it; a mismatched echo and an
 * out-of-range claim are refused.
 */
class ExpectedDifferenceTest {
  private static final EstimatorFactory F = ExactEstimator.factory(1.0);

  /** One session; {@code toResponder} and {@code toInitiator} may rewrite the frames. */
  record Traced(Run run, List<Envelope> fromResponder) {}

  static Traced session(
      long seed,
      int common,
      int half,
      long expected,
      UnaryOperator<Envelope> toResponder,
      UnaryOperator<Envelope> toInitiator) {
    SketchParams params = RatelessSessionTest.params(seed, 4, 14);
    TestSets s = TestSets.random(seed, common, half, half);
    MemorySketches a = MemorySketches.of(params, F, TestSets.partitionsOf(s.a, 4), s.a);
    MemorySketches b = MemorySketches.of(params, F, TestSets.partitionsOf(s.b, 4), s.b);
    ReconcileSession i =
        ReconcileSession.initiator(
            SessionConfig.of("c", "a", seed).withExpectedDifference(expected), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    List<Envelope> fromR = new ArrayList<>();
    LocalRound.run(
        i,
        r,
        toResponder,
        e -> {
          Envelope t = toInitiator.apply(e);
          fromR.add(t);
          return t;
        });
    return new Traced(new Run(i, r, s), fromR);
  }

  static Traced session(long seed, int half, long expected) {
    return session(
        seed, 20_000, half, expected, UnaryOperator.identity(), UnaryOperator.identity());
  }

  /**
   * d = 1,000 split evenly over 16 partitions (the latency bench's round), 21 seeds: expecting the
   * right d, the median round takes at least 2 round trips fewer than expecting nothing, in no more
   * bytes (the first grant is about the need; without it the pacing reaches the need in steps).
   * Every round lists exactly the difference.
   */
  @Test
  void aRightExpectationTakesFewerRoundTripsInNoMoreBytes() {
    int trials = 21;
    long[] tripsWith = new long[trials];
    long[] tripsWithout = new long[trials];
    long[] bytesWith = new long[trials];
    long[] bytesWithout = new long[trials];
    for (int k = 0; k < trials; k++) {
      long seed = 0xE0_0000L + k;
      Run with = session(seed, 500, 1000).run();
      Run without = session(seed, 500, 0).run();
      RatelessSessionTest.assertExact(with, "expected 1000, seed " + seed);
      RatelessSessionTest.assertExact(without, "expected nothing, seed " + seed);
      tripsWith[k] = with.i().stats().roundTrips();
      tripsWithout[k] = without.i().stats().roundTrips();
      bytesWith[k] = with.i().stats().bytesTotal();
      bytesWithout[k] = without.i().stats().bytesTotal();
    }
    long tw = RatelessSessionTest.sorted(tripsWith)[trials / 2];
    long to = RatelessSessionTest.sorted(tripsWithout)[trials / 2];
    long bw = RatelessSessionTest.sorted(bytesWith)[trials / 2];
    long bo = RatelessSessionTest.sorted(bytesWithout)[trials / 2];
    System.out.printf(
        "expected difference, d=1000 even: round trips median %d with, %d without (max %d, %d);"
            + " bytes median %d with, %d without%n",
        tw,
        to,
        Arrays.stream(tripsWith).max().getAsLong(),
        Arrays.stream(tripsWithout).max().getAsLong(),
        bw,
        bo);
    assertThat(tw).as("round trips with %d, without %d", tw, to).isLessThanOrEqualTo(to - 2);
    assertThat(bw).as("bytes with %d, without %d", bw, bo).isLessThanOrEqualTo(bo);
  }

  /** An expectation ten times too high still lists exactly the difference; it costs symbols. */
  @Test
  void anOverstatedExpectationStillDecodesExactly() {
    for (long seed = 0xE1_0000L; seed < 0xE1_0005L; seed++) {
      Run over = session(seed, 50, 1000).run();
      Run none = session(seed, 50, 0).run();
      RatelessSessionTest.assertExact(over, "expected 1000 of 100, seed " + seed);
      assertThat(over.i().stats().bytesTotal())
          .as("seed %d", seed)
          .isGreaterThan(none.i().stats().bytesTotal());
    }
  }

  /** A responder that does not know the field (here: a Hello without it) streams without it. */
  @Test
  void aPeerWithoutTheFieldStreamsWithoutIt() {
    Traced t =
        session(
            0xE2_0000L,
            20_000,
            500,
            1000,
            e ->
                e.hasHello()
                    ? e.toBuilder()
                        .setHello(e.getHello().toBuilder().clearExpectedDifference())
                        .build()
                    : e,
            UnaryOperator.identity());
    RatelessSessionTest.assertExact(t.run(), "Hello without the field");
    assertThat(t.fromResponder())
        .filteredOn(Envelope::hasHelloAck)
        .singleElement()
        .satisfies(e -> assertThat(e.getHelloAck().getExpectedDifference()).isZero());
    assertThat(t.run().i().stats().roundTrips())
        .isEqualTo(session(0xE2_0000L, 500, 0).run().i().stats().roundTrips());
  }

  /** The HelloAck must echo the Hello's expectation (or 0): both sides size the first batches. */
  @Test
  void anEchoOfAnotherExpectationIsRefused() {
    Traced t =
        session(
            0xE3_0000L,
            20_000,
            500,
            1000,
            UnaryOperator.identity(),
            e ->
                e.hasHelloAck()
                    ? e.toBuilder()
                        .setHelloAck(e.getHelloAck().toBuilder().setExpectedDifference(999))
                        .build()
                    : e);
    assertThat(t.run().i().failure()).isPresent();
    assertThat(t.run().i().failure().get().code()).isEqualTo(Code.PARAMS);
    assertThat(t.run().i().failure().get().message())
        .contains("peer used expected difference 999, this peer offered 1000");
  }

  /** A uint64 past 2^63 - 1 is malformed, named as the unsigned number sent. */
  @Test
  void anExpectationPastTheLongRangeIsRefused() {
    Traced t =
        session(
            0xE4_0000L,
            20_000,
            5,
            0,
            e ->
                e.hasHello()
                    ? e.toBuilder()
                        .setHello(e.getHello().toBuilder().setExpectedDifference(-1L))
                        .build()
                    : e,
            UnaryOperator.identity());
    assertThat(t.run().r().failure()).isPresent();
    assertThat(t.run().r().failure().get().code()).isEqualTo(Code.MALFORMED);
    assertThat(t.run().r().failure().get().message())
        .contains("expected difference 18446744073709551615 > 2^63 - 1");
    assertThat(t.run().i().succeeded()).isFalse();
  }
}
