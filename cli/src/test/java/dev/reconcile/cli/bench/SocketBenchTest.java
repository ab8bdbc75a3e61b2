package dev.reconcile.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.core.PartitionOutcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The socket bench's correctness column: the lists of every round against the truth. */
class SocketBenchTest {
  @TempDir Path dir;

  @Test
  void everyRoundIsComparedWithTheTruth() throws Exception {
    List<String> log = new ArrayList<>();
    List<SocketBench.Summary> s =
        SocketBench.run(500, new long[] {1, 7}, 2, dir.resolve("work"), dir, log::add);
    assertThat(s).hasSize(4); // two modes, two d
    for (SocketBench.Summary x : s) {
      assertThat(x.correctRounds()).as(x.toString()).isEqualTo(2);
      assertThat(x.socketEqualsSession()).as(x.toString()).isTrue();
    }
    List<String> rows = Files.readAllLines(dir.resolve("socket-rounds.csv"));
    assertThat(rows.get(0)).endsWith(",found,correct");
    assertThat(rows.subList(1, rows.size())).hasSize(8).allMatch(r -> r.endsWith(",true"));
  }

  @Test
  void aWrongListIsNotTheTruth() throws Exception {
    try (ReplicaAgent a = SocketBench.start("a", dir, "rateless");
        ReplicaAgent b = SocketBench.start("b", dir, "rateless")) {
      AgentBench.load(LocalReplica.of(a), LocalReplica.of(b), 300, 6, 16);
      HostPort peer = new HostPort("127.0.0.1", b.peerPort());
      RoundReport rep = SocketBench.round(a, peer);
      assertThat(AgentBench.listedAgainstTruth(a, b, rep, 6)).isNull();

      // One element of a's list with a bit flipped names no record: 3 keys become 2.
      PartitionOutcome o =
          rep.outcomes.stream().filter(x -> x.missingRemote().length > 0).findFirst().orElseThrow();
      o.missingRemote()[0] ^= 1L << 20;
      assertThat(AgentBench.listedAgainstTruth(a, b, rep, 6))
          .contains("naming 2 keys only on a")
          .contains("the truth is 3 and 3");
      o.missingRemote()[0] ^= 1L << 20;
      assertThat(AgentBench.listedAgainstTruth(a, b, rep, 6)).isNull();

      // The right count with the sides swapped: a's keys listed as b's.
      RoundReport swapped = SocketBench.round(a, peer);
      List<PartitionOutcome> os = new ArrayList<>(swapped.outcomes);
      swapped.outcomes.clear();
      for (PartitionOutcome x : os) {
        swapped.outcomes.add(
            new PartitionOutcome(
                x.partition(),
                x.path(),
                x.missingRemote(),
                x.missingLocal(),
                x.lacksThere(),
                x.lacksHere(),
                x.partial(),
                x.estimate(),
                x.attempts(),
                x.finalShape()));
      }
      assertThat(AgentBench.listedAgainstTruth(a, b, swapped, 6)).contains("other keys");
    }
  }
}
