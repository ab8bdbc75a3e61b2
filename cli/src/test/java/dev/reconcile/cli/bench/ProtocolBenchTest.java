package dev.reconcile.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bench's correctness column: every mode and baseline is compared with the truth element by
 * element, so a listing of the right size with a wrong element is counted wrong.
 */
class ProtocolBenchTest {
  private static final ProtocolBench.Config C =
      new ProtocolBench.Config(new long[] {5000}, new long[] {40}, 1, 2, 12, 10, 10, 7);

  @Test
  void everyModeAndBaselineListsTheTrueDifference() {
    for (long seed = 1; seed <= 5; seed++) {
      ProtocolBench.Sets s = ProtocolBench.Sets.random(seed, 5000, 40, 2);
      List<ProtocolBench.Trial> trials = ProtocolBench.runTrial(C, s, 40);
      assertThat(trials.stream().map(t -> t.mode)).containsExactlyElementsOf(ProtocolBench.MODES);
      for (ProtocolBench.Trial t : trials) {
        assertThat(t.correct).as("seed %d, %s", seed, t.mode).isTrue();
        assertThat(t.found).as("seed %d, %s", seed, t.mode).isEqualTo(40);
      }
    }
  }

  @Test
  void aListOfTheRightSizeWithOneWrongElementIsWrong() {
    ProtocolBench.Sets s = ProtocolBench.Sets.random(3, 1000, 10, 2);
    long[][] truth = ProtocolBench.difference(s.a, s.b);
    assertThat(s.isTruth(truth[0], truth[1])).isTrue();
    long[] wrong = truth[0].clone();
    wrong[0] ^= 1; // same count, one element differs
    Arrays.sort(wrong);
    assertThat(s.isTruth(wrong, truth[1])).isFalse();
    assertThat(s.isTruth(truth[1], truth[0])).isFalse(); // sides swapped
  }

  @Test
  void merkleLeavesHoldTheDifference() {
    ProtocolBench.Sets s = ProtocolBench.Sets.random(4, 2000, 25, 2);
    MerkleBaseline.Cost m = MerkleBaseline.compare(s.a, s.a.length, s.b, s.b.length, 8);
    long[][] found =
        ProtocolBench.difference(m.differingLeafElementsA(), m.differingLeafElementsB());
    assertThat(s.isTruth(found[0], found[1])).isTrue();
    assertThat(m.differingLeafElementsA().length).isLessThan(s.a.length);
  }

  @Test
  void quantilesByNearestRank() {
    double[] xs = {5, 1, 4, 2, 3, 6, 7, 8, 9, 10};
    assertThat(Medians.quantile(xs, 0.9)).isEqualTo(9);
    assertThat(Medians.quantile(xs, 0.5)).isEqualTo(5);
    assertThat(Medians.quantile(new double[] {4}, 0.9)).isEqualTo(4);
  }
}
