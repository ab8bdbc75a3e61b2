package dev.reconcile.agent;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every setting of an agent. Loaded from one YAML or JSON file ({@code --config}) with command-line
 * overrides; keys are the flag names without dashes ({@code node-id: a}). Unknown keys and bad
 * values stop start-up with a message naming the key. Every key is documented in
 * docs/operations.md.
 */
public record AgentConfig(
    String nodeId,
    String clusterId,
    Path dataDir,
    HostPort peerListen,
    HostPort httpListen,
    List<HostPort> peers,
    Duration repairInterval,
    double repairJitter,
    int maxSessions,
    String hashSeed,
    int partitionsLog2,
    int ibltMaxLog2,
    Duration tombstoneGrace,
    Duration purgeInterval,
    long rateLimitBytesPerSecond,
    int batchRecords,
    long batchBytes,
    int repairWindow,
    int maxFrameBytes,
    Duration idleTimeout,
    Duration sessionTimeout,
    Security security,
    Duration clockOffset,
    double estimatorScale,
    Cluster cluster) {

  /** TLS and authentication settings (see docs/security.md). */
  public record Security(
      String tlsCert,
      String tlsKey,
      String tlsCa,
      boolean allowPlaintext,
      boolean httpTls,
      String adminToken,
      String readToken,
      int maxSessionsPerPeer,
      long maxSessionBytes,
      Duration maxClockSkew) {
    public boolean peerTls() {
      return tlsCert != null;
    }
  }

  /**
   * Cluster mode (docs/operations.md, "Cluster mode"): membership from Vert.x's Hazelcast cluster
   * manager, peers chosen from it. Off when {@code listen} is null.
   */
  public record Cluster(
      HostPort listen,
      List<HostPort> seeds,
      String name,
      int fanout,
      Duration gossipInterval,
      Duration failureTimeout) {
    public boolean enabled() {
      return listen != null;
    }
  }

  /** Settings and their defaults, in documentation order. */
  public static final Map<String, String> DEFAULTS = defaults();

  private static Map<String, String> defaults() {
    Map<String, String> d = new LinkedHashMap<>();
    d.put("node-id", "");
    d.put("cluster-id", "default");
    d.put("data", "data");
    d.put("peer-listen", "127.0.0.1:7400");
    d.put("http-listen", "127.0.0.1:7401");
    d.put("peers", "");
    d.put("repair-interval", "30s");
    d.put("repair-jitter", "0.2");
    d.put("max-sessions", "2");
    d.put("hash-seed", "reconcile-default-seed");
    d.put("partitions-log2", "4");
    d.put("iblt-max-log2", "15");
    d.put("tombstone-grace", "7d");
    d.put("purge-interval", "1h");
    d.put("rate-limit", "0");
    d.put("batch-records", "1000");
    d.put("batch-bytes", "1MiB");
    d.put("repair-window", "8");
    d.put("max-frame-bytes", "16MiB");
    d.put("idle-timeout", "30s");
    d.put("session-timeout", "10m");
    d.put("tls-cert", "");
    d.put("tls-key", "");
    d.put("tls-ca", "");
    d.put("allow-plaintext", "false");
    d.put("http-tls", "false");
    d.put("admin-token", "");
    d.put("read-token", "");
    d.put("max-sessions-per-peer", "1");
    d.put("max-session-bytes", "16GiB");
    d.put("max-clock-skew", "1h");
    d.put("cluster-listen", "");
    d.put("cluster-seeds", "");
    d.put("cluster-name", "");
    d.put("cluster-fanout", "2");
    d.put("cluster-gossip-interval", "5m");
    d.put("cluster-failure-timeout", "10s");
    // Testing knobs (docs/replay.md): skew this replica's HLC physical clock; scale its estimates.
    d.put("clock-offset", "0");
    d.put("estimator-scale", "1");
    return java.util.Collections.unmodifiableMap(d);
  }

  /** Reads {@code file} (may be null) and applies {@code overrides} (flag name -> value). */
  public static AgentConfig load(Path file, Map<String, String> overrides) {
    Map<String, String> values = new TreeMap<>();
    if (file != null) {
      values.putAll(readFile(file));
    }
    for (Map.Entry<String, String> e : overrides.entrySet()) {
      if (e.getValue() != null) {
        values.put(e.getKey(), e.getValue());
      }
    }
    return fromMap(values);
  }

  static Map<String, String> readFile(Path file) {
    if (!Files.isRegularFile(file)) {
      throw new ConfigException("config file " + file + " does not exist");
    }
    ObjectMapper m = new ObjectMapper(new YAMLFactory()); // YAML is a superset of JSON
    Object tree;
    try {
      tree = m.readValue(file.toFile(), Object.class);
    } catch (IOException e) {
      throw new ConfigException(
          "config file " + file + " is not valid YAML/JSON: " + e.getMessage().split("\n")[0]);
    }
    if (tree == null) {
      return Map.of();
    }
    if (!(tree instanceof Map<?, ?> map)) {
      throw new ConfigException("config file " + file + " must hold a mapping of keys to values");
    }
    Map<String, String> out = new TreeMap<>();
    for (Map.Entry<?, ?> e : map.entrySet()) {
      String k = String.valueOf(e.getKey());
      Object v = e.getValue();
      if (v instanceof List<?> l) {
        List<String> parts = new ArrayList<>();
        l.forEach(x -> parts.add(String.valueOf(x)));
        out.put(k, String.join(",", parts));
      } else if (v instanceof Map<?, ?>) {
        throw new ConfigException(
            "config key '" + k + "' must be a value or a list, not a mapping");
      } else {
        out.put(k, v == null ? "" : String.valueOf(v));
      }
    }
    return out;
  }

  /** Builds and validates a config from flag-named string values; defaults fill the rest. */
  public static AgentConfig fromMap(Map<String, String> given) {
    for (String k : given.keySet()) {
      if (!DEFAULTS.containsKey(k)) {
        throw new ConfigException(
            "unknown config key '"
                + k
                + "' (known keys: "
                + String.join(", ", DEFAULTS.keySet())
                + ")");
      }
    }
    Map<String, String> v = new LinkedHashMap<>(DEFAULTS);
    v.putAll(given);
    Reader r = new Reader(v);
    String nodeId = r.str("node-id");
    if (nodeId.isEmpty() || !nodeId.matches("[A-Za-z0-9._-]{1,64}")) {
      throw new ConfigException(
          "node-id '" + nodeId + "' must be 1-64 characters of A-Z a-z 0-9 . _ - (it is required)");
    }
    String cluster = r.str("cluster-id");
    if (cluster.isEmpty()) {
      throw new ConfigException("cluster-id must not be empty");
    }
    List<HostPort> peers = new ArrayList<>();
    for (String p : r.str("peers").split(",")) {
      if (!p.isBlank()) {
        peers.add(r.hostPort("peers", p));
      }
    }
    double jitter = r.dbl("repair-jitter");
    if (jitter < 0 || jitter > 1) {
      throw new ConfigException("repair-jitter " + jitter + " outside [0, 1]");
    }
    Security sec =
        new Security(
            r.optional("tls-cert"),
            r.optional("tls-key"),
            r.optional("tls-ca"),
            r.bool("allow-plaintext"),
            r.bool("http-tls"),
            r.optional("admin-token"),
            r.optional("read-token"),
            r.integer("max-sessions-per-peer", 1, 64),
            r.size("max-session-bytes"),
            r.duration("max-clock-skew"));
    if (sec.maxSessionBytes() < 64 * 1024) {
      throw new ConfigException("max-session-bytes " + sec.maxSessionBytes() + " is below 64KiB");
    }
    if ((sec.tlsCert() == null) != (sec.tlsKey() == null)
        || (sec.tlsCert() != null && sec.tlsCa() == null)) {
      throw new ConfigException("tls-cert, tls-key and tls-ca must be given together");
    }
    AgentConfig c =
        new AgentConfig(
            nodeId,
            cluster,
            Path.of(r.str("data")),
            r.hostPort("peer-listen", r.str("peer-listen")),
            r.hostPort("http-listen", r.str("http-listen")),
            List.copyOf(peers),
            r.duration("repair-interval"),
            jitter,
            r.integer("max-sessions", 1, 256),
            r.str("hash-seed"),
            r.integer("partitions-log2", 0, 12),
            r.integer("iblt-max-log2", 4, 20),
            r.duration("tombstone-grace"),
            r.duration("purge-interval"),
            r.size("rate-limit"),
            r.integer("batch-records", 1, 100_000),
            r.size("batch-bytes"),
            r.integer("repair-window", 1, 1024),
            (int) Math.min(Integer.MAX_VALUE, r.size("max-frame-bytes")),
            r.duration("idle-timeout"),
            r.duration("session-timeout"),
            sec,
            r.signedDuration("clock-offset"),
            r.dbl("estimator-scale"),
            cluster(r, cluster));
    if (!(c.estimatorScale() > 0 && c.estimatorScale() <= 1000)) {
      throw new ConfigException("estimator-scale " + c.estimatorScale() + " outside (0, 1000]");
    }
    if (c.maxFrameBytes() < 64 * 1024) {
      throw new ConfigException("max-frame-bytes " + c.maxFrameBytes() + " is below 64KiB");
    }
    if (c.batchBytes() >= c.maxFrameBytes()) {
      throw new ConfigException(
          "batch-bytes " + c.batchBytes() + " must be below max-frame-bytes " + c.maxFrameBytes());
    }
    if (c.hashSeed().isEmpty()) {
      throw new ConfigException("hash-seed must not be empty");
    }
    if (c.cluster().enabled()
        && !c.cluster().listen().isLoopback()
        && !sec.peerTls()
        && !sec.allowPlaintext()) {
      throw new ConfigException(
          "cluster-listen "
              + c.cluster().listen()
              + " is not a loopback address: the cluster manager authenticates no one, so the"
              + " peer addresses members publish are only hints; configure tls-cert, tls-key and"
              + " tls-ca so that every round authenticates its peer, or set allow-plaintext: true");
    }
    boolean exposed = !c.peerListen().isLoopback();
    if (exposed && !sec.peerTls() && !sec.allowPlaintext()) {
      throw new ConfigException(
          "peer-listen "
              + c.peerListen()
              + " is not a loopback address: configure tls-cert, tls-key and tls-ca,"
              + " or set allow-plaintext: true to accept unauthenticated plaintext peers");
    }
    return c;
  }

  private static Cluster cluster(Reader r, String clusterId) {
    String listen = r.str("cluster-listen");
    List<HostPort> seeds = new ArrayList<>();
    for (String p : r.str("cluster-seeds").split(",")) {
      if (!p.isBlank()) {
        seeds.add(r.hostPort("cluster-seeds", p));
      }
    }
    String name = r.str("cluster-name");
    int fanout = r.integer("cluster-fanout", 1, 16);
    Duration gossip = r.duration("cluster-gossip-interval");
    Duration failure = r.duration("cluster-failure-timeout");
    if (listen.isEmpty()) {
      if (!seeds.isEmpty() || !name.isEmpty()) {
        throw new ConfigException(
            "cluster-seeds and cluster-name need cluster-listen (the cluster manager's address)");
      }
      return new Cluster(null, List.of(), clusterId, fanout, gossip, failure);
    }
    HostPort hp = r.hostPort("cluster-listen", listen);
    if (hp.port() == 0) {
      throw new ConfigException(
          "cluster-listen " + hp + ": give a fixed port (members find each other by it)");
    }
    for (HostPort s : seeds) {
      if (s.port() == 0) {
        throw new ConfigException("cluster-seeds " + s + ": port 0 is not an address to join");
      }
    }
    if (failure.compareTo(Duration.ofSeconds(2)) < 0
        || failure.compareTo(Duration.ofHours(1)) > 0) {
      throw new ConfigException(
          "cluster-failure-timeout " + Durations.format(failure) + " outside [2s, 1h]");
    }
    if (!name.isEmpty() && !name.matches("[A-Za-z0-9._-]{1,64}")) {
      throw new ConfigException(
          "cluster-name '" + name + "' must be 1-64 characters of A-Z a-z 0-9 . _ -");
    }
    return new Cluster(
        hp, List.copyOf(seeds), name.isEmpty() ? clusterId : name, fanout, gossip, failure);
  }

  /** Largest IBLT wire size this configuration may send or accept. */
  public long largestTableBytes() {
    return 3L * (1L << ibltMaxLog2) * 14;
  }

  /** Rejected configuration, with a message naming the key. */
  public static final class ConfigException extends RuntimeException {
    public ConfigException(String message) {
      super(message);
    }
  }

  private record Reader(Map<String, String> v) {
    String str(String k) {
      return v.get(k).trim();
    }

    String optional(String k) {
      String s = str(k);
      return s.isEmpty() ? null : s;
    }

    boolean bool(String k) {
      String s = str(k).toLowerCase(Locale.ROOT);
      if (s.equals("true") || s.equals("false")) {
        return Boolean.parseBoolean(s);
      }
      throw new ConfigException(k + " '" + str(k) + "' is not true or false");
    }

    int integer(String k, int min, int max) {
      try {
        int n = Integer.parseInt(str(k));
        if (n < min || n > max) {
          throw new ConfigException(k + " " + n + " outside [" + min + ", " + max + "]");
        }
        return n;
      } catch (NumberFormatException e) {
        throw new ConfigException(k + " '" + str(k) + "' is not an integer");
      }
    }

    double dbl(String k) {
      try {
        return Double.parseDouble(str(k));
      } catch (NumberFormatException e) {
        throw new ConfigException(k + " '" + str(k) + "' is not a number");
      }
    }

    Duration duration(String k) {
      try {
        Duration d = Durations.parse(str(k));
        if (d.isNegative()) {
          throw new ConfigException(k + " must not be negative");
        }
        return d;
      } catch (IllegalArgumentException | ArithmeticException e) {
        throw new ConfigException(k + ": " + e.getMessage());
      }
    }

    /** A duration with an optional leading minus sign ({@code clock-offset: -5s}). */
    Duration signedDuration(String k) {
      String s = str(k);
      boolean neg = s.startsWith("-");
      try {
        Duration d = Durations.parse(neg ? s.substring(1) : s);
        return neg ? d.negated() : d;
      } catch (IllegalArgumentException e) {
        throw new ConfigException(k + ": " + e.getMessage());
      }
    }

    HostPort hostPort(String k, String s) {
      try {
        return HostPort.parse(s);
      } catch (IllegalArgumentException e) {
        throw new ConfigException(k + ": " + e.getMessage());
      }
    }

    /** Sizes: plain bytes, or with k/KiB/MB/MiB/GB/GiB suffixes. */
    long size(String k) {
      String s = str(k).replace("_", "");
      java.util.regex.Matcher m =
          java.util.regex.Pattern.compile("(?i)(\\d+)\\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?")
              .matcher(s);
      if (!m.matches()) {
        throw new ConfigException(
            k + " '" + s + "' is not a size (examples: 0, 65536, 512KiB, 16MiB, 1GB)");
      }
      long n;
      try {
        n = Long.parseLong(m.group(1));
      } catch (NumberFormatException e) {
        throw new ConfigException(k + " '" + s + "' is too large");
      }
      String u = m.group(2) == null ? "b" : m.group(2).toLowerCase(Locale.ROOT);
      long mult =
          switch (u) {
            case "b" -> 1;
            case "k", "kib" -> 1024;
            case "kb" -> 1000;
            case "m", "mib" -> 1024 * 1024;
            case "mb" -> 1_000_000;
            case "g", "gib" -> 1024L * 1024 * 1024;
            default -> 1_000_000_000L;
          };
      try {
        return Math.multiplyExact(n, mult);
      } catch (ArithmeticException e) {
        throw new ConfigException(k + " '" + s + "' is too large");
      }
    }
  }
}
