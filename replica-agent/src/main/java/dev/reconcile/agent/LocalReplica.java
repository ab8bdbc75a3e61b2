package dev.reconcile.agent;

import dev.reconcile.agent.store.NodeIds;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.agent.store.StoreOptions;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import dev.reconcile.estimator.EstimatorKinds;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A replica's store reached in this process instead of over the network: a stopped agent's data
 * directory opened directly, or the store of an agent running in this JVM. It offers what tools
 * need of a replica (the CLI's repair of two directories, the demo, the benchmarks, the in-JVM
 * replay cluster) in core types: records as {@link ReplicaRecord}, the store as the session's ports
 * {@link PartitionSketches} and {@link RecordStore}, so that a tool can run {@code LocalRound}
 * between two replicas exactly as two agents run a round.
 *
 * <p>{@link #close()} of a replica opened here closes its store: every native handle, in reverse
 * order of creation. A view of a running agent's store ({@link #of}) leaves the store to the agent.
 * Every call blocks (RocksDB I/O); none may run on a Vert.x event loop.
 */
public final class LocalReplica implements AutoCloseable {
  private final ReplicaStore store;
  private final boolean owned;

  private LocalReplica(ReplicaStore store, boolean owned) {
    this.store = store;
    this.owned = owned;
  }

  /**
   * Opens (creating when missing) the store an agent with {@code config} would open, without
   * starting the agent: its data directory, node id, sketch parameters, tombstone grace and clock
   * offset.
   */
  public static LocalReplica open(AgentConfig config) {
    return new LocalReplica(ReplicaAgent.openStore(config, EstimatorKinds.defaults()), true);
  }

  /**
   * Opens the existing store an agent with {@code config} would open, read-only (RocksDB's
   * read-only mode, which takes no lock: the agent may be running). It shows what the store held on
   * disk when opened, nothing written after; every write throws.
   *
   * @throws RuntimeException when there is no store at the data directory, or it was created with
   *     other sketch parameters (hash seed, partitions); the node id is not checked (nothing is
   *     written)
   */
  public static LocalReplica openReadOnly(AgentConfig config) {
    return new LocalReplica(
        ReplicaAgent.openStore(config, EstimatorKinds.defaults(), AgentTestHooks.NONE, true), true);
  }

  /**
   * Opens the existing store at {@code dir} (a stopped agent's data directory) for writing, as the
   * node it was created for ({@link #readNodeId}).
   *
   * @throws RuntimeException with a message that says why: no store at {@code dir}; {@code params}
   *     differ from those the store was created with (hash seed, partitions); the directory is
   *     locked by a running agent
   */
  public static LocalReplica openExisting(
      Path dir, SketchParams params, EstimatorFactory estimators) {
    String node = ReplicaStore.readNodeId(dir);
    return new LocalReplica(
        ReplicaStore.open(
            StoreOptions.builder(dir, params, estimators).nodeId(node).readOnly(false).build()),
        true);
  }

  /** The store of {@code agent}, running in this JVM; closing the view leaves it open. */
  public static LocalReplica of(ReplicaAgent agent) {
    return new LocalReplica(agent.store(), false);
  }

  /**
   * The node id of the store at {@code dir}, read from its meta rows without building sketches.
   *
   * @throws RuntimeException when {@code dir} holds no store, or a store without a node id
   */
  public static String readNodeId(Path dir) {
    return ReplicaStore.readNodeId(dir);
  }

  /** The {@code origin} carried by the records node {@code nodeId} writes (frozen). */
  public static long origin(String nodeId) {
    return NodeIds.origin(nodeId);
  }

  /** This replica's node id. */
  public String nodeId() {
    return store.options().nodeId();
  }

  /** The origin of this replica's own writes. */
  public long origin() {
    return store.origin();
  }

  public SketchParams params() {
    return store.params();
  }

  /** A new version from this replica's clock, later than every version it holds or has seen. */
  public long newVersion() {
    return store.clock().now();
  }

  /** This replica's wall clock in milliseconds (what a received version is checked against). */
  public long wallMillis() {
    return store.clock().wallMillis();
  }

  /** Writes {@code value} under {@code key} as a local write; returns its version. */
  public long put(byte[] key, byte[] value) {
    return store.put(key, value);
  }

  /** Writes a tombstone for {@code key} as a local write; returns its version. */
  public long delete(byte[] key) {
    return store.delete(key);
  }

  /**
   * Applies {@code records} (their own versions and origins) through the conflict rule, in atomic
   * batches; returns how many won and were written.
   */
  public long putAll(List<ReplicaRecord> records) {
    return store.putAll(records);
  }

  /** The current record of {@code key}, tombstones included. */
  public Optional<ReplicaRecord> get(byte[] key) {
    return store.get(key);
  }

  /** Every record in key order, tombstones included. */
  public void forEachRecord(Consumer<ReplicaRecord> action) {
    store.forEachRecord(action);
  }

  /** Records stored, tombstones included. */
  public long recordCount() {
    return store.recordCount();
  }

  /** The sketches a session reads (the maintained per-partition state and the digest index). */
  public PartitionSketches sketches() {
    return store.sketches();
  }

  /** The records a session reads and repairs. */
  public RecordStore records() {
    return store;
  }

  /**
   * The records for one round, noting the past-grace tombstones it offers so that {@link
   * RoundRecords#dropOfferedExpired()} can drop them once the round is over (as an agent does).
   */
  public RoundRecords roundRecords() {
    return new RoundRecords(store);
  }

  /**
   * Recomputes the sketches from the records and checks the digest index; true when everything
   * matches and no record is corrupt.
   */
  public boolean passesSelfCheck() {
    return store.selfCheck().ok();
  }

  /** Closes the store when it was opened here (not a running agent's). Idempotent. */
  @Override
  public void close() {
    if (owned) {
      store.close();
    }
  }

  @Override
  public String toString() {
    return "LocalReplica{" + store + (owned ? "" : ", of a running agent") + "}";
  }
}
