package dev.reconcile.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.core.ReplicaRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The stream bench's correctness check: two replicas compared record by record. */
class StreamContentsTest {
  @TempDir Path dir;

  private LocalReplica open(String node) {
    return LocalReplica.open(
        AgentConfig.fromMap(Map.of("data", dir.resolve(node).toString(), "node-id", node)));
  }

  private static boolean none(byte[] key) {
    return false;
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static List<ReplicaRecord> records(int n) {
    List<ReplicaRecord> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new ReplicaRecord(b("k" + i), b("v" + i), 1000 + i, 7, false));
    }
    return out;
  }

  @Test
  void equalReplicasDifferInNothingAndEachKindOfDifferenceCountsOnce() {
    try (LocalReplica a = open("a");
        LocalReplica x = open("b")) {
      a.putAll(records(500));
      x.putAll(records(500));
      assertThat(StreamBench.differingRecords(a, x, StreamContentsTest::none)).isZero();

      // A newer value on b, then a key a lacks, then a key b lacks: one record each.
      x.putAll(List.of(new ReplicaRecord(b("k3"), b("other"), 5000, 7, false)));
      assertThat(StreamBench.differingRecords(a, x, StreamContentsTest::none)).isEqualTo(1);
      x.putAll(List.of(new ReplicaRecord(b("extra"), b("v"), 1, 7, false)));
      assertThat(StreamBench.differingRecords(a, x, StreamContentsTest::none)).isEqualTo(2);
      a.putAll(List.of(new ReplicaRecord(b("only-a"), b("v"), 1, 7, false)));
      assertThat(StreamBench.differingRecords(a, x, StreamContentsTest::none)).isEqualTo(3);
      // b's key that the caller accepts on b alone (a client's write) is not a difference.
      Predicate<byte[]> extra = k -> new String(k, StandardCharsets.UTF_8).equals("extra");
      assertThat(StreamBench.differingRecords(a, x, extra)).isEqualTo(2);
      // a takes b's k3: only "only-a" is left.
      a.putAll(List.of(new ReplicaRecord(b("k3"), b("other"), 5000, 7, false)));
      assertThat(StreamBench.differingRecords(a, x, extra)).isEqualTo(1);
      // The same key, value and version from another origin is a difference too.
      a.putAll(List.of(new ReplicaRecord(b("o"), b("v"), 10, 7, false)));
      x.putAll(List.of(new ReplicaRecord(b("o"), b("v"), 10, 9, false)));
      assertThat(StreamBench.differingRecords(a, x, extra)).isEqualTo(2);
    }
  }
}
