package dev.reconcile.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.RepairConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentConfigTest {
  @TempDir Path dir;

  static Map<String, String> min() {
    Map<String, String> m = new HashMap<>();
    m.put("node-id", "a");
    return m;
  }

  @Test
  void bulkBatchesHoldSixteenTimesBatchRecordsAtMostWhatAnyAgentAccepts() {
    Map<String, String> m = min();
    assertThat(AgentConfig.fromMap(m).repairConfig(() -> 0L).bulkBatchRecords()).isEqualTo(16_000);
    m.put("batch-records", "50");
    RepairConfig r = AgentConfig.fromMap(m).repairConfig(() -> 0L);
    assertThat(r.batchRecords()).isEqualTo(50);
    assertThat(r.bulkBatchRecords()).isEqualTo(800);
    m.put("batch-records", "10000");
    r = AgentConfig.fromMap(m).repairConfig(() -> 0L);
    assertThat(r.bulkBatchRecords()).isEqualTo(AgentConfig.MAX_BATCH_RECORDS);
    assertThat(r.maxBatchRecords()).isEqualTo(AgentConfig.MAX_BATCH_RECORDS);
    assertThat(r.batchBytes()).isEqualTo(1 << 20);
  }

  @Test
  void defaultsListenOnLoopback() {
    AgentConfig c = AgentConfig.fromMap(min());
    assertThat(c.peerListen().isLoopback()).isTrue();
    assertThat(c.httpListen().isLoopback()).isTrue();
    assertThat(c.repairInterval()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.partitionsLog2()).isEqualTo(4);
  }

  @Test
  void aTableLargerThanAFrameIsRefusedAtStartNamingBothKeys() {
    Map<String, String> m = min();
    m.put("iblt-max-log2", "19"); // 3 x 2^19 cells x 14 B = 22 MB
    assertThatThrownBy(() -> AgentConfig.fromMap(m))
        .hasMessageContaining("iblt-max-log2 19")
        .hasMessageContaining("max-frame-bytes 16777216");
    m.put("max-frame-bytes", "32MiB");
    assertThat(AgentConfig.fromMap(m).ibltMaxLog2()).isEqualTo(19);
    m.put("iblt-max-log2", "18");
    m.remove("max-frame-bytes");
    assertThat(AgentConfig.fromMap(m).largestTableBytes()).isLessThan(16L << 20);
  }

  @Test
  void theListCapIsAKeyAndReachesTheSessions() {
    Map<String, String> m = min();
    assertThat(AgentConfig.fromMap(m).sessionLimits().maxMissingPerPartition()).isEqualTo(1 << 22);
    m.put("max-listed-elements", "1000");
    assertThat(AgentConfig.fromMap(m).sessionLimits().maxMissingPerPartition()).isEqualTo(1000);
    m.put("max-listed-elements", "0");
    assertThatThrownBy(() -> AgentConfig.fromMap(m)).hasMessageContaining("max-listed-elements");
  }

  @Test
  void fileThenFlags() throws Exception {
    Path f = dir.resolve("agent.yaml");
    Files.writeString(
        f,
        "node-id: a\npeers: [127.0.0.1:7410, \"127.0.0.1:7420\"]\nrepair-interval: 5m\nbatch-bytes: 512KiB\n");
    AgentConfig c = AgentConfig.load(f, Map.of("repair-interval", "0"));
    assertThat(c.peers()).extracting(HostPort::port).containsExactly(7410, 7420);
    assertThat(c.repairInterval()).isZero();
    assertThat(c.batchBytes()).isEqualTo(512 * 1024);
    Path j = dir.resolve("agent.json");
    Files.writeString(j, "{\"node-id\": \"b\", \"rate-limit\": \"10MB\"}");
    assertThat(AgentConfig.load(j, Map.of()).rateLimitBytesPerSecond()).isEqualTo(10_000_000);
  }

  @Test
  void unknownKeysAndBadValuesStopStartUpNamingTheKey() throws Exception {
    Map<String, String> m = min();
    m.put("repair-intervall", "5s");
    assertThatThrownBy(() -> AgentConfig.fromMap(m))
        .hasMessageContaining("unknown config key 'repair-intervall'");
    assertBad("repair-interval", "soon", "repair-interval: 'soon' is not a duration");
    assertBad("repair-interval", "5", "needs a unit");
    assertBad("peers", "localhost", "peers: 'localhost' is not HOST:PORT");
    assertBad("peer-listen", "127.0.0.1:99999", "port 99999");
    assertBad("max-sessions", "0", "max-sessions 0 outside");
    assertBad("receive-rate-limit", "fast", "receive-rate-limit 'fast' is not a size");
    // 16 MiB at 1 MiB/s is 16 s, more than half the 30 s idle timeout: a peer would time out.
    assertBad("receive-rate-limit", "1MiB", "max-frame-bytes 16777216 in more than half");
    Map<String, String> ok = min();
    ok.put("receive-rate-limit", "2MiB");
    assertThat(AgentConfig.fromMap(ok).security().receiveRateLimit()).isEqualTo(2 << 20);
    assertBad("batch-bytes", "lots", "batch-bytes 'lots' is not a size");
    assertBad("node-id", "", "node-id");
    assertBad("node-id", "has space", "node-id 'has space'");
    assertBad("allow-plaintext", "yes", "allow-plaintext 'yes' is not true or false");
    assertBad("tls-cert", "/x.pem", "must be given together");
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "node-id: [a\n");
    assertThatThrownBy(() -> AgentConfig.load(bad, Map.of()))
        .hasMessageContaining("is not valid YAML/JSON");
    assertThatThrownBy(() -> AgentConfig.load(dir.resolve("missing.yaml"), Map.of()))
        .hasMessageContaining("does not exist");
  }

  @Test
  void nonLoopbackPeerPortNeedsTlsOrAnExplicitPlaintextFlag() {
    Map<String, String> m = min();
    m.put("peer-listen", "0.0.0.0:7400");
    m.put("hash-seed", "a cluster secret");
    assertThatThrownBy(() -> AgentConfig.fromMap(m))
        .hasMessageContaining("not a loopback address")
        .hasMessageContaining("allow-plaintext");
    m.put("allow-plaintext", "true");
    assertThat(AgentConfig.fromMap(m).security().allowPlaintext()).isTrue();
  }

  @Test
  void thePublicDefaultSeedIsRefusedOnANonLoopbackPeerPort() {
    Map<String, String> m = min();
    m.put("peer-listen", "10.1.2.3:7400");
    m.put("allow-plaintext", "true");
    assertThatThrownBy(() -> AgentConfig.fromMap(m))
        .isInstanceOf(AgentConfig.ConfigException.class)
        .hasMessageContaining("hash-seed")
        .hasMessageContaining(AgentConfig.DEFAULT_HASH_SEED)
        .hasMessageContaining("peer-listen 10.1.2.3:7400 is not a loopback address");
    // Spelled out explicitly, it is still the public default.
    m.put("hash-seed", AgentConfig.DEFAULT_HASH_SEED);
    assertThatThrownBy(() -> AgentConfig.fromMap(m)).hasMessageContaining("hash-seed");
    m.put("hash-seed", "a long random cluster secret");
    assertThat(AgentConfig.fromMap(m).hashSeed()).isEqualTo("a long random cluster secret");
    // On loopback (tests, one host) the default seed stays accepted.
    assertThat(AgentConfig.fromMap(min()).hashSeed()).isEqualTo(AgentConfig.DEFAULT_HASH_SEED);
  }

  @Test
  void testHooksAreNotConfigKeys() {
    for (String key : new String[] {"clock-offset", "estimator-scale"}) {
      assertThat(AgentConfig.DEFAULTS).doesNotContainKey(key);
      assertBad(key, "1", "unknown config key '" + key + "'");
    }
  }

  @Test
  void everyKeyHasAHelpLineAndARowInTheOperationsGuide() throws Exception {
    assertThat(AgentConfig.DESCRIPTIONS.keySet())
        .containsExactlyElementsOf(AgentConfig.DEFAULTS.keySet());
    String ops = Files.readString(Path.of("..", "docs", "operations.md"));
    for (String key : AgentConfig.DEFAULTS.keySet()) {
      assertThat(ops).as("docs/operations.md row of %s", key).contains("`" + key + "`");
    }
  }

  private static void assertBad(String key, String value, String message) {
    Map<String, String> m = min();
    m.put(key, value);
    assertThatThrownBy(() -> AgentConfig.fromMap(m))
        .as(key + "=" + value)
        .hasMessageContaining(message);
  }
}
