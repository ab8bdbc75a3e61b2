package dev.reconcile.agent.cluster;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.Durations;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.agent.store.ReplicaStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.NodeListener;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster mode of one agent: joins the cluster manager ({@link ClusterMembership}), publishes this
 * agent's {@link MemberInfo} once per repair interval, and at every interval (with the configured
 * jitter) runs rounds with the members {@link PeerChoice} picks, through the agent's ordinary
 * {@link ReplicaAgent#repair}: every such round authenticates its peer exactly as a round with a
 * configured peer does (mTLS, cluster id, seed fingerprint). Membership only says whom to try.
 */
public final class ClusterMode {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterMode.class);

  /** Publication period when background rounds are off ({@code repair-interval: 0}). */
  static final long IDLE_PUBLISH_MILLIS = 30_000;

  /**
   * Longest wait for one member's published entry. Its read asks the member that owns the entry's
   * partition; a frozen member answers nothing until the cluster manager drops it (the failure
   * timeout, longer when the frozen member was the coordinator), and a read whose answer was lost
   * in a split and merge waits for Hazelcast's operation timeout (a minute). Past this wait an
   * interval and {@code GET /cluster} go on with the last entry read of that member, and the view
   * says so ({@code entriesFresh: false}).
   */
  static final long ENTRY_READ_TIMEOUT_MILLIS = 2_000;

  private final ReplicaAgent agent;
  private final AgentConfig config;
  private final ClusterMembership membership;
  private final Vertx vertx;
  private final PeerChoice choice;
  private final MemberTable table = new MemberTable();
  private final Map<String, MemberInfo> known = new ConcurrentHashMap<>();
  private final SplittableRandom random = new SplittableRandom(new SecureRandom().nextLong());
  private final long intervalMillis;
  private final long publishMillis;
  private final Counter roundsDiffersOk;
  private final Counter roundsDiffersFailed;
  private final Counter roundsGossipOk;
  private final Counter roundsGossipFailed;
  private final Counter entryReadsLate;
  private volatile boolean entriesFresh = true;
  private long publishTimer = -1;
  private long seq;
  private long lastGossipMillis;
  private volatile boolean closed;
  private volatile MemberInfo self;

  private ClusterMode(ReplicaAgent agent, ClusterMembership membership) {
    this.agent = agent;
    this.config = agent.config();
    this.membership = membership;
    this.vertx = membership.vertx();
    AgentConfig.Cluster c = config.cluster();
    this.choice = new PeerChoice(c.fanout(), c.gossipInterval().toMillis());
    this.intervalMillis = config.repairInterval().toMillis();
    this.publishMillis = intervalMillis > 0 ? intervalMillis : IDLE_PUBLISH_MILLIS;
    MeterRegistry reg = agent.metrics().registry();
    roundsDiffersOk = rounds(reg, "differs", "ok");
    roundsDiffersFailed = rounds(reg, "differs", "failed");
    roundsGossipOk = rounds(reg, "gossip", "ok");
    roundsGossipFailed = rounds(reg, "gossip", "failed");
    entryReadsLate =
        Counter.builder("reconcile_cluster_entry_reads_late_total")
            .description(
                "Reads of the published entries in which some entry did not answer within 2 s"
                    + " (its last entry read was used)")
            .register(reg);
    reg.gauge("reconcile_cluster_members", membership, m -> m.members().size());
    reg.gauge(
        "reconcile_cluster_malformed_entries", membership, ClusterMembership::malformedEntries);
  }

  private static Counter rounds(MeterRegistry reg, String reason, String result) {
    return Counter.builder("reconcile_cluster_rounds_total")
        .description("Rounds started by cluster-mode peer choice")
        .tags("reason", reason, "result", result)
        .register(reg);
  }

  /**
   * Joins the cluster of {@code agent}'s configuration (waiting up to a minute), publishes and
   * starts the background rounds. The agent's ports must already listen.
   */
  public static ClusterMode start(ReplicaAgent agent) throws Exception {
    AgentConfig.Cluster c = agent.config().cluster();
    long t0 = System.nanoTime();
    ClusterMembership m =
        ClusterMembership.join(c)
            .toCompletionStage()
            .toCompletableFuture()
            .get(60, TimeUnit.SECONDS);
    ClusterMode mode = new ClusterMode(agent, m);
    try {
      mode.begin();
    } catch (Exception e) {
      mode.close();
      throw e;
    }
    LOG.info(
        "agent {} joined cluster {} as member {} at {} in {} ms: {} members; fanout {}, gossip every {}",
        agent.config().nodeId(),
        c.name(),
        m.localMember(),
        c.listen(),
        (System.nanoTime() - t0) / 1_000_000,
        m.members().size(),
        c.fanout(),
        Durations.format(c.gossipInterval()));
    return mode;
  }

  private void begin() throws Exception {
    String local = membership.localMember();
    membership
        .manager()
        .nodeListener(
            new NodeListener() {
              @Override
              public void nodeAdded(String nodeID) {
                table.joined(nodeID, System.currentTimeMillis());
                LOG.info("cluster member {} joined", nodeID);
              }

              @Override
              public void nodeLeft(String nodeID) {
                String node = table.left(nodeID, System.currentTimeMillis());
                LOG.info("cluster member {} ({}) left", nodeID, node == null ? "no entry" : node);
              }
            });
    publish().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    publishTimer = vertx.setPeriodic(publishMillis, id -> publish());
    if (intervalMillis > 0) {
      scheduleTick();
    }
    LOG.debug("member {} published", local);
  }

  // ------------------------------------------------------------------ publishing

  /** This agent's digest now. */
  PartitionDigest ownDigest() {
    return PartitionDigest.of(config.partitionsLog2(), agent.store().sketches()::fingerprint);
  }

  private HostPort advertised(HostPort listen, int port) {
    String h =
        ClusterMembership.isWildcard(listen.host()) ? membership.memberHost() : listen.host();
    return new HostPort(h, port);
  }

  /** Publishes this agent's entry now (tests; the timer publishes once per interval). */
  Future<Void> publishNow() {
    return publish();
  }

  private Future<Void> publish() {
    if (closed) {
      return Future.succeededFuture();
    }
    return vertx
        .executeBlocking(
            () -> {
              MemberInfo info;
              synchronized (this) {
                info =
                    new MemberInfo(
                        membership.localMember(),
                        config.nodeId(),
                        config.clusterId(),
                        advertised(config.peerListen(), agent.peerPort()),
                        advertised(config.httpListen(), agent.httpPort()),
                        config.security().httpTls(),
                        ownDigest(),
                        agent.store().recordCount(),
                        ++seq,
                        System.currentTimeMillis());
              }
              return info;
            },
            false)
        .compose(
            info -> {
              self = info;
              return membership.publish(info, Math.max(3 * publishMillis, 15_000));
            })
        .onFailure(t -> LOG.warn("publishing this member's entry failed: {}", t.toString()));
  }

  // ------------------------------------------------------------------ rounds

  private void scheduleTick() {
    if (closed) {
      return;
    }
    double j = config.repairJitter();
    long delay =
        Math.max(
            1,
            (long) (intervalMillis * (1 + j * (2 * ThreadLocalRandom.current().nextDouble() - 1))));
    vertx.setTimer(delay, id -> tick().onComplete(x -> scheduleTick()));
  }

  /** One interval: read the members, choose, run the rounds; completes when they have ended. */
  Future<Void> tick() {
    if (closed) {
      return Future.succeededFuture();
    }
    return vertx
        .executeBlocking(this::ownDigest, false)
        .compose(own -> entries().map(entries -> choose(own, remembered(entries))))
        .compose(
            plan -> {
              List<Future<Void>> rounds = new ArrayList<>();
              for (Planned p : plan) {
                rounds.add(run(p.info(), p.reason()));
              }
              return Future.join(rounds).<Void>mapEmpty();
            })
        .recover(
            t -> {
              LOG.warn("cluster interval failed: {}", t.toString());
              return Future.succeededFuture();
            });
  }

  private record Planned(MemberInfo info, PeerChoice.Reason reason) {}

  private List<Planned> choose(PartitionDigest own, Map<String, MemberInfo> entries) {
    long now = System.currentTimeMillis();
    List<PeerChoice.Candidate> cands =
        table.candidates(entries, membership.localMember(), config.clusterId());
    List<PeerChoice.Pick> picks;
    synchronized (this) {
      picks = choice.choose(own, cands, now, lastGossipMillis, random);
      for (PeerChoice.Pick p : picks) {
        if (p.reason() == PeerChoice.Reason.GOSSIP) {
          lastGossipMillis = now;
        }
      }
    }
    List<Planned> out = new ArrayList<>();
    for (PeerChoice.Pick p : picks) {
      out.add(new Planned(entries.get(p.id()), p.reason()));
      table.attempt(p.id(), now);
    }
    return out;
  }

  private Future<Void> run(MemberInfo m, PeerChoice.Reason reason) {
    long seqAtStart = m.seq();
    long changesAtStart = agent.store().sketchChanges();
    return agent
        .repair(m.peer(), false)
        .compose(
            rep ->
                vertx
                    .executeBlocking(
                        () -> {
                          PartitionDigest after = ownDigest(); // before the count: see settled
                          long changesAtEnd = agent.store().sketchChanges();
                          return settled(rep, changesAtEnd - changesAtStart, after);
                        },
                        false)
                    .map(
                        after -> {
                          record(m, reason, rep, seqAtStart, after);
                          return null;
                        }));
  }

  /**
   * This agent's digest {@code after} a round, as what the peer holds too; null when the round
   * cannot vouch for it: the store's sketches took {@code changed} changes while it ran, and a
   * count other than the records the round applied means something besides it changed this store
   * (another round of the same interval, a client write, a purge), so the peer may lack part of it.
   * The digest is read before the count ({@link ReplicaStore#sketchChanges}): a change it shows is
   * counted. With null the peer's unchanged entry is not taken as merely stale, and the next
   * interval has a round with it (nothing to move if it did have everything). Taking the digest as
   * it stood after a round that ran beside a round with another member hid a real difference until
   * the gossip interval (a new member pulled 40 records from one peer while its round with another
   * ran, and that peer never got them).
   */
  static PartitionDigest settled(RoundReport rep, long changed, PartitionDigest after) {
    return rep.ok && changed == rep.applied ? after : null;
  }

  private void record(
      MemberInfo m,
      PeerChoice.Reason reason,
      RoundReport rep,
      long seqAtStart,
      PartitionDigest after) {
    table.finished(m, reason, rep, seqAtStart, after);
    boolean gossip = reason == PeerChoice.Reason.GOSSIP;
    (rep.ok
            ? (gossip ? roundsGossipOk : roundsDiffersOk)
            : (gossip ? roundsGossipFailed : roundsDiffersFailed))
        .increment();
    if (rep.ok && !rep.peerNodeId.isEmpty() && !rep.peerNodeId.equals(m.nodeId())) {
      LOG.warn(
          "cluster member {} published node id {} but its peer port {} answered as {}",
          m.member(),
          m.nodeId(),
          m.peer(),
          rep.peerNodeId);
    }
  }

  // ------------------------------------------------------------------ view

  /** {@code GET /cluster}: the members the cluster manager sees and the divergence view. */
  public Future<JsonObject> view(int rounds) {
    return vertx
        .executeBlocking(this::ownDigest, false)
        .compose(own -> entries().map(entries -> render(own, remembered(entries), rounds)));
  }

  /**
   * The entries read now; an entry that does not answer within {@link #ENTRY_READ_TIMEOUT_MILLIS}
   * is left out, and {@link #remembered} supplies the last one read of that member.
   */
  private Future<Map<String, MemberInfo>> entries() {
    return membership
        .read(ENTRY_READ_TIMEOUT_MILLIS)
        .map(
            e -> {
              boolean fresh = e.late() == 0;
              if (!fresh) {
                entryReadsLate.increment();
                if (entriesFresh) {
                  LOG.warn(
                      "{} cluster entries did not answer within {} ms (a member not answering?):"
                          + " using the last ones read",
                      e.late(),
                      ENTRY_READ_TIMEOUT_MILLIS);
                }
              }
              entriesFresh = fresh;
              return e.read();
            });
  }

  /**
   * The entries just read, plus the last valid entry of every live member whose entry is now
   * missing or malformed (whoever can reach the cluster manager can delete or spoil entries; the
   * last good one keeps that member a candidate while the cluster manager lists it). Every read
   * also tells the member table who is live and which node id each live member published, so a
   * member that leaves is recorded with its node id even if no interval ever chose it.
   */
  private Map<String, MemberInfo> remembered(Map<String, MemberInfo> read) {
    Set<String> live = new HashSet<>(membership.members());
    table.retain(live, System.currentTimeMillis());
    table.named(read, live, membership.localMember(), config.clusterId());
    known.keySet().retainAll(live);
    known.putAll(read);
    Map<String, MemberInfo> out = new LinkedHashMap<>(read);
    for (Map.Entry<String, MemberInfo> e : known.entrySet()) {
      out.putIfAbsent(e.getKey(), e.getValue());
    }
    return out;
  }

  private JsonObject render(PartitionDigest own, Map<String, MemberInfo> entries, int rounds) {
    String local = membership.localMember();
    AgentConfig.Cluster c = config.cluster();
    JsonArray members = new JsonArray();
    List<String> live = new ArrayList<>(membership.members());
    String coordinator = live.isEmpty() ? null : live.get(0);
    live.sort(
        (x, y) -> {
          MemberInfo a = entries.get(x);
          MemberInfo b = entries.get(y);
          String ka = a == null ? "~" + x : a.nodeId();
          String kb = b == null ? "~" + y : b.nodeId();
          return ka.compareTo(kb);
        });
    for (String id : live) {
      MemberInfo m = entries.get(id);
      JsonObject j = new JsonObject().put("member", id).put("self", id.equals(local));
      if (m == null) {
        j.put("nodeId", (String) null).put("published", false);
      } else {
        int[] diff = m.digest().differingPartitions(own);
        j.put("nodeId", m.nodeId())
            .put("clusterId", m.clusterId())
            .put("peer", m.peer().toString())
            .put("http", m.http().toString())
            .put("httpTls", m.httpTls())
            .put("published", true)
            .put("records", m.records())
            .put("seq", m.seq())
            .put("publishedAt", m.publishedAtMillis())
            .put("digest", m.digest().encode())
            .put("differs", diff.length > 0)
            .put("differingPartitions", toArray(diff));
        j.mergeIn(table.roundsOf(id));
      }
      members.add(j);
    }
    int per = own.partitionsPerBucket();
    return new JsonObject()
        .put("nodeId", config.nodeId())
        .put("clusterId", config.clusterId())
        .put("clusterName", c.name())
        .put("member", local)
        .put("clusterListen", c.listen().toString())
        .put("partitions", own.partitions())
        .put("digestBuckets", own.buckets())
        .put("partitionsPerBucket", per)
        .put(
            "policy",
            new JsonObject()
                .put("fanout", c.fanout())
                .put("repairInterval", Durations.format(config.repairInterval()))
                .put("gossipInterval", Durations.format(c.gossipInterval()))
                .put("failureTimeout", Durations.format(c.failureTimeout())))
        .put("now", System.currentTimeMillis())
        .put("coordinator", coordinator)
        .put("entriesFresh", entriesFresh)
        .put("members", members)
        .put("departed", table.departed())
        .put("malformedEntries", membership.malformedEntries())
        .put("rounds", table.recent(Math.max(0, Math.min(rounds, MemberTable.RECENT_ROUNDS))));
  }

  private static JsonArray toArray(int[] xs) {
    JsonArray a = new JsonArray();
    for (int x : xs) {
      a.add(x);
    }
    return a;
  }

  /** This agent's last published entry (null before the first). */
  public MemberInfo self() {
    return self;
  }

  public ClusterMembership membership() {
    return membership;
  }

  /** Leaves the cluster and stops the background rounds. */
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (publishTimer >= 0) {
      vertx.cancelTimer(publishTimer);
    }
    membership.close();
  }
}
