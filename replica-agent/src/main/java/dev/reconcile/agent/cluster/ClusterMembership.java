package dev.reconcile.agent.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.ReplicaAgent;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Membership through Vert.x's Hazelcast cluster manager, in a clustered Vert.x instance of its own
 * (the agent's data plane keeps its own instance, so nothing of the cluster engine runs on its
 * event loops). Who is a member comes from the cluster manager ({@link #members}); what a member
 * publishes ({@link MemberInfo}) lives in the cluster-wide map {@value #MAP}, keyed by the
 * cluster-manager node id, with a time to live so that entries of dead members expire.
 *
 * <p>Hazelcast is configured for explicit addresses only: TCP/IP join to the {@code cluster-seeds}
 * listed one by one, multicast and auto-detection off, bound to the {@code cluster-listen} address
 * only (any address when it is a wildcard), phone-home off, heartbeats every second and a member
 * declared dead after {@code cluster-failure-timeout} without one, split-brain merges tried every 5
 * s.
 */
public final class ClusterMembership {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterMembership.class);

  /** Name of the cluster-wide map of {@link MemberInfo} entries. */
  public static final String MAP = "reconcile.members";

  /** Seconds between split-brain merge attempts (first and next). */
  static final int MERGE_SECONDS = 5;

  private final Vertx vertx;
  private final HazelcastClusterManager manager;
  private volatile AsyncMap<String, String> map;
  private final AtomicLong malformed = new AtomicLong();
  private volatile String lastMalformed = "";

  private ClusterMembership(
      Vertx vertx, HazelcastClusterManager manager, AsyncMap<String, String> map) {
    this.vertx = vertx;
    this.manager = manager;
    this.map = map;
  }

  /** The Hazelcast configuration of {@code c}. */
  public static Config hazelcastConfig(AgentConfig.Cluster c) {
    Config h = new Config();
    h.setClusterName(c.name());
    h.setProperty("hazelcast.phone.home.enabled", "false");
    h.setProperty("hazelcast.logging.type", "slf4j");
    h.setProperty("hazelcast.health.monitoring.level", "OFF");
    h.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    h.setProperty(
        "hazelcast.max.no.heartbeat.seconds",
        Long.toString(Math.max(2, c.failureTimeout().toSeconds())));
    h.setProperty("hazelcast.merge.first.run.delay.seconds", Integer.toString(MERGE_SECONDS));
    h.setProperty("hazelcast.merge.next.run.delay.seconds", Integer.toString(MERGE_SECONDS));
    h.setProperty("hazelcast.wait.seconds.before.join", "1");
    h.setProperty("hazelcast.max.wait.seconds.before.join", "5");
    NetworkConfig n = h.getNetworkConfig();
    n.setPort(c.listen().port()).setPortAutoIncrement(false).setPortCount(1);
    String host = c.listen().host();
    if (isWildcard(host)) {
      h.setProperty("hazelcast.socket.bind.any", "true");
    } else {
      h.setProperty("hazelcast.socket.bind.any", "false");
      h.setProperty("hazelcast.local.localAddress", host.equals("localhost") ? "127.0.0.1" : host);
    }
    JoinConfig j = n.getJoin();
    j.getMulticastConfig().setEnabled(false);
    j.getAutoDetectionConfig().setEnabled(false);
    j.getTcpIpConfig().setEnabled(true);
    for (HostPort s : c.seeds()) {
      j.getTcpIpConfig().addMember(s.toString());
    }
    return h;
  }

  static boolean isWildcard(String host) {
    return host.equals("0.0.0.0") || host.equals("::") || host.equals("*");
  }

  /** Starts a clustered Vert.x on {@code c} and joins (or forms) the cluster. */
  public static Future<ClusterMembership> join(AgentConfig.Cluster c) {
    HazelcastClusterManager manager = new HazelcastClusterManager(hazelcastConfig(c));
    // Vert.x's clustered event bus listens too (a random port; this agent registers no consumer
    // on it): on the cluster-listen host, or, for a wildcard, where Vert.x puts it by default (the
    // cluster manager's member address).
    EventBusOptions bus = new EventBusOptions().setPort(0);
    if (!isWildcard(c.listen().host())) {
      bus.setHost(c.listen().host());
    }
    VertxOptions o =
        new VertxOptions()
            .setEventLoopPoolSize(1)
            .setWorkerPoolSize(4)
            .setEventBusOptions(bus)
            .setFileSystemOptions(ReplicaAgent.noClassPathFiles());
    return Vertx.builder()
        .with(o)
        .withClusterManager(manager)
        .buildClustered()
        .compose(
            vx ->
                vx.sharedData()
                    .<String, String>getClusterWideMap(MAP)
                    .map(m -> new ClusterMembership(vx, manager, m))
                    .recover(t -> vx.close().compose(v -> Future.failedFuture(t))));
  }

  /** This member's cluster-manager node id. */
  public String localMember() {
    return manager.getNodeId();
  }

  /**
   * Node ids of the members the cluster manager sees now (this one included), oldest first: the
   * first is the cluster manager's coordinator (Hazelcast's master).
   */
  public List<String> members() {
    return manager.isActive() ? manager.getNodes() : List.of();
  }

  /** The host the cluster manager's member address uses (for wildcard listen addresses). */
  public String memberHost() {
    String h = manager.clusterHost();
    return h == null ? "127.0.0.1" : h;
  }

  Vertx vertx() {
    return vertx;
  }

  HazelcastClusterManager manager() {
    return manager;
  }

  /** Publishes {@code info} under this member's key for {@code ttlMillis}. */
  public Future<Void> publish(MemberInfo info, long ttlMillis) {
    return map.put(localMember(), info.toJson(), ttlMillis);
  }

  /**
   * What one read of the entries found: the entries of the current members that answered within the
   * wait, by cluster-manager node id, and how many members' entries did not answer in time.
   */
  public record Entries(Map<String, MemberInfo> read, int late) {}

  /**
   * The published entries of the current members, each read on its own ({@code getAsync}, no thread
   * held) and waited for at most {@code waitMillis}: the member that owns an entry's partition
   * answers nothing while it is frozen and not yet dropped, and its entries must not hold up the
   * others. Entries that do not answer in time, or whose read fails, count as {@code late}; absent
   * entries are absent; malformed ones are skipped and counted ({@link #malformedEntries}).
   */
  public Future<Entries> read(long waitMillis) {
    List<String> live = members();
    List<Future<String>> gets = new ArrayList<>(live.size());
    for (String id : live) {
      gets.add(map.get(id).timeout(waitMillis, TimeUnit.MILLISECONDS));
    }
    return Future.join(gets)
        .transform(
            done -> {
              Map<String, MemberInfo> out = new LinkedHashMap<>();
              int late = 0;
              for (int i = 0; i < gets.size(); i++) {
                Future<String> g = gets.get(i);
                if (g.failed()) {
                  late++;
                  continue;
                }
                String json = g.result();
                if (json == null) {
                  continue;
                }
                String id = live.get(i);
                try {
                  out.put(id, MemberInfo.parse(id, json));
                } catch (IllegalArgumentException x) {
                  malformed.incrementAndGet();
                  String m = x.getMessage();
                  if (!m.equals(lastMalformed)) {
                    lastMalformed = m;
                    LOG.warn("ignoring the cluster entry of member {}: {}", clip(id), clip(m));
                  }
                }
              }
              return Future.succeededFuture(new Entries(out, late));
            });
  }

  /**
   * Replaces the entry map by {@code wrap} of it: tests only (a map whose reads never answer stands
   * for a frozen member that owns their partitions).
   */
  void wrapMap(UnaryOperator<AsyncMap<String, String>> wrap) {
    map = wrap.apply(map);
  }

  private static String clip(String s) {
    String t = s.replaceAll("\\p{Cntrl}", "?");
    return t.length() > 200 ? t.substring(0, 200) + "..." : t;
  }

  /** Entries skipped as malformed since start. */
  public long malformedEntries() {
    return malformed.get();
  }

  /**
   * Leaves the cluster (gracefully: the others see it go at once) and stops the instance. Blocks;
   * call it from a thread that is not one of this instance's.
   */
  public void close() {
    try {
      map.remove(localMember()).toCompletionStage().toCompletableFuture().get(3, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.debug("removing this member's entry: {}", e.toString());
    }
    try {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("leaving the cluster: {}", e.toString());
    }
  }
}
