package dev.reconcile.agent;

import static dev.reconcile.agent.AgentCluster.assertConverged;
import static dev.reconcile.agent.AgentCluster.contents;
import static dev.reconcile.agent.AgentCluster.repair;
import static dev.reconcile.agent.ConvergenceTest.b;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.ReplicaRecord;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Rounds between agents that purge tombstones at different times (purging on, staggered): a
 * tombstone past the grace period neither comes back to the replica that purged it nor bounces
 * between replicas, and rounds settle instead of moving it every time.
 */
class TombstoneGraceRoundsTest {
  private static final String GRACE = "3s";

  @TempDir Path dir;

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  private static String describe(RoundReport r) {
    return "ok="
        + r.ok
        + " error="
        + r.error
        + " sent="
        + r.recordsSent
        + " received="
        + r.recordsReceived
        + " stillDiffering="
        + r.stillDiffering;
  }

  /**
   * {@code a} purges every 100 ms; {@code b} purges never (0) or much later (1h). After {@code a}
   * purged, rounds in both directions, each followed by a pause in which {@code a} purges again.
   */
  @ParameterizedTest
  @ValueSource(strings = {"0", "1h"})
  void aPurgedTombstoneDoesNotComeBackAndRoundsSettle(String laterPurge) throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of("tombstone-grace", GRACE, "purge-interval", "100ms"));
      ReplicaAgent b = c.start("b", Map.of("tombstone-grace", GRACE, "purge-interval", laterPurge));
      ConvergenceTest.load(a, "k", 0, 40);
      assertThat(repair(a, b).ok).isTrue();
      for (int i = 0; i < 10; i++) {
        a.store().delete(b("k" + i));
      }
      RoundReport spread = repair(a, b);
      assertThat(spread.ok).as(describe(spread)).isTrue();
      assertThat(b.store().get(b("k0")).orElseThrow().tombstone())
          .as("b received the tombstones within the grace")
          .isTrue();
      await("a's purge", () -> a.store().stats().purgedTombstones() >= 10);

      List<String> rounds = new ArrayList<>();
      int quiet = 0;
      for (int i = 0; i < 8 && quiet < 3; i++) {
        RoundReport r = i % 2 == 0 ? repair(a, b) : repair(b, a);
        rounds.add(describe(r));
        assertThat(r.ok).as("round %d: %s", i, rounds).isTrue();
        boolean moved = r.recordsSent + r.recordsReceived > 0 || !r.stillDiffering.isEmpty();
        quiet = moved ? 0 : quiet + 1;
        Thread.sleep(300); // a's purge runs in between, as it would between background rounds
      }
      assertThat(quiet).as("three rounds in a row move nothing: %s", rounds).isEqualTo(3);
      for (int i = 0; i < 10; i++) {
        assertThat(a.store().get(b("k" + i))).as("k%d on a", i).isEmpty();
        assertThat(b.store().get(b("k" + i))).as("k%d on b", i).isEmpty();
      }
      assertThat(contents(a.store())).hasSize(30);
      assertConverged(a, b);
    }
  }

  /**
   * {@code c} was away while {@code k} was deleted and still holds the old live value; {@code a}
   * purged the tombstone, {@code b} (which never purges) still holds it, past the grace. A round
   * between {@code c} and {@code b} deletes the old value on {@code c}, and {@code b} does not take
   * it either, although {@code b} drops its past-grace tombstone after the round.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aReturningReplicasOldValueIsDeletedNotResurrected(boolean returningInitiates)
      throws Exception {
    try (AgentCluster cl = new AgentCluster(dir)) {
      ReplicaAgent a = cl.start("a", Map.of("tombstone-grace", GRACE, "purge-interval", "100ms"));
      ReplicaAgent b = cl.start("b", Map.of("tombstone-grace", GRACE, "purge-interval", "0"));
      ReplicaAgent c = cl.start("c", Map.of("tombstone-grace", GRACE, "purge-interval", "0"));
      ConvergenceTest.load(a, "k", 0, 20);
      assertThat(repair(a, b).ok).isTrue();
      assertThat(repair(a, c).ok).isTrue();
      a.store().delete(b("k3"));
      assertThat(repair(a, b).ok).isTrue();
      await("a's purge", () -> a.store().stats().purgedTombstones() >= 1);
      assertThat(b.store().pastGrace(b.store().get(b("k3")).orElseThrow())).isTrue();

      RoundReport r = returningInitiates ? repair(c, b) : repair(b, c);
      assertThat(r.ok).as(describe(r)).isTrue();
      for (ReplicaAgent x : List.of(a, c)) {
        assertThat(x.store().get(b("k3"))).as("k3 on %s", x.config().nodeId()).isEmpty();
      }
      // b never took c's old value: at most its own tombstone, which it drops after its side of
      // the round; a responder's side ends before that drop (PeerService.afterRound), so the
      // initiator's answer may come first
      assertThat(b.store().get(b("k3")).map(ReplicaRecord::tombstone))
          .as("k3 on b")
          .isNotEqualTo(Optional.of(false));
      await("b drops the tombstone", () -> b.store().get(b("k3")).isEmpty());
      assertThat(b.store().stats().purgedTombstones()).isGreaterThanOrEqualTo(1);
      RoundReport again = repair(c, a);
      assertThat(again.ok).isTrue();
      assertThat(again.recordsSent + again.recordsReceived).as(describe(again)).isZero();
      assertConverged(a, b, c);
    }
  }
}
