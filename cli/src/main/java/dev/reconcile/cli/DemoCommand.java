package dev.reconcile.cli;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.ReplicaRecord;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code reconcile demo}: two agents on embedded RocksDB under a local folder, a divergent dataset,
 * one repair round started through the first agent's HTTP API ({@code POST /repair}), and proof
 * that the replicas match afterwards; then a new replica (a third agent, empty) catches up from the
 * second and is checked the same way.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Starts two agents on embedded RocksDB under --dir, loads a divergent dataset (missing",
      "records both ways, conflicting versions, deletes), runs one repair round (POST /repair on",
      "the first agent's HTTP API) and checks that both replicas match; then a third agent on",
      "an empty store catches up from the second (POST /repair on its own HTTP API) and is",
      "checked the same way."
    })
final class DemoCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--dir",
      paramLabel = "DIR",
      description = "data folder, wiped first (default: ${DEFAULT-VALUE})")
  Path dir = Path.of("demo-data");

  @Option(
      names = "--keys",
      paramLabel = "N",
      description = "records per replica (default: ${DEFAULT-VALUE})")
  int keys = 100_000;

  @Option(
      names = "--diff-percent",
      paramLabel = "P",
      description =
          "percent of keys differing, split between missing both ways, conflicts and deletes (default: ${DEFAULT-VALUE})")
  double diffPercent = 1.0;

  @Option(
      names = "--value-bytes",
      paramLabel = "B",
      description = "value size (default: ${DEFAULT-VALUE})")
  int valueBytes = 100;

  @Option(names = "--seed", description = "dataset seed (default: ${DEFAULT-VALUE})")
  long seed = 1;

  @Override
  public Integer call() {
    return Commands.guarded(spec.commandLine().getErr(), this::run);
  }

  private int run() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    if (keys < 1 || diffPercent < 0 || diffPercent > 100 || valueBytes < 0) {
      throw new CliException("demo: --keys >= 1, --diff-percent in [0, 100], --value-bytes >= 0");
    }
    wipe(dir);
    out.printf(
        "reconcile demo: two agents under %s, %,d records each, %.2f%% differing%n",
        dir.toAbsolutePath(), keys, diffPercent);
    ReplicaAgent a = start("a");
    try (a;
        ReplicaAgent b = start("b")) {
      LocalReplica ra = LocalReplica.of(a);
      LocalReplica rb = LocalReplica.of(b);
      long t0 = System.nanoTime();
      Divergence d = load(ra, rb);
      out.printf(
          "loaded in %s: common %,d; only on a %,d; only on b %,d; conflicting versions %,d; deleted on a %,d%n",
          Commands.seconds(System.nanoTime() - t0),
          d.common,
          d.onlyA,
          d.onlyB,
          d.conflicts,
          d.deletes);
      RoundReport r = repairOverHttp(a, "a", new HostPort("127.0.0.1", b.peerPort()));
      out.printf(
          "round: %d partitions (%d equal, %d by rateless stream, %d by IBLT, %d by digest list),"
              + " estimated difference %,d, actual %,d%n",
          r.partitions,
          r.fastPath,
          r.ratelessPartitions,
          r.ibltPartitions,
          r.fallbackPartitions,
          r.estimate,
          r.missingLocal + r.missingRemote);
      long cells = r.stats.ibltCells();
      out.printf(
          "tables: %,d cells sent in all, %d doublings, %d decode failures, %d fallbacks, %d round trips%n",
          cells,
          r.stats.doublings(),
          r.stats.decodeFailures(),
          r.stats.fallbacks(),
          r.stats.roundTrips());
      out.printf(
          "protocol bytes: %,d (coded symbols %,d, estimators %,d, IBLTs %,d, digest lists %,d,"
              + " results %,d) = %.1f B per difference; %,d with the record batches%n",
          r.stats.protocolBytes(),
          r.stats.symbolBytes(),
          r.stats.estimatorBytes(),
          r.stats.ibltBytes(),
          r.stats.digestBytes(),
          r.stats.resultBytes(),
          (double) r.stats.protocolBytes() / Math.max(1, r.missingLocal + r.missingRemote),
          r.stats.bytesTotal());
      out.printf(
          "records streamed: a->b %,d (%,d B), b->a %,d (%,d B); applied %,d, stale %,d%n",
          r.recordsSent,
          r.recordBytesSent,
          r.recordsReceived,
          r.recordBytesReceived,
          r.applied,
          r.stale);
      out.printf("time: session %d ms, whole round %d ms%n", r.sessionMillis, r.durationMillis);
      boolean match = matches(ra, rb);
      out.printf(
          "replicas %s: %,d records each, %s%n",
          match ? "MATCH" : "DIFFER",
          ra.recordCount(),
          match ? "every partition fingerprint equal" : "fingerprints differ");
      out.flush();
      return match && catchUp(out, rb, b) ? 0 : 1;
    }
  }

  /**
   * A new replica joins: an agent on an empty store catches up from {@code b} by one round started
   * on its own HTTP API, which streams every partition whole (bulk rows, partitions of enough
   * records written as table files and ingested). The launcher trains the agents' class archive
   * with this demo, so a new replica's catch-up, both sides of it, is in the archive too.
   */
  private boolean catchUp(PrintWriter out, LocalReplica rb, ReplicaAgent b) throws Exception {
    try (ReplicaAgent c = start("c")) {
      LocalReplica rc = LocalReplica.of(c);
      RoundReport r = repairOverHttp(c, "c", new HostPort("127.0.0.1", b.peerPort()));
      boolean match = matches(rb, rc);
      out.printf(
          "new replica c: caught up from b, %,d records received (%d of %d partitions whole) in %d"
              + " ms (session %d ms); %s%n",
          r.recordsReceived,
          r.bulkPartitions,
          r.partitions,
          r.durationMillis,
          r.sessionMillis,
          match ? "c MATCHES b" : "c DIFFERS from b");
      out.flush();
      return match;
    }
  }

  /**
   * Runs the round as an operator does: {@code POST /repair?peer=PEER} on {@code a}'s HTTP API
   * ({@link AgentSideHttp}, as {@code reconcile repair agent:...} does), then takes the full report
   * from the agent (the reply carries a summary). The launcher trains the agents' class archive
   * with this demo, so an agent's first request and its JSON reply are in the archive too.
   */
  private static RoundReport repairOverHttp(ReplicaAgent a, String name, HostPort peer) {
    AgentSideHttp http =
        new AgentSideHttp(
            "agent " + name,
            new HostPort("127.0.0.1", a.httpPort()),
            null,
            false,
            Duration.ofSeconds(10));
    AgentSideHttp.Response reply =
        http.postJson(
            "/repair?peer=" + AgentSideHttp.query(peer.toString()), Duration.ofMinutes(10));
    RoundReport r = a.lastReports().get(peer.toString());
    if (reply.status() != 200 || r == null || !r.ok) {
      throw new CliException(
          "repair round failed: HTTP " + reply.status() + ": " + reply.body().encode());
    }
    return r;
  }

  private ReplicaAgent start(String node) throws Exception {
    AgentConfig c =
        AgentConfig.fromMap(
            Map.of(
                "node-id", node,
                "cluster-id", "demo",
                "data", dir.resolve(node).toString(),
                "peer-listen", "127.0.0.1:0",
                "http-listen", "127.0.0.1:0",
                "repair-interval", "0",
                "purge-interval", "0"));
    return ReplicaAgent.start(c);
  }

  private record Divergence(int common, int onlyA, int onlyB, int conflicts, int deletes) {}

  /** Loads both stores: identical common records, then the divergence. */
  private Divergence load(LocalReplica a, LocalReplica b) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int diff = (int) Math.round(keys * diffPercent / 100);
    int onlyA = diff * 3 / 10;
    int onlyB = diff * 3 / 10;
    int conflicts = diff * 2 / 10;
    int deletes = diff - onlyA - onlyB - conflicts;
    int common = keys - onlyA;
    long origin = LocalReplica.origin("loader");
    long version = a.newVersion();
    List<ReplicaRecord> batch = new ArrayList<>(10_000);
    for (int i = 0; i < common; i++) {
      batch.add(new ReplicaRecord(key("key", i), value(rnd), version, origin, false));
      if (batch.size() == 10_000) {
        a.putAll(batch);
        b.putAll(batch);
        batch.clear();
      }
    }
    a.putAll(batch);
    b.putAll(batch);
    for (int i = 0; i < onlyA; i++) {
      a.put(key("only-a", i), value(rnd));
    }
    for (int i = 0; i < onlyB; i++) {
      b.put(key("only-b", i), value(rnd));
    }
    for (int i = 0; i < conflicts; i++) {
      byte[] k = key("key", rnd.nextInt(common));
      a.put(k, value(rnd));
      b.put(k, value(rnd));
    }
    for (int i = 0; i < deletes; i++) {
      a.delete(key("key", rnd.nextInt(common)));
    }
    return new Divergence(common, onlyA, onlyB, conflicts, deletes);
  }

  private static byte[] key(String prefix, int i) {
    return (prefix + "-" + i).getBytes(StandardCharsets.UTF_8);
  }

  private byte[] value(SplittableRandom rnd) {
    byte[] v = new byte[valueBytes];
    for (int i = 0; i < v.length; i++) {
      v[i] = (byte) ('a' + rnd.nextInt(26));
    }
    return v;
  }

  /** Whether the two replicas hold as many records and every partition's fingerprint is equal. */
  private static boolean matches(LocalReplica a, LocalReplica b) {
    if (a.recordCount() != b.recordCount()) {
      return false;
    }
    int n = a.sketches().params().partitions();
    for (int p = 0; p < n; p++) {
      Fingerprint x = a.sketches().fingerprint(p);
      if (!x.equals(b.sketches().fingerprint(p))) {
        return false;
      }
    }
    return true;
  }

  private static void wipe(Path dir) throws IOException {
    FileTrees.delete(dir);
    Files.createDirectories(dir);
  }
}
