package dev.reconcile.estimator.fuzz;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.reconcile.core.LocalRound;
import dev.reconcile.core.MemorySketches;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.SessionConfig;
import dev.reconcile.core.SessionFailure;
import dev.reconcile.core.SketchParams;
import dev.reconcile.core.TestSets;
import dev.reconcile.core.fuzz.FuzzLoop;
import dev.reconcile.core.fuzz.Mutator;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Refusal;
import dev.reconcile.estimator.StrataEstimatorFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fuzzing of the session state machine with the real strata estimator: genuine transcripts of
 * several scenarios (identical sets, small partitions taking the digest path, estimator + IBLT, dry
 * run) are recorded; each input replays one role up to a random state, then delivers one mutated
 * frame (byte mutations through {@link Envelope#parseFrom}, or protobuf field edits such as shape
 * log2 = 26, strata = 2^30, 10^6-entry partition lists), then optionally the rest of the genuine
 * frames. {@link ReconcileSession#receive} must never throw, must end any failure with a clear
 * message and never with {@code INTERNAL} (an unexpected runtime exception inside), and every input
 * must finish within {@link FuzzLoop#PER_INPUT}.
 */
class SessionFuzzTest {
  private static final int N = 2500 * Mutator.scale();
  private static final List<Scenario> SCENARIOS = new ArrayList<>();

  /** A recorded genuine exchange. */
  private record Scenario(
      String name,
      MemorySketches a,
      MemorySketches b,
      long sessionId,
      boolean dryRun,
      List<Envelope> toResponder,
      List<Envelope> toInitiator) {}

  static {
    StrataEstimatorFactory f = StrataEstimatorFactory.defaults();
    scenario("identical", f, 1, 3000, 0, 0, false);
    scenario("small-partitions", f, 2, 40, 7, 5, false);
    scenario("iblt", f, 3, 3000, 40, 25, false);
    scenario("iblt-dry-run", f, 4, 2000, 10, 30, true);
  }

  private static void scenario(
      String name, StrataEstimatorFactory f, long seed, int common, int da, int db, boolean dry) {
    SketchParams params = TestSets.params(seed, 2, 12, f.params());
    TestSets s = TestSets.random(seed, common, da, db);
    MemorySketches a = MemorySketches.of(params, f, TestSets.partitionsOf(s.a, 2), s.a);
    MemorySketches b = MemorySketches.of(params, f, TestSets.partitionsOf(s.b, 2), s.b);
    List<Envelope> toR = new ArrayList<>();
    List<Envelope> toI = new ArrayList<>();
    ReconcileSession i =
        ReconcileSession.initiator(SessionConfig.of("c", "a", seed).withDryRun(dry), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    LocalRound.run(
        i,
        r,
        e -> {
          toR.add(e);
          return e;
        },
        e -> {
          toI.add(e);
          return e;
        });
    if (!i.succeeded() || !r.succeeded()) {
      throw new IllegalStateException(
          "scenario " + name + " did not succeed: " + i.failure() + " " + r.failure());
    }
    SCENARIOS.add(new Scenario(name, a, b, seed, dry, List.copyOf(toR), List.copyOf(toI)));
  }

  private static ReconcileSession fresh(Scenario sc, boolean initiator) {
    if (initiator) {
      ReconcileSession s =
          ReconcileSession.initiator(
              SessionConfig.of("c", "a", sc.sessionId()).withDryRun(sc.dryRun()), sc.a());
      s.start();
      return s;
    }
    return ReconcileSession.responder(SessionConfig.of("c", "b", 0), sc.b());
  }

  /** Delivers a frame and drains the replies (bounded: a runaway producer is a finding). */
  private static void deliver(ReconcileSession s, Envelope e) {
    s.receive(e);
    for (int n = 0; s.poll() != null; n++) {
      if (n > 1_000_000) {
        throw new AssertionError("more than 10^6 frames queued after one input frame");
      }
    }
  }

  static boolean one(SplittableRandom r) {
    Scenario sc = SCENARIOS.get(r.nextInt(SCENARIOS.size()));
    boolean initiator = r.nextBoolean();
    List<Envelope> in = initiator ? sc.toInitiator() : sc.toResponder();
    ReconcileSession s = fresh(sc, initiator);
    int k = r.nextInt(in.size() + 1);
    while (s.poll() != null) {
      // the initiator's Hello
    }
    for (int j = 0; j < k; j++) {
      deliver(s, in.get(j));
    }
    Envelope target = in.get(Math.min(k, in.size() - 1));
    if (r.nextInt(8) == 0) { // a genuine frame of the other direction or another scenario
      Scenario o = SCENARIOS.get(r.nextInt(SCENARIOS.size()));
      List<Envelope> pool = r.nextBoolean() ? o.toInitiator() : o.toResponder();
      target = pool.get(r.nextInt(pool.size()));
    }
    Envelope bad;
    if (r.nextBoolean()) {
      try {
        bad = Envelope.parseFrom(Mutator.mutateBytes(target.toByteArray(), r));
      } catch (InvalidProtocolBufferException e) {
        FuzzLoop.clearMessage("Envelope.parseFrom", e);
        return false;
      }
    } else {
      bad = Mutator.mutateFields(target, r);
    }
    deliver(s, bad);
    if (r.nextBoolean()) {
      for (int j = k + 1; j < in.size() && !s.isFinished(); j++) {
        deliver(s, in.get(j));
      }
    }
    SessionFailure f = s.failure().orElse(null);
    if (f == null) {
      return true;
    }
    if (f.message() == null || f.message().isBlank()) {
      throw new AssertionError("failure without a message: " + f);
    }
    if (f.code() == Refusal.Code.INTERNAL && !f.byPeer()) {
      throw new AssertionError(
          "internal error on hostile input ("
              + sc.name()
              + ", "
              + (initiator ? "initiator" : "responder")
              + ", state after "
              + k
              + " frames): "
              + f.message());
    }
    return false;
  }

  @Test
  void sessionSurvivesMutatedFramesInEveryState() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(300L * Mutator.scale()),
        () -> FuzzLoop.run("ReconcileSession.receive", 7, N, SessionFuzzTest::one));
  }

  /** Regression seeds (a failing seed from the loop above goes here). */
  @ParameterizedTest
  @ValueSource(
      longs = {0L, 6018027440424185171L /* a Refusal without a message: now "(no reason given)" */})
  void regressions(long seed) {
    FuzzLoop.one("ReconcileSession.receive", seed, SessionFuzzTest::one);
  }
}
