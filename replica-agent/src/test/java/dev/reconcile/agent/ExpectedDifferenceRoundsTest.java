package dev.reconcile.agent;

import static dev.reconcile.agent.AgentCluster.repair;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An agent's rounds with a peer expect the smaller difference of its last two successful rounds
 * with it: the first two rounds expect nothing, later ones the difference they then meet, in one or
 * two round trips; a round that finds the replicas equal makes the next one expect nothing.
 */
class ExpectedDifferenceRoundsTest {
  @TempDir Path dir;

  @Test
  void roundsExpectTheSmallerOfTheLastTwoDifferences() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.start("b", Map.of());
      ConvergenceTest.loadCommon(a, b, 2000);
      ConvergenceTest.load(a, "only-a-", 0, 300);
      ConvergenceTest.load(b, "only-b-", 0, 300);
      List<RoundReport> dry = new ArrayList<>();
      for (int round = 0; round < 5; round++) {
        RoundReport r = repair(a, b, true);
        assertThat(r.ok).as("round %d: %s", round, r.error).isTrue();
        assertThat(r.missingLocal + r.missingRemote).as("round %d", round).isEqualTo(600);
        dry.add(r);
      }
      assertThat(dry)
          .extracting(r -> r.expectedDifference)
          .containsExactly(0L, 0L, 600L, 600L, 600L);
      assertThat(dry.get(0).toJson().getLong("expectedDifference")).isZero();
      assertThat(dry.get(2).toJson().getLong("expectedDifference")).isEqualTo(600);
      // A right expectation: the first batch is about the need, topped up once at most (in-memory
      // sessions of this shape: 1 round trip in 270 of 300 seeds, 2 in 30, never more; without an
      // expectation 2-6, ExpectedDifferenceTest for the claim at d = 1,000).
      for (int round = 2; round < 5; round++) {
        assertThat(dry.get(round).stats.roundTrips())
            .as(
                "round %d (without an expectation: %d and %d round trips)",
                round, dry.get(0).stats.roundTrips(), dry.get(1).stats.roundTrips())
            .isLessThanOrEqualTo(2);
      }
      // A repair (600), then equal replicas (0): the next round expects min(0, 600) = 0.
      assertThat(repair(a, b).ok).isTrue();
      RoundReport equal = repair(a, b, true);
      assertThat(equal.ok).isTrue();
      assertThat(equal.missingLocal + equal.missingRemote).isZero();
      assertThat(equal.expectedDifference).isEqualTo(600);
      ConvergenceTest.load(a, "later-", 0, 10);
      RoundReport later = repair(a, b, true);
      assertThat(later.missingLocal + later.missingRemote).isEqualTo(10);
      assertThat(later.expectedDifference).isZero();
    }
  }
}
