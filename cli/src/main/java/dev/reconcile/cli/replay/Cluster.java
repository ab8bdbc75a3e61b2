package dev.reconcile.cli.replay;

import dev.reconcile.agent.AgentTestHooks;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

/**
 * Where a scenario's agents run: in this JVM, as OS processes, or in containers. The runner gives
 * each replica a full agent configuration except the listen addresses, which the cluster chooses
 * ({@link #bindHost}, port 0) and reports back through {@link #peerAddress}.
 */
public interface Cluster extends AutoCloseable {
  /** "jvm", "process", "container". */
  String mode();

  /** The loopback address replica number {@code index} listens on. */
  String bindHost(int index);

  /**
   * Starts replica {@code name} with {@code config} (agent keys; the cluster adds peer-listen and
   * http-listen) and the test hooks of its scenario ({@link AgentTestHooks#NONE} for none).
   */
  void start(String name, int index, Map<String, String> config, AgentTestHooks hooks)
      throws Exception;

  /** The agent's current peer address (changes after a restart). */
  InetSocketAddress peerAddress(String name);

  boolean running(String name);

  /**
   * Stops the replica abruptly: kill -9 for a process, docker kill for a container, close in this
   * JVM.
   */
  void crash(String name) throws Exception;

  /** Starts a crashed replica again on its data directory. */
  void restart(String name) throws Exception;

  /** Freezes the replica (SIGSTOP, docker pause); false when this cluster cannot. */
  boolean pause(String name) throws Exception;

  void resume(String name) throws Exception;

  /** Writes {@code key}; returns the version the replica acknowledged. */
  long put(String name, byte[] key, byte[] value) throws Exception;

  /** Deletes {@code key} (a tombstone); returns the acknowledged version. */
  long delete(String name, byte[] key) throws Exception;

  /** A repair round initiated by {@code from} against the peer address {@code via} (a proxy). */
  RoundResult repair(String from, String to, InetSocketAddress via) throws Exception;

  /** Per-partition element count and fingerprint, one string per partition. */
  List<String> fingerprints(String name) throws Exception;

  /**
   * What the replica holds for each key (missing: absent, or a tombstone where only HTTP is
   * available).
   */
  Map<String, Observed> read(String name, List<String> keys) throws Exception;

  /** The store's self-check (sketches recomputed from a scan equal the maintained ones). */
  boolean selfCheck(String name) throws Exception;

  @Override
  void close();
}
