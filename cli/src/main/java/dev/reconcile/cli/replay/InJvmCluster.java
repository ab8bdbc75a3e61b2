package dev.reconcile.cli.replay;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.LocalReplica;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.estimator.EstimatorKinds;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Agents in this JVM ({@link ReplicaAgent#start}) on 127.0.0.1. A crash is an abrupt {@link
 * ReplicaAgent#close()} (listeners and store closed, in-flight rounds cut); a pause is not possible
 * here (the runner blackholes the replica's links instead).
 */
public final class InJvmCluster implements Cluster {
  private final Map<String, ReplicaAgent> agents = new ConcurrentHashMap<>();
  private final Map<String, Map<String, String>> configs = new ConcurrentHashMap<>();
  private final Map<String, AgentTestHooks> hooks = new ConcurrentHashMap<>();
  private final Map<String, InetSocketAddress> peers = new ConcurrentHashMap<>();

  @Override
  public String mode() {
    return "jvm";
  }

  @Override
  public String bindHost(int index) {
    return "127.0.0.1";
  }

  @Override
  public void start(String name, int index, Map<String, String> config, AgentTestHooks hooks)
      throws Exception {
    Map<String, String> c = new HashMap<>(config);
    c.put("peer-listen", "127.0.0.1:0");
    c.put("http-listen", "127.0.0.1:0");
    configs.put(name, c);
    this.hooks.put(name, hooks);
    launch(name);
  }

  private void launch(String name) throws Exception {
    ReplicaAgent a =
        ReplicaAgent.start(
            AgentConfig.fromMap(configs.get(name)), EstimatorKinds.defaults(), hooks.get(name));
    agents.put(name, a);
    peers.put(name, new InetSocketAddress("127.0.0.1", a.peerPort()));
  }

  private ReplicaAgent agent(String name) {
    ReplicaAgent a = agents.get(name);
    if (a == null) {
      throw new IllegalStateException("replica " + name + " is down");
    }
    return a;
  }

  @Override
  public InetSocketAddress peerAddress(String name) {
    return peers.get(name);
  }

  @Override
  public boolean running(String name) {
    return agents.containsKey(name);
  }

  @Override
  public void crash(String name) {
    ReplicaAgent a = agents.remove(name);
    if (a != null) {
      a.close();
    }
  }

  @Override
  public void restart(String name) throws Exception {
    if (!agents.containsKey(name)) {
      launch(name);
    }
  }

  @Override
  public boolean pause(String name) {
    return false;
  }

  @Override
  public void resume(String name) {}

  @Override
  public long put(String name, byte[] key, byte[] value) {
    return LocalReplica.of(agent(name)).put(key, value);
  }

  @Override
  public long delete(String name, byte[] key) {
    return LocalReplica.of(agent(name)).delete(key);
  }

  @Override
  public RoundResult repair(String from, String to, InetSocketAddress via) throws Exception {
    RoundReport r =
        agent(from)
            .repair(new HostPort(via.getHostString(), via.getPort()), false)
            .toCompletionStage()
            .toCompletableFuture()
            .get(10, TimeUnit.MINUTES);
    return of(from, to, r);
  }

  static RoundResult of(String from, String to, RoundReport r) {
    long proto = r.stats == null ? 0 : r.stats.protocolBytes();
    return new RoundResult(
        from,
        to,
        r.ok,
        r.error,
        proto,
        r.recordsSent + r.recordsReceived,
        r.recordBytesSent + r.recordBytesReceived,
        r.missingLocal + r.missingRemote,
        r.stats == null ? 0 : r.stats.doublings(),
        r.stats == null ? 0 : r.stats.fallbacks(),
        r.durationMillis);
  }

  @Override
  public List<String> fingerprints(String name) {
    LocalReplica s = LocalReplica.of(agent(name));
    List<String> out = new ArrayList<>();
    for (int p = 0; p < s.sketches().params().partitions(); p++) {
      Fingerprint f = s.sketches().fingerprint(p);
      out.add(f.count() + "/" + Long.toHexString(f.sum()) + "/" + Long.toHexString(f.sum2()));
    }
    return out;
  }

  @Override
  public Map<String, Observed> read(String name, List<String> keys) {
    LocalReplica s = LocalReplica.of(agent(name));
    Map<String, Observed> out = new HashMap<>();
    for (String k : keys) {
      Optional<ReplicaRecord> r = s.get(Model.keyBytes(k));
      r.ifPresent(x -> out.put(k, new Observed(x.version(), x.origin(), x.value(), x.tombstone())));
    }
    return out;
  }

  @Override
  public boolean selfCheck(String name) {
    return LocalReplica.of(agent(name)).passesSelfCheck();
  }

  @Override
  public void close() {
    for (String n : new ArrayList<>(agents.keySet())) {
      crash(n);
    }
  }
}
