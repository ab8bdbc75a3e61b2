package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import dev.reconcile.estimator.EstimatorKinds;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The session run in the CLI against live agents through their read-only sketch endpoints. */
class RemoteSketchesTest {
  @TempDir Path dir;

  private static final Duration T = Duration.ofSeconds(30);

  private ReplicaAgent start(String node, String seed) throws Exception {
    Map<String, String> m = dev.reconcile.agent.AgentCluster.baseConfig(node, dir);
    m.put("hash-seed", seed);
    return ReplicaAgent.start(AgentConfig.fromMap(m));
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static RemoteSketches remote(ReplicaAgent a, SketchParams p, EstimatorFactory f) {
    AgentSideHttp http =
        new AgentSideHttp(
            "agent:127.0.0.1:" + a.httpPort(),
            AgentSideHttp.parse("agent:127.0.0.1:" + a.httpPort(), false),
            null,
            false,
            T);
    return RemoteSketches.open(http, p, f, T);
  }

  @Test
  void sessionOverHttpFindsWhatTheStoresDiffer() throws Exception {
    EstimatorFactory f = EstimatorKinds.defaults();
    try (ReplicaAgent a = start("a", "s1");
        ReplicaAgent c = start("c", "s1")) {
      LocalReplica ra = LocalReplica.of(a);
      LocalReplica rc = LocalReplica.of(c);
      long origin = LocalReplica.origin("loader");
      long version = ra.newVersion();
      List<ReplicaRecord> common = new ArrayList<>();
      for (int i = 0; i < 20_000; i++) {
        common.add(new ReplicaRecord(b("k" + i), b("v" + i), version, origin, false));
      }
      ra.putAll(common);
      rc.putAll(common);
      TreeSet<String> onlyA = new TreeSet<>();
      for (int i = 0; i < 300; i++) {
        ra.put(b("only-a-" + i), b("x"));
        onlyA.add("only-a-" + i);
        rc.put(b("only-c-" + i), b("y"));
      }
      ra.put(b("k7"), b("changed on a"));
      onlyA.add("k7");

      SketchParams p = ReplicaAgent.sketchParams(a.config(), f);
      LocalReconciliation direct = LocalReconciliation.run(ra.sketches(), rc.sketches());
      LocalReconciliation viaHttp = LocalReconciliation.run(remote(a, p, f), remote(c, p, f));
      assertThat(viaHttp.leftOnly()).isEqualTo(direct.leftOnly()).hasSize(301);
      assertThat(viaHttp.rightOnly()).isEqualTo(direct.rightOnly()).hasSize(301);
      assertThat(viaHttp.stats().estimatorBytes()).isPositive();
      // One side in memory-backed store form, the other remote: same answer.
      LocalReconciliation mixed = LocalReconciliation.run(ra.sketches(), remote(c, p, f));
      assertThat(mixed.leftOnly()).isEqualTo(direct.leftOnly());

      AgentSide side = new AgentSide("agent:127.0.0.1:" + a.httpPort(), null, T);
      side.sketches(p, f);
      KeyList keys = side.keysOf(viaHttp.leftOnly());
      TreeSet<String> got = new TreeSet<>();
      for (int i = 0; i < keys.size(); i++) {
        got.add(new String(keys.key(i), StandardCharsets.UTF_8));
      }
      assertThat(got).isEqualTo(onlyA);
      assertThat(side.describe()).contains("agent a").contains("20300 records");
    }
  }

  @Test
  void mismatchedParametersAndBadRequestsAreClearErrors() throws Exception {
    EstimatorFactory f = EstimatorKinds.defaults();
    try (ReplicaAgent a = start("a", "s1")) {
      SketchParams other =
          ReplicaAgent.sketchParams(
              AgentConfig.fromMap(
                  Map.of(
                      "node-id",
                      "x",
                      "hash-seed",
                      "s2",
                      "partitions-log2",
                      "3",
                      "iblt-max-log2",
                      "12")),
              f);
      assertThatThrownBy(() -> remote(a, other, f))
          .isInstanceOf(CliException.class)
          .hasMessageContaining("sketch parameters")
          .hasMessageContaining("--hash-seed");
      SketchParams p = ReplicaAgent.sketchParams(a.config(), f);
      RemoteSketches r = remote(a, p, f);
      assertThatThrownBy(() -> r.iblt(8, new IbltShape(3, 1, 4)))
          .isInstanceOf(CliException.class)
          .hasMessageContaining("answered 400")
          .hasMessageContaining("outside [0, 8)");
      assertThatThrownBy(() -> r.iblt(0, new IbltShape(3, 1, 13)))
          .isInstanceOf(CliException.class)
          .hasMessageContaining("cannot be folded");
      assertThat(r.contains(0, 42L)).isFalse();
    }
  }
}
