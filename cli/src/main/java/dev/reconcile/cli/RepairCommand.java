package dev.reconcile.cli;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.Durations;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.KeyCodec;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundRecords;
import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.LocalRound;
import dev.reconcile.core.OutcomeSummary;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.RepairStats;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RowBatches;
import dev.reconcile.core.SessionConfig;
import dev.reconcile.core.SessionStats;
import dev.reconcile.core.SketchParams;
import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
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
 *       opens both stores and runs the round of two agents between them in memory ({@link
 *       LocalRound#repair}): the same record batches, window, partition and clock-skew checks, and
 *       the closing verification, with the agent defaults for batching and clock skew.
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

  private int run() {
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
          p.getLong("protocolBytes", 0L),
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

  /**
   * Both directories opened in this process and repaired by {@link LocalRound}: the same sessions,
   * batching, checks (partition of every record, clock skew) and verification as a round between
   * two agents, LEFT as the initiator.
   */
  private int directories() {
    PrintWriter out = spec.commandLine().getOut();
    Path lp = dirOf(left);
    Path rp = dirOf(right);
    if (lp.toAbsolutePath().normalize().equals(rp.toAbsolutePath().normalize())) {
      throw new CliException("repair: " + left + " and " + right + " are the same directory");
    }
    EstimatorFactory estimators = parent.estimators();
    AgentConfig cluster = clusterConfig();
    SketchParams params = ReplicaAgent.sketchParams(cluster, estimators);
    try (LocalReplica a = open(left, lp, params, estimators);
        LocalReplica b = open(right, rp, params, estimators)) {
      SessionConfig session =
          new SessionConfig(
              cluster.clusterId(),
              a.nodeId(),
              1,
              null,
              cluster.sessionLimits(),
              false,
              cluster.repairConfig(a::wallMillis));
      RoundRecords leftRound = a.roundRecords();
      RoundRecords rightRound = b.roundRecords();
      CountingRecordStore rightRecords = new CountingRecordStore(rightRound);
      long t0 = System.nanoTime();
      ReconcileSession round;
      try {
        round =
            dryRun
                ? LocalRound.compare(session, a.sketches(), b.sketches())
                : LocalRound.repair(session, a.sketches(), leftRound, b.sketches(), rightRecords);
      } catch (IllegalStateException e) {
        throw new CliException("repair " + left + " with " + right + ": " + e.getMessage());
      }
      if (!dryRun) {
        // As agents do after a round: tombstones past the grace period that were sent are dropped.
        leftRound.dropOfferedExpired();
        rightRound.dropOfferedExpired();
      }
      long sessionNanos = System.nanoTime() - t0;
      OutcomeSummary sum = OutcomeSummary.of(round.outcomes());
      out.printf(
          "%s %s with %s: %d partitions, %d equal, %d by IBLT, %d by digest list; difference %,d%n",
          dryRun ? "dry run:" : "repaired:",
          left,
          right,
          sum.partitions(),
          sum.fastPath(),
          sum.iblt(),
          sum.fallback(),
          sum.difference());
      SessionStats st = round.stats();
      out.printf(
          "protocol (in memory): %,d bytes, %d round trips, %d doublings, %d fallbacks; session %s%n",
          st.protocolBytes(),
          st.roundTrips(),
          st.doublings(),
          st.fallbacks(),
          Commands.seconds(sessionNanos));
      if (dryRun) {
        out.printf(
            "would copy left -> right %,d records, right -> left %,d records; nothing moved%n",
            sum.missingRemote(), sum.missingLocal());
        out.flush();
        return 0;
      }
      RepairStats rs = round.repairStats();
      out.printf(
          "records left -> right %,d (applied %,d, stale %,d, duplicate %,d), right -> left %,d"
              + " (applied %,d, stale %,d, duplicate %,d)%n",
          rs.recordsSent(),
          rightRecords.applied,
          rightRecords.stale,
          rightRecords.duplicate,
          rs.recordsReceived(),
          rs.applied(),
          rs.stale(),
          rs.duplicate());
      // A record the right side received and did not pass to its store was refused for clock skew
      // (every other check fails the round).
      long refusedRight = rs.recordsSent() - rightRecords.records;
      long refused = rs.clockSkewRefused() + refusedRight;
      if (refused > 0) {
        out.printf(
            "refused for clock skew (version more than %s ahead of this machine's clock): by left"
                + " %,d%s, by right %,d%n",
            Durations.format(cluster.security().maxClockSkew()),
            rs.clockSkewRefused(),
            sampleKeys(rs.clockSkewKeys()),
            refusedRight);
      }
      if (!rs.verified() || !rs.stillDiffering().isEmpty()) {
        throw new CliException(
            "repair: partitions "
                + (rs.verified() ? rs.stillDiffering() : "(not verified)")
                + " still differ after applying the records"
                + (refused > 0 ? " (" + refused + " refused for clock skew)" : ""));
      }
      out.printf(
          "replicas match: every partition fingerprint equal, %,d and %,d records%n",
          a.recordCount(), b.recordCount());
      out.flush();
      return 0;
    }
  }

  private static String sampleKeys(List<byte[]> keys) {
    if (keys.isEmpty()) {
      return "";
    }
    List<String> shown = new ArrayList<>(keys.size());
    for (byte[] k : keys) {
      shown.add(KeyCodec.encode(k));
    }
    return " (keys "
        + String.join(", ", shown)
        + (keys.size() == RepairStats.SAMPLE_KEYS ? ", ..." : "")
        + ")";
  }

  /**
   * The right side's records as the responder reaches them, with what reached its store counted.
   */
  private static final class CountingRecordStore implements RecordStore {
    private final RecordStore store;
    long records;
    long applied;
    long stale;
    long duplicate;

    CountingRecordStore(RecordStore store) {
      this.store = store;
    }

    @Override
    public List<ReplicaRecord> recordsFor(int partition, long[] elements) {
      return store.recordsFor(partition, elements);
    }

    @Override
    public PartitionScan scan(int partition, PartitionSketches sketches) {
      return store.scan(partition, sketches);
    }

    @Override
    public ApplyOutcome apply(List<ReplicaRecord> batch) {
      return count(store.apply(batch), batch.size());
    }

    @Override
    public ApplyOutcome applyRows(RowBatches.Rows rows) {
      return count(store.applyRows(rows), rows.size());
    }

    private ApplyOutcome count(ApplyOutcome o, int size) {
      records += size;
      applied += o.applied();
      stale += o.stale();
      duplicate += o.duplicate();
      return o;
    }
  }

  /** The cluster settings of the stopped agents, as far as the command line gives them. */
  private AgentConfig clusterConfig() {
    Map<String, String> m = new HashMap<>();
    m.put("node-id", "cli");
    m.put("hash-seed", hashSeed);
    m.put("partitions-log2", Integer.toString(partitionsLog2));
    m.put("iblt-max-log2", Integer.toString(ibltMaxLog2));
    try {
      return AgentConfig.fromMap(m);
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
  private static LocalReplica open(
      String side, Path dir, SketchParams params, EstimatorFactory estimators) {
    try {
      return LocalReplica.openExisting(dir, params, estimators);
    } catch (RuntimeException e) {
      String m = String.valueOf(e.getMessage()).replace('\n', ' ');
      if (m.contains("lock")) {
        m += " (is an agent running on it? use agent:HOST:PORT for running agents)";
      }
      throw new CliException(side + ": " + m);
    }
  }
}
