package dev.reconcile.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster-mode simulation's claims at a size a unit test affords (N = 16 and 128; the docs
 * table runs 10, 100 and 1,000): every write reaches every replica; cluster mode starts at most
 * fanout + 1 / gossip-every rounds per replica per interval and its spread grows like log N, its
 * bytes per replica stay flat while all-pairs' grow with N.
 */
class GossipSimulationTest {
  static final long SEED = 20261201L;
  @TempDir Path dir;

  static GossipSimulation.Config config() {
    return new GossipSimulation.Config(
        new int[] {16, 128}, 10, 200, 2, 0.05, 2, 10, 4, 2, 10, 200, 16, 300, true, SEED);
  }

  static GossipSimulation.Row row(List<GossipSimulation.Row> rs, String policy, int n) {
    return rs.stream()
        .filter(r -> r.policy().equals(policy) && r.n() == n)
        .findFirst()
        .orElseThrow();
  }

  @Test
  void spreadGrowsLikeLogNAndCostPerReplicaStaysFlat() throws Exception {
    GossipSimulation.Config c = config();
    List<GossipSimulation.Row> rows = new GossipSimulation(c).run(System.out::println);
    System.out.print(GossipReport.describe(rows));
    for (GossipSimulation.Row r : rows) {
      assertThat(r.unspread()).as("seed %d: %s", SEED, r).isZero();
      assertThat(r.writes()).isEqualTo(20);
    }
    GossipSimulation.Row c16 = row(rows, "cluster", 16);
    GossipSimulation.Row c128 = row(rows, "cluster", 128);
    GossipSimulation.Row a16 = row(rows, "all-pairs", 16);
    GossipSimulation.Row a128 = row(rows, "all-pairs", 128);
    // The policy's bound: fanout differing rounds plus one gossip round per gossip interval.
    for (GossipSimulation.Row r : List.of(c16, c128)) {
      assertThat(r.roundsPerReplica()).as("seed %d", SEED).isLessThanOrEqualTo(2 + 1.0 / 10);
    }
    assertThat(a16.roundsPerReplica()).isEqualTo(15.0);
    assertThat(a128.roundsPerReplica()).isEqualTo(127.0);
    // Spread: within 3 log2 N intervals, and 8x the replicas cost a bounded number more.
    assertThat(c128.spreadMax()).as("seed %d", SEED).isLessThanOrEqualTo(3 * 7);
    assertThat(c128.spreadMedian()).isLessThanOrEqualTo(c16.spreadMedian() + 2 * 3);
    // Bytes per replica per interval: flat for cluster mode, about linear in N for all pairs.
    assertThat(c128.bytesPerReplica() / c16.bytesPerReplica())
        .as("seed %d: cluster bytes ratio", SEED)
        .isLessThan(2.0);
    assertThat(a128.bytesPerReplica() / a16.bytesPerReplica())
        .as("seed %d: all-pairs bytes ratio", SEED)
        .isGreaterThan(4.0);
    GossipReport.write(rows, c, dir);
    assertThat(Files.size(dir.resolve("gossip.csv"))).isPositive();
    assertThat(Files.size(dir.resolve("gossip-spread.png"))).isPositive();
    assertThat(Files.size(dir.resolve("gossip-cost.png"))).isPositive();
  }
}
