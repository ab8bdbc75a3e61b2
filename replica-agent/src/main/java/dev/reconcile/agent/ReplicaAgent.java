package dev.reconcile.agent;

import dev.reconcile.agent.cluster.ClusterMode;
import dev.reconcile.agent.store.HybridClock;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.agent.store.StoreOptions;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.SketchParams;
import dev.reconcile.estimator.EstimatorKinds;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.file.FileSystemOptions;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A replica agent: a RocksDB replica under {@code data}, its sketches kept current on every write,
 * the peer port, the HTTP API and the background scheduler that repairs against every configured
 * peer. {@link #start} returns once both ports listen; {@link #close} stops everything and releases
 * the store.
 */
public final class ReplicaAgent implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaAgent.class);

  private final AgentConfig config;
  private final Vertx vertx;
  private final ReplicaStore store;
  private final AgentMetrics metrics = new AgentMetrics();
  private final PeerService peers;
  private final AdminApi api;
  private int peerPort;
  private int httpPort;
  private long purgeTimer = -1;
  private volatile ClusterMode cluster;
  private volatile boolean closed;
  private final ExecutorService roundThreads = RoundWorker.pool();

  private ReplicaAgent(AgentConfig config, ReplicaStore store) {
    this.config = config;
    this.store = store;
    this.vertx =
        Vertx.vertx(
            new VertxOptions().setWorkerPoolSize(8).setFileSystemOptions(noClassPathFiles()));
    AgentRuntime rt =
        new AgentRuntime(vertx, store, metrics, config, config.sessionLimits(), roundThreads);
    this.peers = new PeerService(rt);
    this.api = new AdminApi(this);
    metrics.bindStore(store);
  }

  /**
   * Vert.x file options for an agent: no class-path file resolution. The agent serves no file of
   * its class path, and with resolution on every Vert.x instance makes a {@code vertx-cache-*}
   * folder under {@code java.io.tmpdir} that it deletes only on a clean close, so each killed agent
   * left one behind.
   */
  public static FileSystemOptions noClassPathFiles() {
    return new FileSystemOptions().setClassPathResolvingEnabled(false).setFileCachingEnabled(false);
  }

  /** The sketch parameters an agent with {@code config} uses. */
  public static SketchParams sketchParams(AgentConfig config, EstimatorFactory estimators) {
    long seed = HashSpec.seedFromSecret(config.hashSeed().getBytes(StandardCharsets.UTF_8));
    return new SketchParams(
        HashSpec.xxh3(seed),
        config.partitionsLog2(),
        3,
        config.ibltMaxLog2(),
        estimators.params(),
        config.ratelessLog2());
  }

  /** Opens the store, rebuilds sketches, listens on both ports and starts the scheduler. */
  public static ReplicaAgent start(AgentConfig config) throws Exception {
    return start(config, EstimatorKinds.defaults());
  }

  /**
   * As {@link #start(AgentConfig)} with another estimator (tests force estimation errors with it).
   */
  public static ReplicaAgent start(AgentConfig config, EstimatorFactory given) throws Exception {
    return start(config, given, AgentTestHooks.NONE);
  }

  /**
   * As {@link #start(AgentConfig, EstimatorFactory)} with faults injected for a test ({@link
   * AgentTestHooks}: clock skew, scaled estimates). Only tests and the replay runner call this.
   */
  public static ReplicaAgent start(AgentConfig config, EstimatorFactory given, AgentTestHooks hooks)
      throws Exception {
    long t0 = System.nanoTime();
    ReplicaStore store = openStore(config, given, hooks);
    ReplicaAgent agent = new ReplicaAgent(config, store);
    agent.metrics.lastRebuildMillis.set((System.nanoTime() - t0) / 1_000_000);
    try {
      agent.peerPort =
          agent.peers.listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      agent.httpPort =
          agent.api.listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      agent.close();
      Throwable c = e.getCause() == null ? e : e.getCause();
      throw new IllegalStateException("cannot listen: " + c.getMessage(), c);
    }
    agent.startBackground();
    if (config.cluster().enabled()) {
      try {
        agent.cluster = ClusterMode.start(agent);
      } catch (Exception e) {
        agent.close();
        Throwable c = e.getCause() == null ? e : e.getCause();
        throw new IllegalStateException(
            "cannot join cluster at " + config.cluster().listen() + ": " + c.getMessage(), c);
      }
    }
    LOG.info(
        "agent {} of cluster {} up: peer port {}:{}, http {}:{}, {} records, {} peers, repair interval {}",
        config.nodeId(),
        config.clusterId(),
        config.peerListen().host(),
        agent.peerPort,
        config.httpListen().host(),
        agent.httpPort,
        store.recordCount(),
        config.peers().size(),
        Durations.format(config.repairInterval()));
    return agent;
  }

  /**
   * Opens (creating when missing) the store of an agent with {@code config}: its data directory,
   * node id, sketch parameters, tombstone grace and clock offset, estimators scaled by {@code
   * estimator-scale}.
   */
  static ReplicaStore openStore(AgentConfig config, EstimatorFactory given) {
    return openStore(config, given, AgentTestHooks.NONE);
  }

  static ReplicaStore openStore(AgentConfig config, EstimatorFactory given, AgentTestHooks hooks) {
    return openStore(config, given, hooks, false);
  }

  static ReplicaStore openStore(
      AgentConfig config, EstimatorFactory given, AgentTestHooks hooks, boolean readOnly) {
    EstimatorFactory estimators = ScaledEstimators.wrap(given, hooks.estimatorScale());
    long offset = hooks.clockOffset().toMillis();
    return ReplicaStore.open(
        StoreOptions.builder(config.dataDir(), sketchParams(config, estimators), estimators)
            .nodeId(config.nodeId())
            .tombstoneGrace(config.tombstoneGrace())
            .ingestBulk(config.bulkIngest())
            .applySliceKeys(config.applySliceKeys())
            .directIo(config.directIo())
            .repairWal(config.repairWal())
            .readOnly(readOnly)
            .clock(
                offset == 0
                    ? HybridClock.system()
                    : new HybridClock(() -> System.currentTimeMillis() + offset))
            .build());
  }

  private void startBackground() {
    long interval = config.repairInterval().toMillis();
    if (interval > 0) {
      for (HostPort peer : config.peers()) {
        schedule(peer, interval);
      }
    }
    long purge = config.purgeInterval().toMillis();
    if (purge > 0) {
      purgeTimer =
          vertx.setPeriodic(
              purge,
              id ->
                  vertx
                      .executeBlocking(
                          () -> store.purgeTombstones(System.currentTimeMillis()), false)
                      .onSuccess(
                          n -> {
                            if (n > 0) {
                              LOG.info(
                                  "purged {} tombstones older than {}",
                                  n,
                                  Durations.format(config.tombstoneGrace()));
                            }
                          })
                      .onFailure(t -> LOG.warn("tombstone purge failed: {}", t.getMessage())));
    }
  }

  /** Next round with {@code peer} after the interval, +- jitter. */
  private void schedule(HostPort peer, long interval) {
    if (closed) {
      return;
    }
    double j = config.repairJitter();
    long delay =
        Math.max(
            1, (long) (interval * (1 + j * (2 * ThreadLocalRandom.current().nextDouble() - 1))));
    vertx.setTimer(delay, id -> repair(peer, false).onComplete(r -> schedule(peer, interval)));
  }

  /** Runs a round with {@code peer} now; the future always succeeds with a report (ok or not). */
  public Future<RoundReport> repair(HostPort peer, boolean dryRun) {
    return peers.repair(peer, dryRun);
  }

  /** Cluster mode, or null when {@code cluster-listen} is not set. */
  public ClusterMode cluster() {
    return cluster;
  }

  public AgentConfig config() {
    return config;
  }

  public ReplicaStore store() {
    return store;
  }

  public AgentMetrics metrics() {
    return metrics;
  }

  Vertx vertx() {
    return vertx;
  }

  public int peerPort() {
    return peerPort;
  }

  public int httpPort() {
    return httpPort;
  }

  int activeRounds() {
    return peers.activeRounds();
  }

  public Map<String, RoundReport> lastReports() {
    return peers.lastReports();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (purgeTimer >= 0) {
      vertx.cancelTimer(purgeTimer);
    }
    if (cluster != null) {
      cluster.close(); // leave first: the others stop choosing this agent at once
    }
    try {
      Future.all(peers.close(), api.close())
          .toCompletionStage()
          .toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("closing listeners: {}", e.toString());
    }
    try {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("closing vert.x: {}", e.toString());
    }
    peers.abandonRounds("the agent closed during the round");
    roundThreads.shutdown();
    metrics.close();
    store.close();
    LOG.info("agent {} stopped", config.nodeId());
  }
}
