package dev.reconcile.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.reconcile.agent.ReplicaAgent;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Agents in cluster mode find each other through the seeds and converge without peers. */
class ClusterModeTest {
  @TempDir Path dir;

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void agentsJoinThroughSeedsAndConvergeByBackgroundRounds() throws Exception {
    try (ClusterAgents c = new ClusterAgents(dir)) {
      int p0 = ClusterAgents.freePort();
      String seeds = "127.0.0.1:" + p0;
      List<ReplicaAgent> as = new ArrayList<>();
      long t0 = System.nanoTime();
      as.add(c.start(c.config("n0", p0, seeds)));
      for (int i = 1; i < 3; i++) {
        as.add(c.start(c.config("n" + i, ClusterAgents.freePort(), seeds)));
      }
      System.out.printf(
          "3 agents started and joined in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
      for (int i = 0; i < as.size(); i++) {
        for (int k = 0; k < 50; k++) {
          as.get(i).store().put(b("k" + i + "-" + k), b("v" + k));
        }
      }
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> as.stream().allMatch(a -> a.store().recordCount() == 150));
      JsonObject v = c.get(as.get(0), "/cluster", null);
      System.out.println(v.encodePrettily());
      assertThat(v.getJsonArray("members")).hasSize(3);
    }
  }
}
