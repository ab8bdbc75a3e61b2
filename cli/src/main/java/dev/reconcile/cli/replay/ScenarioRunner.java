package dev.reconcile.cli.replay;

import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.cli.replay.ScenarioReport.Check;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Replays one {@link Scenario} on a {@link Cluster}, in four phases over one {@link RunContext}:
 * {@link ClusterSetup} seeds the data directories and starts the agents behind one {@link
 * FaultProxy} per directed link, {@link TimelinePlayer} plays the timeline, {@link Settling} lets
 * the cluster converge (runner repairs, or background rounds) and {@link Verifier} checks the
 * expectations against the runner's own {@link Model}. Every replica reaches every other only
 * through the proxies, so faults hit the peer protocol and nothing else.
 */
public final class ScenarioRunner {
  /** Agent settings every scenario starts from (the scenario's {@code config} overrides them). */
  public static final Map<String, String> BASE =
      Map.of(
          "cluster-id", "replay",
          "hash-seed", "replay-seed",
          "repair-interval", "0",
          "purge-interval", "0",
          "idle-timeout", "5s");

  /** Origin of seeded (initial) records: as if an earlier writer had replicated them everywhere. */
  static final long SEED_ORIGIN = LocalReplica.origin("replay-seed-writer");

  private final RunContext ctx;

  /**
   * @param runDir an empty directory for the replicas' data and logs
   * @param log progress lines (may be null)
   */
  public ScenarioRunner(Scenario scenario, Cluster cluster, Path runDir, PrintWriter log) {
    this.ctx = new RunContext(scenario, cluster, runDir, log);
  }

  /**
   * The agent configuration of {@code replica} (without listen addresses and peers): the runner's
   * base, the scenario's config, the replica's own, minus the test hook keys ({@link #hooks}).
   */
  public static Map<String, String> agentConfig(Scenario s, String replica, Path dataDir) {
    Map<String, String> m = new LinkedHashMap<>(BASE);
    m.putAll(s.config());
    m.putAll(s.replicas().get(replica));
    m.keySet().removeAll(TestHookKeys.KEYS);
    m.put("node-id", replica);
    m.put("data", dataDir.toString());
    return m;
  }

  /** The test hooks of {@code replica}: the scenario's, then the replica's own. */
  public static AgentTestHooks hooks(Scenario s, String replica) {
    Map<String, String> m = new LinkedHashMap<>(s.config());
    m.putAll(s.replicas().get(replica));
    return TestHookKeys.parse(m);
  }

  /** Repair pairs of a topology over {@code members} (the first member is the star's hub). */
  static List<String[]> pairs(List<String> members, String via) {
    List<String[]> out = new ArrayList<>();
    int n = members.size();
    switch (via) {
      case "ring" -> {
        for (int i = 0; i < n; i++) {
          if (n > 2 || i == 0) {
            out.add(new String[] {members.get(i), members.get((i + 1) % n)});
          }
        }
      }
      case "star" -> {
        for (int i = 1; i < n; i++) {
          out.add(new String[] {members.get(0), members.get(i)});
        }
      }
      default -> {
        for (int i = 0; i < n; i++) {
          for (int j = i + 1; j < n; j++) {
            out.add(new String[] {members.get(i), members.get(j)});
          }
        }
      }
    }
    return out;
  }

  public ScenarioReport run() throws Exception {
    long wall0 = System.nanoTime();
    long convergeMillis = -1;
    TimelinePlayer timeline = new TimelinePlayer(ctx);
    try {
      new ClusterSetup(ctx).run();
      long t0 = System.nanoTime();
      timeline.run();
      if (new Settling(ctx).run()) {
        convergeMillis = (System.nanoTime() - t0) / 1_000_000;
      }
      new Verifier(ctx).run();
    } finally {
      tearDown(timeline);
    }
    return report(convergeMillis, (System.nanoTime() - wall0) / 1_000_000);
  }

  private void tearDown(TimelinePlayer timeline) {
    for (String p : ctx.paused) {
      try {
        ctx.cluster.resume(p);
      } catch (Exception e) {
        // closing anyway
      }
    }
    timeline.close();
    ctx.cluster.close();
    ctx.proxies.values().forEach(FaultProxy::close);
  }

  private ScenarioReport report(long convergeMillis, long wallMillis) {
    int failed = 0;
    long proto = 0, moved = 0, rb = 0;
    int dbl = 0, fb = 0;
    synchronized (ctx.rounds) {
      for (RoundResult r : ctx.rounds) {
        failed += r.ok() ? 0 : 1;
        proto += r.protocolBytes();
        moved += r.recordsMoved();
        rb += r.recordBytes();
        dbl += r.doublings();
        fb += r.fallbacks();
      }
    }
    var ex = ctx.s.expect();
    if (ex.minDoublings() > 0) {
      ctx.checks.add(
          new Check(
              "at least " + ex.minDoublings() + " table doublings",
              dbl >= ex.minDoublings(),
              dbl + " doublings"));
    }
    if (ex.minFallbacks() > 0) {
      ctx.checks.add(
          new Check(
              "at least " + ex.minFallbacks() + " fallbacks",
              fb >= ex.minFallbacks(),
              fb + " partitions fell back"));
    }
    return new ScenarioReport(
        ctx.s.name(),
        ctx.cluster.mode(),
        ctx.names.size(),
        ctx.initialRecords,
        ctx.model.acks(),
        List.copyOf(ctx.checks),
        ctx.rounds.size(),
        failed,
        proto,
        moved,
        rb,
        dbl,
        fb,
        convergeMillis,
        wallMillis);
  }
}
