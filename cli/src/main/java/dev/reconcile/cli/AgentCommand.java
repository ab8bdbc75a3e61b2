package dev.reconcile.cli;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.ReplicaAgent;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code reconcile agent}: runs the replica agent until it is stopped (SIGINT/SIGTERM). */
@Command(
    name = "agent",
    description = {
      "Runs a replica agent: RocksDB under --data, the peer port, the HTTP API, background repair.",
      "Every config key (docs/operations.md) can be set in --config or with --set KEY=VALUE."
    })
final class AgentCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--config", paramLabel = "FILE", description = "YAML or JSON config file")
  Path config;

  @Option(
      names = "--node-id",
      paramLabel = "ID",
      description = "this replica's id (required here or in the file)")
  String nodeId;

  @Option(names = "--cluster-id", paramLabel = "ID")
  String clusterId;

  @Option(names = "--data", paramLabel = "DIR", description = "RocksDB directory (default: data)")
  String data;

  @Option(
      names = "--peer-listen",
      paramLabel = "HOST:PORT",
      description = "peer port (default 127.0.0.1:7400)")
  String peerListen;

  @Option(
      names = "--http-listen",
      paramLabel = "HOST:PORT",
      description = "HTTP API (default 127.0.0.1:7401)")
  String httpListen;

  @Option(
      names = "--peers",
      paramLabel = "HOST:PORT[,HOST:PORT...]",
      description = "peers' peer ports")
  String peers;

  @Option(
      names = "--repair-interval",
      paramLabel = "DURATION",
      description = "between background rounds; 0 = on demand only")
  String repairInterval;

  @Option(
      names = "--cluster-listen",
      paramLabel = "HOST:PORT",
      description = "cluster mode: the cluster manager's member address (docs/operations.md)")
  String clusterListen;

  @Option(
      names = "--cluster-seeds",
      paramLabel = "HOST:PORT[,HOST:PORT...]",
      description = "cluster mode: members to join (their cluster-listen addresses)")
  String clusterSeeds;

  @Option(
      names = "--cluster-name",
      paramLabel = "NAME",
      description = "cluster mode: the cluster manager's cluster name (default: the cluster id)")
  String clusterName;

  @Option(names = "--set", paramLabel = "KEY=VALUE", description = "any other config key")
  List<String> sets = List.of();

  @Override
  public Integer call() {
    return Commands.guarded(spec.commandLine().getErr(), this::run);
  }

  private int run() throws Exception {
    Map<String, String> o = new LinkedHashMap<>();
    for (String s : sets) {
      int eq = s.indexOf('=');
      if (eq <= 0) {
        throw new CliException("--set " + s + ": expected KEY=VALUE");
      }
      o.put(s.substring(0, eq).trim(), s.substring(eq + 1));
    }
    put(o, "node-id", nodeId);
    put(o, "cluster-id", clusterId);
    put(o, "data", data);
    put(o, "peer-listen", peerListen);
    put(o, "http-listen", httpListen);
    put(o, "peers", peers);
    put(o, "repair-interval", repairInterval);
    put(o, "cluster-listen", clusterListen);
    put(o, "cluster-seeds", clusterSeeds);
    put(o, "cluster-name", clusterName);
    AgentConfig c;
    try {
      c = AgentConfig.load(config, o);
    } catch (AgentConfig.ConfigException e) {
      throw new CliException("config: " + e.getMessage());
    }
    ReplicaAgent agent;
    try {
      agent = ReplicaAgent.start(c);
    } catch (Exception e) {
      throw new CliException(
          "agent " + c.nodeId() + ": " + Commands.oneLine(e.getCause() == null ? e : e.getCause()));
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  agent.close();
                  stopped.countDown();
                },
                "agent-shutdown"));
    // Machine-readable line for scripts and tests: the ports actually bound.
    spec.commandLine()
        .getOut()
        .printf(
            "agent %s listening peer=%s:%d http=%s:%d%n",
            c.nodeId(),
            c.peerListen().host(),
            agent.peerPort(),
            c.httpListen().host(),
            agent.httpPort());
    spec.commandLine().getOut().flush();
    stopped.await();
    return 0;
  }

  private static void put(Map<String, String> m, String k, String v) {
    if (v != null) {
      m.put(k, v);
    }
  }
}
