package dev.reconcile.cli;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.store.ApplyResult;
import dev.reconcile.agent.store.Record;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.agent.store.StoreException;
import dev.reconcile.agent.store.StoreOptions;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.PartitionOutcome;
import dev.reconcile.core.SessionStats;
import dev.reconcile.core.SketchParams;
import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code reconcile repair LEFT RIGHT}: one repair round between two replicas.
 *
 * <ul>
 *   <li>{@code agent:HOST:PORT} twice (HTTP addresses): reads RIGHT's {@code GET /status} for its
 *       peer port and asks LEFT to {@code POST /repair?peer=RIGHT_HOST:PEERPORT}; LEFT runs the
 *       round over the peer protocol and answers with its report.
 *   <li>{@code rocksdb:PATH} twice (data directories of stopped agents of one cluster config):
 *       opens both stores, runs the reconciliation session between their sketches in memory, then
 *       applies each side's missing records to the other through the conflict rule.
 * </ul>
 */
@Command(
    name = "repair",
    mixinStandardHelpOptions = true,
    description = {
      "Runs one repair round between two replicas and prints what moved. LEFT and RIGHT are both",
      "agent:HOST:PORT (running agents' HTTP addresses; LEFT initiates) or both rocksdb:PATH",
      "(data directories of stopped agents, opened directly). Exit status 0 when the round",
      "succeeded, 2 otherwise."
    })
final class RepairCommand implements Callable<Integer> {
  /** Elements per {@code recordsFor}/{@code apply} chunk in the directory mode. */
  private static final int CHUNK = 10_000;

  @ParentCommand ReconcileCommand parent;

  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "LEFT", description = "agent:HOST:PORT or rocksdb:PATH")
  String left;

  @Parameters(index = "1", paramLabel = "RIGHT", description = "agent:HOST:PORT or rocksdb:PATH")
  String right;

  @Option(names = "--dry-run", description = "report what would move, move nothing")
  boolean dryRun;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      description = "agents: bearer token (the admin token: repair is a write)")
  String token;

  @Option(names = "--https", description = "agents: their HTTP API is HTTPS (http-tls)")
  boolean https;

  @Option(
      names = "--timeout",
      paramLabel = "SECONDS",
      description = "agents: longest wait for the round (default: ${DEFAULT-VALUE})")
  int timeoutSeconds = 600;

  @Option(
      names = "--hash-seed",
      paramLabel = "SECRET",
      description = "directories: the agents' hash-seed (default: the agent default)")
  String hashSeed = AgentConfig.DEFAULTS.get("hash-seed");

  @Option(
      names = "--partitions-log2",
      paramLabel = "N",
      description = "directories: the agents' partitions-log2 (default: ${DEFAULT-VALUE})")
  int partitionsLog2 = Integer.parseInt(AgentConfig.DEFAULTS.get("partitions-log2"));

  @Option(
      names = "--iblt-max-log2",
      paramLabel = "N",
      description = "directories: the agents' iblt-max-log2 (default: ${DEFAULT-VALUE})")
  int ibltMaxLog2 = Integer.parseInt(AgentConfig.DEFAULTS.get("iblt-max-log2"));

  @Override
  public Integer call() {
    return Commands.guarded(spec.commandLine().getErr(), this::run);
  }

  private int run() throws Exception {
    boolean leftAgent = left.startsWith(AgentSideHttp.PREFIX);
    boolean rightAgent = right.startsWith(AgentSideHttp.PREFIX);
    boolean leftDir = left.startsWith("rocksdb:");
    boolean rightDir = right.startsWith("rocksdb:");
    if (leftAgent && rightAgent) {
      return agents();
    }
    if (leftDir && rightDir) {
      return directories();
    }
    for (String s : List.of(left, right)) {
      if (!s.startsWith(AgentSideHttp.PREFIX) && !s.startsWith("rocksdb:")) {
        throw new CliException(
            s
                + ": expected agent:HOST:PORT (a running agent's HTTP address) or rocksdb:PATH (a stopped agent's data directory)");
      }
    }
    throw new CliException(
        "repair: both sides must be agents or both directories (got "
            + left
            + " and "
            + right
            + ")");
  }

  // ------------------------------------------------------------------------------------- agents

  private int agents() {
    PrintWriter out = spec.commandLine().getOut();
    Duration connect = Duration.ofSeconds(10);
    AgentSideHttp l =
        new AgentSideHttp(left, AgentSideHttp.parse(left, false), token, https, connect);
    AgentSideHttp r =
        new AgentSideHttp(right, AgentSideHttp.parse(right, false), token, https, connect);
    JsonObject status = r.getJson("/status", connect);
    Integer peerPort = status.getInteger("peerPort");
    if (peerPort == null || peerPort <= 0) {
      throw new CliException(right + ": /status has no peerPort (is it a reconcile agent?)");
    }
    HostPort peer = new HostPort(r.address().host(), peerPort);
    String path =
        "/repair?peer=" + AgentSideHttp.query(peer.toString()) + (dryRun ? "&dryRun=true" : "");
    AgentSideHttp.Response resp = l.postJson(path, Duration.ofSeconds(Math.max(1, timeoutSeconds)));
    JsonObject rep = resp.body();
    if (resp.status() / 100 != 2 || !Boolean.TRUE.equals(rep.getBoolean("ok"))) {
      String why = rep.getString("error", "HTTP " + resp.status());
      throw new CliException(
          "repair " + left + " -> " + right + " failed: " + why.replace('\n', ' '));
    }
    printAgentReport(out, rep, status.getString("nodeId", right));
    out.flush();
    return 0;
  }

  private void printAgentReport(PrintWriter out, JsonObject j, String rightNode) {
    long ml = j.getLong("missingLocal", 0L);
    long mr = j.getLong("missingRemote", 0L);
    out.printf(
        "%s %s with %s (node %s): %d partitions, %d equal, %d by IBLT, %d by digest list; difference %,d (estimated %,d)%n",
        dryRun ? "dry run:" : "repaired:",
        left,
        right,
        rightNode,
        j.getInteger("partitions", 0),
        j.getInteger("fastPath", 0),
        j.getInteger("ibltPartitions", 0),
        j.getInteger("fallbackPartitions", 0),
        ml + mr,
        j.getLong("estimatedDifference", 0L));
    if (dryRun) {
      out.printf(
          "would send left -> right %,d records, right -> left %,d records; nothing moved%n",
          mr, ml);
    } else {
      out.printf(
          "records left -> right %,d (%,d B), right -> left %,d (%,d B); applied on left %,d, stale %,d, duplicate %,d%n",
          j.getLong("recordsSent", 0L),
          j.getLong("recordBytesSent", 0L),
          j.getLong("recordsReceived", 0L),
          j.getLong("recordBytesReceived", 0L),
          j.getLong("applied", 0L),
          j.getLong("stale", 0L),
          j.getLong("duplicate", 0L));
    }
    JsonObject p = j.getJsonObject("protocol");
    if (p != null) {
      out.printf(
          "protocol: %,d bytes (estimator %,d, IBLT %,d, digest lists %,d, results %,d), %d round trips, %d doublings, %d fallbacks%n",
          p.getLong("bytesSent", 0L) + p.getLong("bytesReceived", 0L),
          p.getLong("estimatorBytes", 0L),
          p.getLong("ibltBytes", 0L),
          p.getLong("digestBytes", 0L),
          p.getLong("resultBytes", 0L),
          p.getInteger("roundTrips", 0),
          p.getInteger("doublings", 0),
          p.getInteger("fallbacks", 0));
    }
    out.printf(
        "time: session %s ms, round %s ms%n",
        j.getValue("sessionMillis"), j.getValue("durationMillis"));
    if (!j.getJsonArray("stillDiffering", new io.vertx.core.json.JsonArray()).isEmpty()) {
      out.println(
          "partitions still differing after the round (concurrent writes?): "
              + j.getJsonArray("stillDiffering").encode());
    }
  }

  // -------------------------------------------------------------------------------- directories

  private int directories() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    Path lp = dirOf(left);
    Path rp = dirOf(right);
    if (lp.toAbsolutePath().normalize().equals(rp.toAbsolutePath().normalize())) {
      throw new CliException("repair: " + left + " and " + right + " are the same directory");
    }
    EstimatorFactory estimators = parent.estimators();
    SketchParams params = params(estimators);
    try (ReplicaStore a = open(left, lp, params, estimators);
        ReplicaStore b = open(right, rp, params, estimators)) {
      long t0 = System.nanoTime();
      LocalReconciliation rec = LocalReconciliation.run(a.sketches(), b.sketches());
      long sessionNanos = System.nanoTime() - t0;
      List<PartitionOutcome> outcomes = rec.outcomes();
      long toRight = 0;
      long toLeft = 0;
      int equal = 0;
      int iblt = 0;
      int lists = 0;
      for (PartitionOutcome o : outcomes) {
        toRight += o.missingRemote().length;
        toLeft += o.missingLocal().length;
        switch (o.path()) {
          case FAST -> equal++;
          case IBLT -> iblt++;
          case FALLBACK -> lists++;
        }
      }
      out.printf(
          "%s %s with %s: %d partitions, %d equal, %d by IBLT, %d by digest list; difference %,d%n",
          dryRun ? "dry run:" : "repaired:",
          left,
          right,
          outcomes.size(),
          equal,
          iblt,
          lists,
          toRight + toLeft);
      SessionStats st = rec.stats();
      out.printf(
          "protocol (in memory): %,d bytes, %d round trips, %d doublings, %d fallbacks; session %s%n",
          st.bytesTotal(),
          st.roundTrips(),
          st.doublings(),
          st.fallbacks(),
          Commands.seconds(sessionNanos));
      if (dryRun) {
        out.printf(
            "would copy left -> right %,d records, right -> left %,d records; nothing moved%n",
            toRight, toLeft);
        out.flush();
        return 0;
      }
      // Read both directions before writing either, so that each side ships what it held.
      List<List<Record>> forRight = new ArrayList<>();
      List<List<Record>> forLeft = new ArrayList<>();
      for (PartitionOutcome o : outcomes) {
        fetch(a, o.partition(), o.missingRemote(), forRight);
        fetch(b, o.partition(), o.missingLocal(), forLeft);
      }
      Moved r = apply(b, forRight);
      Moved l = apply(a, forLeft);
      out.printf(
          "records left -> right %,d (applied %,d, stale %,d), right -> left %,d (applied %,d, stale %,d)%n",
          r.records, r.applied, r.stale, l.records, l.applied, l.stale);
      List<Integer> differing = new ArrayList<>();
      for (int p = 0; p < params.partitions(); p++) {
        if (!a.sketches().fingerprint(p).equals(b.sketches().fingerprint(p))) {
          differing.add(p);
        }
      }
      if (!differing.isEmpty()) {
        throw new CliException(
            "repair: partitions " + differing + " still differ after applying the records");
      }
      out.printf(
          "replicas match: every partition fingerprint equal, %,d and %,d records%n",
          a.recordCount(), b.recordCount());
      out.flush();
      return 0;
    }
  }

  private record Moved(long records, long applied, long stale) {}

  private static void fetch(
      ReplicaStore s, int partition, long[] elements, List<List<Record>> into) {
    for (int from = 0; from < elements.length; from += CHUNK) {
      into.add(
          s.recordsFor(
              partition,
              Arrays.copyOfRange(elements, from, Math.min(elements.length, from + CHUNK))));
    }
  }

  private static Moved apply(ReplicaStore s, List<List<Record>> batches) {
    long records = 0;
    long applied = 0;
    long stale = 0;
    for (List<Record> b : batches) {
      ApplyResult r = s.apply(b);
      records += b.size();
      applied += r.applied();
      stale += r.stale();
    }
    return new Moved(records, applied, stale);
  }

  private SketchParams params(EstimatorFactory estimators) {
    Map<String, String> m = new HashMap<>();
    m.put("node-id", "cli");
    m.put("hash-seed", hashSeed);
    m.put("partitions-log2", Integer.toString(partitionsLog2));
    m.put("iblt-max-log2", Integer.toString(ibltMaxLog2));
    try {
      return ReplicaAgent.sketchParams(AgentConfig.fromMap(m), estimators);
    } catch (RuntimeException e) {
      throw new CliException("repair: " + Commands.oneLine(e));
    }
  }

  private static Path dirOf(String side) {
    String p = side.substring("rocksdb:".length());
    if (p.isEmpty()) {
      throw new CliException(side + ": empty path");
    }
    Path dir = Path.of(p);
    if (!Files.isDirectory(dir) || !Files.exists(dir.resolve("CURRENT"))) {
      throw new CliException(side + ": not a RocksDB directory (no CURRENT file)");
    }
    return dir;
  }

  /** Opens an agent's store for writing under the node id it was created with. */
  private static ReplicaStore open(
      String side, Path dir, SketchParams params, EstimatorFactory estimators) {
    String node = storedNodeId(side, dir);
    try {
      return ReplicaStore.open(
          StoreOptions.builder(dir, params, estimators).nodeId(node).readOnly(false).build());
    } catch (StoreException e) {
      String m = Commands.oneLine(e);
      if (m.contains("lock")) {
        m += " (is an agent running on it? use agent:HOST:PORT for running agents)";
      }
      throw new CliException(side + ": " + m);
    }
  }

  /** The node id in the store's meta column family, read with a read-only open. */
  private static String storedNodeId(String side, Path dir) {
    RocksDB.loadLibrary();
    List<byte[]> families;
    try (Options o = new Options()) {
      families = RocksDB.listColumnFamilies(o, dir.toString());
    } catch (RocksDBException e) {
      throw new CliException(side + ": cannot read the column families: " + e.getMessage());
    }
    int meta = -1;
    List<ColumnFamilyDescriptor> ds = new ArrayList<>();
    for (int i = 0; i < families.size(); i++) {
      ds.add(new ColumnFamilyDescriptor(families.get(i)));
      if (Arrays.equals(families.get(i), "meta".getBytes(StandardCharsets.US_ASCII))) {
        meta = i;
      }
    }
    if (meta < 0) {
      throw new CliException(
          side + ": not a reconcile agent's data directory (no meta column family)");
    }
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions o = new DBOptions();
        RocksDB db = RocksDB.openReadOnly(o, dir.toString(), ds, handles)) {
      try {
        byte[] id = db.get(handles.get(meta), "node_id".getBytes(StandardCharsets.US_ASCII));
        if (id == null) {
          throw new CliException(side + ": the store has no node id in its meta column family");
        }
        return new String(id, StandardCharsets.UTF_8);
      } finally {
        handles.forEach(ColumnFamilyHandle::close);
      }
    } catch (RocksDBException e) {
      throw new CliException(side + ": cannot open: " + e.getMessage());
    }
  }
}
