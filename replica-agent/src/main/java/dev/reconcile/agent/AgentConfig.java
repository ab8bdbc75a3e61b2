package dev.reconcile.agent;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.reconcile.core.RatelessPacing;
import dev.reconcile.core.RepairConfig;
import dev.reconcile.core.SessionLimits;
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
import java.util.function.LongSupplier;

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
    int maxListedElements,
    int ratelessLog2,
    String mode,
    Duration idleTimeout,
    Duration sessionTimeout,
    Duration peerKeepAlive,
    int maxIdleConnections,
    boolean bulkIngest,
    boolean rowBatches,
    int applySliceKeys,
    boolean directIo,
    boolean repairWal,
    Security security,
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
      Duration maxClockSkew,
      boolean tlsPinNodeId,
      long receiveRateLimit) {
    public boolean peerTls() {
      return tlsCert != null;
    }
  }

  /**
   * Most records per batch an agent may be configured to send, and so the most it accepts in one
   * batch from a peer (frames are capped in bytes by max-frame-bytes as well).
   */
  public static final int MAX_BATCH_RECORDS = 100_000;

  /**
   * The default {@code hash-seed}. It is public (it is in this source), so an agent refuses it on a
   * peer port other hosts can reach.
   */
  public static final String DEFAULT_HASH_SEED = "reconcile-default-seed";

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
    d.put("hash-seed", DEFAULT_HASH_SEED);
    d.put("partitions-log2", "4");
    d.put("iblt-max-log2", "15");
    d.put("tombstone-grace", "7d");
    d.put("purge-interval", "1h");
    d.put("rate-limit", "0");
    d.put("batch-records", "1000");
    d.put("batch-bytes", "1MiB");
    d.put("repair-window", "8");
    d.put("max-frame-bytes", "16MiB");
    d.put("max-listed-elements", "4194304");
    d.put("rateless-log2", "14");
    d.put("mode", "rateless");
    d.put("idle-timeout", "30s");
    d.put("session-timeout", "10m");
    d.put("peer-keepalive", "30s");
    d.put("max-idle-connections", "256");
    d.put("bulk-ingest", "true");
    d.put("row-batches", "true");
    d.put("apply-slice-keys", "256");
    d.put("direct-io", "false");
    d.put("repair-wal", "true");
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
    d.put("tls-pin-node-id", "true");
    d.put("receive-rate-limit", "0");
    d.put("cluster-listen", "");
    d.put("cluster-seeds", "");
    d.put("cluster-name", "");
    d.put("cluster-fanout", "2");
    d.put("cluster-gossip-interval", "5m");
    d.put("cluster-failure-timeout", "10s");
    return java.util.Collections.unmodifiableMap(d);
  }

  /**
   * One line per setting for {@code reconcile agent --help}, in the order of {@link #DEFAULTS}
   * (every key has one; docs/operations.md has the full text).
   */
  public static final Map<String, String> DESCRIPTIONS = descriptions();

  private static Map<String, String> descriptions() {
    Map<String, String> d = new LinkedHashMap<>();
    d.put("node-id", "this replica's id, 1-64 of A-Z a-z 0-9 . _ - (required)");
    d.put("cluster-id", "peers of another cluster id are refused");
    d.put("data", "RocksDB directory (created if missing)");
    d.put("peer-listen", "peer protocol address; port 0 picks a free port");
    d.put("http-listen", "HTTP API address");
    d.put("peers", "peers' peer ports, comma-separated");
    d.put("repair-interval", "between background rounds per peer; 0 = on demand only");
    d.put("repair-jitter", "+- fraction of the repair interval");
    d.put("max-sessions", "rounds at once, both roles; more are refused (BUSY)");
    d.put("hash-seed", "cluster secret keying every hash (prefer the config file)");
    d.put("partitions-log2", "2^x partitions; all peers must agree");
    d.put("iblt-max-log2", "largest IBLT, 3 x 2^x cells; all peers must agree");
    d.put("tombstone-grace", "tombstones older than this are purged");
    d.put("purge-interval", "how often tombstones are purged; 0 = never");
    d.put("rate-limit", "bytes/s of repair records sent per round; 0 = unlimited");
    d.put("batch-records", "records per repair batch (at most)");
    d.put("batch-bytes", "bytes per repair batch (at most)");
    d.put("repair-window", "unacknowledged batches in flight per direction");
    d.put("max-frame-bytes", "largest frame accepted, checked before it is read");
    d.put("max-listed-elements", "most elements listed per partition and round; more wait");
    d.put("rateless-log2", "coded symbols maintained per partition, 2^x; 0 = none");
    d.put("mode", "rateless or estimator (the rateless mode needs rateless-log2 > 0)");
    d.put("idle-timeout", "a round silent for this long is aborted");
    d.put("session-timeout", "a round longer than this is aborted");
    d.put("peer-keepalive", "a peer connection stays open this long for the next round; 0 = never");
    d.put("max-idle-connections", "peers' kept connections waiting for a round; the oldest closes");
    d.put("bulk-ingest", "receive a partition held nowhere here as ingested table files");
    d.put(
        "row-batches",
        "offer to send and take partitions held nowhere by the peer as stored rows (RowBatch)");
    d.put(
        "apply-slice-keys",
        "a repair batch is applied in write batches of at most this many keys, the store's"
            + " writer lock released between them, so that client writes wait for one");
    d.put(
        "direct-io",
        "RocksDB's flushes and compactions bypass the page cache (O_DIRECT) when the data folder's"
            + " file system takes it");
    d.put(
        "repair-wal",
        "write every repair batch to the WAL; false (for stores of large values): a batch of 256KiB"
            + " or more skips it and the store flushes when the peer's stream ends");
    d.put("tls-cert", "PEM certificate: mutual TLS on the peer port");
    d.put("tls-key", "PEM private key of tls-cert");
    d.put("tls-ca", "PEM CA that signs the peers' certificates");
    d.put("allow-plaintext", "allow a non-loopback peer-listen without TLS");
    d.put("http-tls", "serve the HTTP API over TLS with tls-cert");
    d.put("admin-token", "bearer token for HTTP writes and repairs (prefer the config file)");
    d.put("read-token", "bearer token for HTTP reads (prefer the config file)");
    d.put("max-sessions-per-peer", "rounds at once from one peer host");
    d.put("max-session-bytes", "most bytes accepted from a peer on one connection");
    d.put(
        "max-clock-skew",
        "refuse received records this far ahead of the local clock; 0 = no check");
    d.put("tls-pin-node-id", "a TLS peer's node id must be a name of its certificate");
    d.put("receive-rate-limit", "bytes/s read from a peer per round; 0 = unlimited");
    d.put("cluster-listen", "cluster mode: the cluster manager's member address; empty = off");
    d.put("cluster-seeds", "cluster mode: members to join (their cluster-listen addresses)");
    d.put("cluster-name", "cluster mode: the cluster manager's name (default: the cluster id)");
    d.put("cluster-fanout", "cluster mode: peers chosen per repair interval");
    d.put("cluster-gossip-interval", "cluster mode: a random peer at least this often");
    d.put("cluster-failure-timeout", "cluster mode: a silent member is dropped after this");
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
            r.duration("max-clock-skew"),
            r.bool("tls-pin-node-id"),
            r.size("receive-rate-limit"));
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
            r.integer("batch-records", 1, MAX_BATCH_RECORDS),
            r.size("batch-bytes"),
            r.integer("repair-window", 1, 1024),
            (int) Math.min(Integer.MAX_VALUE, r.size("max-frame-bytes")),
            r.integer("max-listed-elements", 1, Integer.MAX_VALUE - 8),
            r.integer("rateless-log2", 0, 20),
            r.choice("mode", "rateless", "estimator"),
            r.duration("idle-timeout"),
            r.duration("session-timeout"),
            r.duration("peer-keepalive"),
            r.integer("max-idle-connections", 1, 65536),
            r.bool("bulk-ingest"),
            r.bool("row-batches"),
            r.integer("apply-slice-keys", 1, MAX_BATCH_RECORDS),
            r.bool("direct-io"),
            r.bool("repair-wal"),
            sec,
            cluster(r, cluster));
    if (c.maxFrameBytes() < 64 * 1024) {
      throw new ConfigException("max-frame-bytes " + c.maxFrameBytes() + " is below 64KiB");
    }
    if (c.largestTableBytes() + 4096 > c.maxFrameBytes()) {
      throw new ConfigException(
          "iblt-max-log2 "
              + c.ibltMaxLog2()
              + " makes tables of "
              + c.largestTableBytes()
              + " bytes, which do not fit in max-frame-bytes "
              + c.maxFrameBytes()
              + ": lower iblt-max-log2 or raise max-frame-bytes");
    }
    if (c.batchBytes() >= c.maxFrameBytes()) {
      throw new ConfigException(
          "batch-bytes " + c.batchBytes() + " must be below max-frame-bytes " + c.maxFrameBytes());
    }
    if (sec.receiveRateLimit() > 0
        && c.maxFrameBytes() * 2000.0 / sec.receiveRateLimit() > c.idleTimeout().toMillis()) {
      // A peer sending one frame of the largest size waits that long for the next frame from us.
      throw new ConfigException(
          "receive-rate-limit "
              + sec.receiveRateLimit()
              + " reads a frame of max-frame-bytes "
              + c.maxFrameBytes()
              + " in more than half the idle-timeout "
              + Durations.format(c.idleTimeout())
              + ", so rounds would time out: raise receive-rate-limit or idle-timeout, or lower"
              + " max-frame-bytes");
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
    if (exposed && c.hashSeed().equals(DEFAULT_HASH_SEED)) {
      throw new ConfigException(
          "hash-seed is the public default '"
              + DEFAULT_HASH_SEED
              + "' and peer-listen "
              + c.peerListen()
              + " is not a loopback address: set hash-seed to a long random cluster secret,"
              + " the same on every node");
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

  /** The rateless pacing of this agent's sessions, or null when mode is estimator. */
  public RatelessPacing.Config pacing() {
    return mode.equals("rateless") && ratelessLog2 > 0 ? RatelessPacing.Config.SESSION : null;
  }

  /** The caps a session of this agent enforces. */
  public SessionLimits sessionLimits() {
    return new SessionLimits(maxListedElements, SessionLimits.DEFAULT.chunkElements());
  }

  /**
   * How sessions of this agent stream records: {@code repair-window} batches in flight of up to
   * {@code batch-records} records ({@link #bulkBatchRecords} of a bulk partition) or {@code
   * batch-bytes}; a received batch may hold as many records as any agent may send; records more
   * than {@code max-clock-skew} ahead of {@code wallMillis} are refused.
   */
  public RepairConfig repairConfig(LongSupplier wallMillis) {
    return new RepairConfig(
        repairWindow,
        batchRecords,
        batchBytes,
        bulkBatchRecords(batchRecords),
        MAX_BATCH_RECORDS,
        security.maxClockSkew().toMillis(),
        wallMillis,
        rowBatches);
  }

  /**
   * Most records per batch of a bulk partition (one the peer holds none of, streamed by a range
   * scan): {@value #BULK_BATCH_FACTOR} x {@code batch-records}, at most {@link #MAX_BATCH_RECORDS}.
   * Such batches are still closed at {@code batch-bytes}, so the memory a round holds stays {@code
   * repair-window x batch-bytes}; for small records they carry up to that many bytes instead of
   * {@code batch-records} records, which saves the per-batch costs of a catch-up (frames, worker
   * steps, write batches, acknowledgements).
   */
  static int bulkBatchRecords(int batchRecords) {
    return (int) Math.min(MAX_BATCH_RECORDS, (long) BULK_BATCH_FACTOR * batchRecords);
  }

  /** Records of a bulk batch per record of an ordinary batch, see {@link #bulkBatchRecords}. */
  static final int BULK_BATCH_FACTOR = 16;

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

    String choice(String k, String... allowed) {
      String s = str(k).toLowerCase(Locale.ROOT);
      for (String a : allowed) {
        if (a.equals(s)) {
          return a;
        }
      }
      throw new ConfigException(
          k + ": '" + str(k) + "' is not one of " + String.join(", ", allowed));
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
