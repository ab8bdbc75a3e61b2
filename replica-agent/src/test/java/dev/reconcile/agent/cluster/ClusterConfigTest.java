package dev.reconcile.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.hazelcast.config.Config;
import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.HostPort;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The cluster keys and the Hazelcast configuration made from them. */
class ClusterConfigTest {
  static Map<String, String> min() {
    Map<String, String> m = new HashMap<>();
    m.put("node-id", "a");
    m.put("cluster-id", "prod");
    return m;
  }

  @Test
  void offByDefault() {
    AgentConfig.Cluster c = AgentConfig.fromMap(min()).cluster();
    assertThat(c.enabled()).isFalse();
    assertThat(c.fanout()).isEqualTo(2);
    assertThat(c.gossipInterval()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.failureTimeout()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void keysAreParsedAndTheNameDefaultsToTheClusterId() {
    Map<String, String> m = min();
    m.put("cluster-listen", "127.0.0.1:5701");
    m.put("cluster-seeds", "127.0.0.1:5701, 127.0.0.1:5702");
    m.put("cluster-fanout", "1");
    m.put("cluster-gossip-interval", "30s");
    m.put("cluster-failure-timeout", "6s");
    AgentConfig.Cluster c = AgentConfig.fromMap(m).cluster();
    assertThat(c.enabled()).isTrue();
    assertThat(c.listen()).isEqualTo(new HostPort("127.0.0.1", 5701));
    assertThat(c.seeds()).extracting(HostPort::port).containsExactly(5701, 5702);
    assertThat(c.name()).isEqualTo("prod");
    assertThat(c.fanout()).isEqualTo(1);
    m.put("cluster-name", "prod-eu");
    assertThat(AgentConfig.fromMap(m).cluster().name()).isEqualTo("prod-eu");
  }

  @Test
  void badClusterKeysStopStartUpNamingTheKey() {
    assertBad(Map.of("cluster-seeds", "127.0.0.1:5701"), "need cluster-listen");
    assertBad(Map.of("cluster-listen", "127.0.0.1:0"), "give a fixed port");
    assertBad(Map.of("cluster-listen", "nohost"), "cluster-listen: 'nohost' is not HOST:PORT");
    assertBad(
        Map.of("cluster-listen", "127.0.0.1:5701", "cluster-seeds", "x:1,bad"),
        "cluster-seeds: 'bad' is not HOST:PORT");
    assertBad(Map.of("cluster-listen", "127.0.0.1:5701", "cluster-fanout", "0"), "outside [1, 16]");
    assertBad(
        Map.of("cluster-listen", "127.0.0.1:5701", "cluster-failure-timeout", "1s"),
        "cluster-failure-timeout 1s outside [2s, 1h]");
    assertBad(
        Map.of("cluster-listen", "127.0.0.1:5701", "cluster-name", "has space"),
        "cluster-name 'has space'");
  }

  /** Off loopback, members' addresses come from an unauthenticated engine: rounds need mTLS. */
  @Test
  void nonLoopbackClusterAddressNeedsPeerTlsOrAnExplicitPlaintextFlag() {
    assertBad(
        Map.of("cluster-listen", "10.0.0.5:5701"),
        "cluster-listen 10.0.0.5:5701 is not a loopback address");
    Map<String, String> m = min();
    m.put("cluster-listen", "10.0.0.5:5701");
    m.put("allow-plaintext", "true");
    assertThat(AgentConfig.fromMap(m).cluster().enabled()).isTrue();
  }

  static void assertBad(Map<String, String> extra, String message) {
    Map<String, String> m = min();
    m.putAll(extra);
    assertThatThrownBy(() -> AgentConfig.fromMap(m))
        .isInstanceOf(AgentConfig.ConfigException.class)
        .hasMessageContaining(message);
  }

  /** Explicit addresses only: TCP/IP join to the listed seeds, no multicast, no discovery. */
  @Test
  void hazelcastJoinsOnlyTheListedSeeds() {
    Map<String, String> m = min();
    m.put("cluster-listen", "127.0.0.12:5702");
    m.put("cluster-seeds", "127.0.0.11:5701,127.0.0.12:5702");
    m.put("cluster-failure-timeout", "7s");
    Config h = ClusterMembership.hazelcastConfig(AgentConfig.fromMap(m).cluster());
    assertThat(h.getClusterName()).isEqualTo("prod");
    assertThat(h.getNetworkConfig().getPort()).isEqualTo(5702);
    assertThat(h.getNetworkConfig().isPortAutoIncrement()).isFalse();
    var join = h.getNetworkConfig().getJoin();
    assertThat(join.getMulticastConfig().isEnabled()).isFalse();
    assertThat(join.getAutoDetectionConfig().isEnabled()).isFalse();
    assertThat(join.getTcpIpConfig().isEnabled()).isTrue();
    assertThat(join.getTcpIpConfig().getMembers())
        .containsExactly("127.0.0.11:5701", "127.0.0.12:5702");
    assertThat(h.getProperty("hazelcast.local.localAddress")).isEqualTo("127.0.0.12");
    assertThat(h.getProperty("hazelcast.socket.bind.any")).isEqualTo("false");
    assertThat(h.getProperty("hazelcast.phone.home.enabled")).isEqualTo("false");
    assertThat(h.getProperty("hazelcast.max.no.heartbeat.seconds")).isEqualTo("7");
    m.put("cluster-listen", "0.0.0.0:5701");
    m.put("peer-listen", "0.0.0.0:7400");
    m.put("allow-plaintext", "true");
    m.put("hash-seed", "a long random cluster secret");
    Config any = ClusterMembership.hazelcastConfig(AgentConfig.fromMap(m).cluster());
    assertThat(any.getProperty("hazelcast.socket.bind.any")).isEqualTo("true");
    assertThat(any.getProperty("hazelcast.local.localAddress")).isNull();
  }
}
