package dev.reconcile.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ForegroundWritesTest {
  @TempDir Path dir;

  private LocalReplica open() {
    return LocalReplica.open(AgentConfig.fromMap(Map.of("data", dir.toString(), "node-id", "t")));
  }

  @Test
  void writesNewKeysOfPartitionZeroOnScheduleAndKeepsEachLatency() throws Exception {
    try (LocalReplica replica = open()) {
      long from = System.nanoTime();
      ForegroundWrites w = new ForegroundWrites(replica, 2_000, "w-", 100, 120, 7);
      await().atMost(Duration.ofSeconds(30)).until(() -> replica.recordCount() == 120);
      w.stop();
      long to = System.nanoTime();
      assertThat(w.writes()).isEqualTo(120);
      // 120 puts due 0.5 ms apart: the last was due 59.5 ms after the first.
      assertThat(to - from).isGreaterThanOrEqualTo(59_500_000L);

      List<ReplicaRecord> stored = new ArrayList<>();
      replica.forEachRecord(stored::add);
      SketchParams params = replica.params();
      assertThat(stored).hasSize(120);
      for (ReplicaRecord r : stored) {
        assertThat(new String(r.key(), StandardCharsets.UTF_8)).startsWith("w-");
        assertThat(HashSpec.partition(params.spec().keyHash(r.key()), params.partitionsLog2()))
            .isZero();
        assertThat(r.value()).hasSize(100);
      }

      double[] all = w.latencyMicros(from, to);
      assertThat(all).hasSize(120);
      for (int i = 0; i < all.length; i++) {
        assertThat(all[i]).isNotNegative();
        if (i > 0) {
          assertThat(all[i]).isGreaterThanOrEqualTo(all[i - 1]); // sorted
        }
      }
      assertThat(w.latencyMicros(to, to + 1_000_000_000L)).isEmpty();
      assertThat(w.latencyMicros(from - 1_000_000_000L, from)).isEmpty();
    }
  }

  @Test
  void aFailedPutIsRethrownWhenStopped() throws Exception {
    LocalReplica replica = open();
    replica.close();
    ForegroundWrites w = new ForegroundWrites(replica, 1_000, "w-", 100, 10, 7);
    Thread.sleep(500); // the first put is due at once, and throws
    assertThatThrownBy(w::stop)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("a foreground write failed");
    assertThat(w.writes()).isZero();
  }
}
