package dev.reconcile.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.ReplicaRecord;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/** Agents in one JVM on loopback, for tests (shared by the security and fuzz tests). */
public final class AgentCluster implements AutoCloseable {
  final List<ReplicaAgent> agents = new ArrayList<>();
  private final Path dir;

  AgentCluster(Path dir) {
    this.dir = dir;
  }

  /**
   * A port for a cluster member to listen on (a member needs its port before it starts: the seeds
   * name it), free on {@code host} now, and below the kernel's ephemeral range. A port from {@code
   * bind(0)} comes from that range, the one outgoing connections take their local ports from: in
   * the moment between picking it and the member binding it, a connection of another member could
   * take it (a CI run failed so: "Port [43491] is already in use"). Below the range only listeners
   * that pick a fixed port compete, and each checks the port is free.
   */
  public static int clusterPort(String host) throws IOException {
    int low = 32_768;
    try {
      // readAllLines, not readString: /proc reports a size of 0, and readString read one byte here.
      String[] range =
          Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
              .get(0)
              .trim()
              .split("\\s+");
      low = Integer.parseInt(range[0]);
    } catch (IOException | RuntimeException e) {
      // Not Linux, or not readable: the Linux default.
    }
    if (low < 2_048) {
      low = 32_768; // a range that leaves nothing below it: use the Linux default's floor
    }
    int from = Math.max(1_024, low - 12_000);
    InetAddress addr = InetAddress.getByName(host);
    ThreadLocalRandom r = ThreadLocalRandom.current();
    for (int attempt = 0; attempt < 500; attempt++) {
      int port = from + r.nextInt(Math.max(1, low - from));
      try (ServerSocket s = new ServerSocket()) {
        s.bind(new InetSocketAddress(addr, port), 1);
        return port;
      } catch (BindException e) {
        // taken: try another
      }
    }
    throw new IOException("no free port in [" + from + ", " + low + ") on " + host);
  }

  /**
   * Loopback ports picked by the OS, on-demand rounds only, small sketches, a 10 s idle timeout.
   */
  public static Map<String, String> baseConfig(String node, Path dir) {
    Map<String, String> m = new HashMap<>();
    m.put("node-id", node);
    m.put("cluster-id", "test");
    m.put("data", dir.resolve(node).toString());
    m.put("peer-listen", "127.0.0.1:0");
    m.put("http-listen", "127.0.0.1:0");
    m.put("repair-interval", "0");
    m.put("purge-interval", "0");
    m.put("hash-seed", "test-seed");
    m.put("partitions-log2", "3");
    m.put("iblt-max-log2", "12");
    m.put("idle-timeout", "10s");
    return m;
  }

  ReplicaAgent start(String node, Map<String, String> overrides) throws Exception {
    return start(node, overrides, null);
  }

  ReplicaAgent start(String node, Map<String, String> overrides, EstimatorFactory estimators)
      throws Exception {
    Map<String, String> m = baseConfig(node, dir);
    m.putAll(overrides);
    AgentConfig c = AgentConfig.fromMap(m);
    ReplicaAgent a = estimators == null ? ReplicaAgent.start(c) : ReplicaAgent.start(c, estimators);
    agents.add(a);
    return a;
  }

  /**
   * Value of a counter in the agent's Prometheus scrape, summed over matching series (0 if none).
   */
  public static double metric(ReplicaAgent a, String name, String labels) {
    double sum = 0;
    for (String line : a.metrics().scrape().split("\n")) {
      if (line.startsWith(name + "{") && line.contains(labels)) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  static HostPort peerOf(ReplicaAgent a) {
    return new HostPort("127.0.0.1", a.peerPort());
  }

  static RoundReport repair(ReplicaAgent from, ReplicaAgent to) throws Exception {
    return repair(from, to, false);
  }

  static RoundReport repair(ReplicaAgent from, ReplicaAgent to, boolean dryRun) throws Exception {
    return from.repair(peerOf(to), dryRun)
        .toCompletionStage()
        .toCompletableFuture()
        .get(60, TimeUnit.SECONDS);
  }

  /** Every record (tombstones included), by key, as a comparable map. */
  static TreeMap<String, String> contents(ReplicaStore s) {
    TreeMap<String, String> m = new TreeMap<>();
    s.forEachRecord(
        (ReplicaRecord r) ->
            m.put(
                KeyCodec.encode(r.key()),
                (r.tombstone() ? "DEL" : KeyCodec.encode(r.value()))
                    + "@"
                    + Long.toUnsignedString(r.version())
                    + "/"
                    + r.origin()));
    return m;
  }

  static void assertConverged(ReplicaAgent... as) {
    TreeMap<String, String> first = contents(as[0].store());
    int p = as[0].store().sketches().params().partitions();
    for (ReplicaAgent a : as) {
      assertThat(contents(a.store())).as("records of %s", a.config().nodeId()).isEqualTo(first);
      for (int i = 0; i < p; i++) {
        assertThat(a.store().sketches().fingerprint(i))
            .isEqualTo(as[0].store().sketches().fingerprint(i));
      }
    }
  }

  void stop(ReplicaAgent a) {
    a.close();
    agents.remove(a);
  }

  @Override
  public void close() {
    for (ReplicaAgent a : agents) {
      a.close();
    }
    agents.clear();
  }
}
