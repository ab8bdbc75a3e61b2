package dev.reconcile.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Background rounds at an interval repair without being asked. */
class SchedulerTest {
  @TempDir Path dir;

  @Test
  void backgroundRoundsConvergeBothWays() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent b = c.start("b", Map.of());
      ReplicaAgent a =
          c.start(
              "a",
              Map.of(
                  "peers",
                  "127.0.0.1:" + b.peerPort(),
                  "repair-interval",
                  "200ms",
                  "repair-jitter",
                  "0.5"));
      for (int i = 0; i < 200; i++) {
        a.store()
            .put(("a" + i).getBytes(StandardCharsets.UTF_8), "x".getBytes(StandardCharsets.UTF_8));
        b.store()
            .put(("b" + i).getBytes(StandardCharsets.UTF_8), "y".getBytes(StandardCharsets.UTF_8));
      }
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> a.store().recordCount() == 400 && b.store().recordCount() == 400);
      AgentCluster.assertConverged(a, b);
      // Later writes are picked up by later rounds.
      b.store().put("late".getBytes(StandardCharsets.UTF_8), "z".getBytes(StandardCharsets.UTF_8));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> a.store().get("late".getBytes(StandardCharsets.UTF_8)).isPresent());
      assertThat(a.lastReports()).containsKey("127.0.0.1:" + b.peerPort());
    }
  }
}
