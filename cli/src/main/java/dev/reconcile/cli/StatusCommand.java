package dev.reconcile.cli;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code reconcile status HOST:PORT}: an agent's {@code GET /status}, printed for a person; {@code
 * reconcile status --cluster HOST:PORT}: its {@code GET /cluster} as a table of members.
 */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description = {
      "Shows a running agent's state: node, records, partitions, peers and the last round with",
      "each peer. ADDRESS is the agent's HTTP address (HOST:PORT or agent:HOST:PORT).",
      "With --cluster HOST:PORT: the cluster as that agent sees it (members, who differs where,",
      "the last round with each)."
    })
final class StatusCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  /** Which agent to ask, and for what: exactly one of ADDRESS and --cluster. */
  static final class Target {
    @Parameters(
        index = "0",
        paramLabel = "ADDRESS",
        description = "the agent's HTTP address, HOST:PORT")
    String address;

    @Option(
        names = "--cluster",
        paramLabel = "HOST:PORT",
        description = "show the cluster (GET /cluster) as seen by the agent at this HTTP address")
    String cluster;
  }

  @ArgGroup(exclusive = true, multiplicity = "1")
  Target target;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      description = "bearer token (read or admin) for agents that require one")
  String token;

  @Option(names = "--https", description = "the agent serves HTTPS (http-tls)")
  boolean https;

  @Option(names = "--json", description = "print the agent's JSON as is")
  boolean json;

  @Option(
      names = "--partitions",
      description = "list every partition's element count and fingerprint")
  boolean partitions;

  @Option(
      names = "--timeout",
      paramLabel = "SECONDS",
      description = "connect and answer timeout (default: ${DEFAULT-VALUE})")
  int timeoutSeconds = 10;

  @Override
  public Integer call() {
    return Commands.guarded(spec.commandLine().getErr(), this::run);
  }

  private int run() {
    PrintWriter out = spec.commandLine().getOut();
    Duration t = Duration.ofSeconds(Math.max(1, timeoutSeconds));
    String address = target.address;
    String cluster = target.cluster;
    if (cluster != null) {
      AgentSideHttp agent =
          new AgentSideHttp(cluster, AgentSideHttp.parse(cluster, true), token, https, t);
      JsonObject c = agent.getJson("/cluster", t);
      if (json) {
        out.println(c.encodePrettily());
      } else {
        ClusterTable.print(out, c);
      }
      out.flush();
      return 0;
    }
    AgentSideHttp agent =
        new AgentSideHttp(address, AgentSideHttp.parse(address, true), token, https, t);
    JsonObject s = agent.getJson("/status", t);
    if (json) {
      out.println(s.encodePrettily());
      out.flush();
      return 0;
    }
    print(out, s, partitions);
    out.flush();
    return 0;
  }

  static void print(PrintWriter out, JsonObject s, boolean allPartitions) {
    JsonArray parts = s.getJsonArray("partitions", new JsonArray());
    out.printf(
        "node %s (cluster %s): %,d records in %d partitions%n",
        s.getString("nodeId", "?"),
        s.getString("clusterId", "?"),
        s.getLong("records", -1L),
        parts.size());
    out.printf(
        "ports: http %s, peer %s; repair interval %s; active rounds %s; last sketch rebuild %s ms%n",
        s.getValue("httpPort"),
        s.getValue("peerPort"),
        s.getValue("repairInterval"),
        s.getValue("activeRounds"),
        s.getValue("sketchRebuildMillis"));
    if (!parts.isEmpty()) {
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      long sum = 0;
      for (int i = 0; i < parts.size(); i++) {
        long e = parts.getJsonObject(i).getLong("elements", 0L);
        min = Math.min(min, e);
        max = Math.max(max, e);
        sum += e;
      }
      out.printf(
          "partition elements: min %,d, mean %,.0f, max %,d%n",
          min, sum / (double) parts.size(), max);
      if (allPartitions) {
        for (int i = 0; i < parts.size(); i++) {
          JsonObject p = parts.getJsonObject(i);
          out.printf(
              "  partition %5d: %,12d elements, fingerprint %s%n",
              p.getInteger("partition", i),
              p.getLong("elements", 0L),
              p.getString("fingerprint", "?"));
        }
      }
    }
    JsonArray peers = s.getJsonArray("peers", new JsonArray());
    StringBuilder ps = new StringBuilder();
    for (int i = 0; i < peers.size(); i++) {
      ps.append(i == 0 ? "" : ", ").append(peers.getJsonObject(i).getString("peer", "?"));
    }
    out.println("configured peers: " + (peers.isEmpty() ? "none" : ps));
    JsonObject last = s.getJsonObject("lastRounds", new JsonObject());
    if (last.isEmpty()) {
      out.println("last rounds: none yet");
      return;
    }
    out.println("last rounds:");
    for (String peer : last.fieldNames().stream().sorted().toList()) {
      JsonObject r = last.getJsonObject(peer);
      Long at = r.getLong("at");
      String when = at == null || at == 0 ? "?" : Instant.ofEpochMilli(at).toString();
      if (Boolean.TRUE.equals(r.getBoolean("ok"))) {
        JsonArray still = r.getJsonArray("stillDiffering", new JsonArray());
        out.printf(
            "  %s: ok at %s in %s ms; difference %,d (estimated %,d); records sent %,d, received %,d%s%n",
            peer,
            when,
            r.getValue("durationMillis"),
            r.getLong("difference", 0L),
            r.getLong("estimatedDifference", 0L),
            r.getLong("recordsSent", 0L),
            r.getLong("recordsReceived", 0L),
            still.isEmpty() ? "" : "; partitions still differing " + still.encode());
        long skewed = r.getLong("clockSkewRefused", 0L);
        if (skewed > 0) {
          out.printf(
              "    %,d record(s) refused: version more than max-clock-skew ahead of this clock;"
                  + " first keys %s (see docs/operations.md, \"Records refused for clock skew\")%n",
              skewed, r.getJsonArray("clockSkewKeys", new JsonArray()).encode());
        }
        if (r.getInteger("partialPartitions", 0) > 0) {
          out.printf(
              "    %d partition(s) repaired in part (over max-listed-elements); the next rounds"
                  + " repair the rest%n",
              r.getInteger("partialPartitions", 0));
        }
      } else {
        out.printf("  %s: FAILED at %s: %s%n", peer, when, r.getString("error", "unknown error"));
      }
    }
  }
}
