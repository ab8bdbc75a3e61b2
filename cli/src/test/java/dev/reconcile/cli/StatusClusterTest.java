package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.reconcile.agent.AgentCluster;
import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.ReplicaAgent;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code reconcile status --cluster} against two agents in cluster mode in this JVM. */
class StatusClusterTest {
  @TempDir Path dir;

  private ReplicaAgent start(String node, int port, int seed) throws Exception {
    Map<String, String> m = dev.reconcile.agent.AgentCluster.baseConfig(node, dir);
    m.put("cluster-listen", "127.0.0.1:" + port);
    m.put("cluster-seeds", "127.0.0.1:" + seed);
    m.put("repair-interval", "200ms");
    m.put("read-token", "reader");
    return ReplicaAgent.start(AgentConfig.fromMap(m));
  }

  @Test
  void printsMembersAndWhoDiffers() throws Exception {
    int p0 = AgentCluster.clusterPort("127.0.0.1");
    try (ReplicaAgent a = start("alpha", p0, p0);
        ReplicaAgent b = start("beta", AgentCluster.clusterPort("127.0.0.1"), p0)) {
      for (int i = 0; i < 10; i++) {
        b.store().put(("k" + i).getBytes(StandardCharsets.UTF_8), new byte[] {1});
      }
      String http = "127.0.0.1:" + a.httpPort();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> a.store().recordCount() == 10 && b.store().recordCount() == 10);
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                Cli.Result r = Cli.run("status", "--cluster", http, "--token", "reader");
                assertThat(r.status()).as("stderr: %s", r.err()).isZero();
                assertThat(r.out())
                    .contains("as seen by alpha: 2 members, 0 differ from alpha")
                    // alpha started first: the oldest member, the coordinator
                    .containsPattern("alpha \\* \\(c\\)\\s+127\\.0\\.0\\.1:" + a.peerPort())
                    .containsPattern("beta\\s+127\\.0\\.0\\.1:" + b.peerPort())
                    .doesNotContain("did not answer")
                    .containsPattern("beta .* none\\s+ok ");
              });
      Cli.Result noToken = Cli.run("status", "--cluster", http);
      assertThat(noToken.status()).isNotZero();
      assertThat(noToken.err()).contains("/cluster refused (401").contains("pass --token");
      Cli.Result json = Cli.run("status", "--cluster", http, "--token", "reader", "--json");
      assertThat(json.out()).contains("\"members\"").contains("\"beta\"");
      Cli.Result both = Cli.run("status", http, "--cluster", http);
      assertThat(both.status()).isEqualTo(2);
      assertThat(both.err()).contains("mutually exclusive");
    }
  }

  @Test
  void marksTheCoordinatorAndSaysWhenEntriesAreNotFresh() {
    JsonObject view =
        new JsonObject()
            .put("nodeId", "n1")
            .put("clusterName", "c")
            .put("now", 10_000L)
            .put("coordinator", "m2")
            .put("entriesFresh", false)
            .put(
                "members",
                new JsonArray()
                    .add(new JsonObject().put("member", "m1").put("self", true).put("nodeId", "n1"))
                    .add(new JsonObject().put("member", "m2").put("nodeId", "n2")));
    StringWriter w = new StringWriter();
    ClusterTable.print(new PrintWriter(w, true), view);
    assertThat(w.toString())
        .containsPattern("(?m)^n1 \\*\\s")
        .containsPattern("(?m)^n2 \\(c\\)\\s")
        .contains("their last known entries are shown");
    StringWriter fresh = new StringWriter();
    ClusterTable.print(new PrintWriter(fresh, true), view.copy().put("entriesFresh", true));
    assertThat(fresh.toString()).doesNotContain("last known entries");
  }

  @Test
  void saysWhenClusterModeIsOff() throws Exception {
    Map<String, String> m = dev.reconcile.agent.AgentCluster.baseConfig("solo", dir);
    try (ReplicaAgent a = ReplicaAgent.start(AgentConfig.fromMap(m))) {
      Cli.Result r = Cli.run("status", "--cluster", "127.0.0.1:" + a.httpPort());
      assertThat(r.status()).isNotZero();
      assertThat(r.err()).contains("404").contains("cluster mode is off");
    }
  }
}
