package dev.reconcile.agent;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A round's worker steps drain at most what the round has drained so far, from 64 KiB up to 8 MiB:
 * a repair stream's first batches leave one by one instead of after a whole window of them.
 */
class PeerRoundDrainTest {
  private static final long MIB = 1L << 20;

  @Test
  void aRoundStartsWithSmallStepsAndDoublesUpToTheBudget() {
    assertThat(PeerRound.drainBudget(0)).isEqualTo(64L << 10);
    // After a session's few KiB: one frame, however large (a step drains at least one).
    assertThat(PeerRound.drainBudget(20_000)).isEqualTo(64L << 10);
    // Each step may drain what came before it: the budget doubles with every full step.
    long drained = 20_000;
    int steps = 0;
    while (PeerRound.drainBudget(drained) < 8 * MIB) {
      drained += Math.max(PeerRound.drainBudget(drained), MIB); // a step of 1 MiB batches
      steps++;
    }
    assertThat(steps).as("steps before the full budget").isBetween(3, 5);
    assertThat(PeerRound.drainBudget(drained)).isEqualTo(8 * MIB);
    assertThat(PeerRound.drainBudget(1L << 40)).isEqualTo(8 * MIB);
  }
}
