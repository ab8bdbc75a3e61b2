package dev.reconcile.agent.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.AgentCluster;
import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.core.ReplicaRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/** Agents on loopback for the security tests, on {@code AgentCluster}'s base configuration. */
final class Agents implements AutoCloseable {
  private final Path dir;
  private final List<ReplicaAgent> agents = new ArrayList<>();

  Agents(Path dir) {
    this.dir = dir;
  }

  static Map<String, String> base(String node, Path dir) {
    return dev.reconcile.agent.AgentCluster.baseConfig(node, dir);
  }

  ReplicaAgent start(String node, Map<String, String> overrides) throws Exception {
    Map<String, String> m = base(node, dir);
    m.putAll(overrides);
    ReplicaAgent a = ReplicaAgent.start(AgentConfig.fromMap(m));
    agents.add(a);
    return a;
  }

  void stop(ReplicaAgent a) {
    a.close();
    agents.remove(a);
  }

  static HostPort peerOf(ReplicaAgent a) {
    return new HostPort("127.0.0.1", a.peerPort());
  }

  static RoundReport repair(ReplicaAgent from, ReplicaAgent to) throws Exception {
    return repair(from, peerOf(to));
  }

  static RoundReport repair(ReplicaAgent from, HostPort to) throws Exception {
    return from.repair(to, false)
        .toCompletionStage()
        .toCompletableFuture()
        .get(60, TimeUnit.SECONDS);
  }

  /**
   * A round after a disturbed one: the peer may still be ending its side of that round (the
   * initiator's report comes before the peer has read the last frames, through a proxy even later),
   * and refuses a new round as busy meanwhile. Retries such refusals for up to 10 s; any other
   * outcome is returned as it is.
   */
  static RoundReport repairOnceIdle(ReplicaAgent from, ReplicaAgent to) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      RoundReport r = repair(from, to);
      boolean busy = !r.ok && r.error != null && r.error.startsWith("peer refused (BUSY)");
      if (!busy || System.nanoTime() > deadline) {
        return r;
      }
      Thread.sleep(50);
    }
  }

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static void load(ReplicaAgent a, String prefix, int n, int valueBytes) {
    for (int i = 0; i < n; i++) {
      String v = "value-" + prefix + i + "-";
      a.store().put(b(prefix + i), b(v + "x".repeat(Math.max(0, valueBytes - v.length()))));
    }
  }

  /** Every record (tombstones included) by key. */
  static TreeMap<String, String> contents(ReplicaStore s) {
    TreeMap<String, String> m = new TreeMap<>();
    s.forEachRecord(
        (ReplicaRecord r) ->
            m.put(
                new String(r.key(), StandardCharsets.ISO_8859_1),
                (r.tombstone() ? "DEL" : new String(r.value(), StandardCharsets.ISO_8859_1))
                    + "@"
                    + Long.toUnsignedString(r.version())
                    + "/"
                    + r.origin()));
    return m;
  }

  static void assertConverged(ReplicaAgent a, ReplicaAgent b) {
    assertThat(contents(b.store())).isEqualTo(contents(a.store()));
  }

  /** Value of a counter in the agent's Prometheus scrape (0 when absent). */
  static double metric(ReplicaAgent a, String name, String labels) {
    return AgentCluster.metric(a, name, labels);
  }

  static double refusals(ReplicaAgent a, String reason) {
    return metric(a, "reconcile_peer_refusals_total", "reason=\"" + reason + "\"");
  }

  @Override
  public void close() {
    for (ReplicaAgent a : agents) {
      a.close();
    }
    agents.clear();
  }
}
