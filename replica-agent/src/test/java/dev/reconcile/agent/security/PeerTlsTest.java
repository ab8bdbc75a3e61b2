package dev.reconcile.agent.security;

import static dev.reconcile.agent.security.Agents.assertConverged;
import static dev.reconcile.agent.security.Agents.load;
import static dev.reconcile.agent.security.Agents.refusals;
import static dev.reconcile.agent.security.Agents.repair;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agent-to-agent mutual TLS with certificates made at test time: CA-signed agents converge; a peer
 * with a certificate of another CA, a self-signed one, none at all, or plaintext gets nothing and
 * is counted as {@code reconcile_peer_refusals_total{reason="tls"}}; the start-up rule for
 * non-loopback addresses.
 */
class PeerTlsTest {
  @TempDir static Path pki;
  @TempDir Path dir;
  static Certs.Issued ca;
  static Certs.Issued otherCa;
  static Certs.Issued nodeA;
  static Certs.Issued nodeB;
  static Certs.Issued rogue;
  static Certs.Issued self;

  @BeforeAll
  static void certificates() throws Exception {
    ca = Certs.ca(pki, "cluster-ca");
    otherCa = Certs.ca(pki, "other-ca");
    nodeA = Certs.node(pki, ca, "a");
    nodeB = Certs.node(pki, ca, "b");
    rogue = Certs.node(pki, otherCa, "rogue");
    self = Certs.selfSigned(pki, "self");
  }

  static Map<String, String> tls(Certs.Issued node, Certs.Issued trust) {
    Map<String, String> m = new HashMap<>();
    m.put("tls-cert", node.certPem().toString());
    m.put("tls-key", node.keyPem().toString());
    m.put("tls-ca", trust.certPem().toString());
    m.put("idle-timeout", "3s");
    return m;
  }

  @Test
  void agentsWithCaSignedCertificatesConverge() throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent a = c.start("a", tls(nodeA, ca));
      ReplicaAgent b = c.start("b", tls(nodeB, ca));
      load(a, "a", 400, 50);
      load(b, "b", 300, 50);
      RoundReport r = repair(a, b);
      assertThat(r.ok).as(r.error).isTrue();
      assertThat(r.recordsSent).isEqualTo(400);
      assertThat(r.recordsReceived).isEqualTo(300);
      assertConverged(a, b);
      assertThat(refusals(b, "tls")).isZero();
    }
  }

  @Test
  void aNodeSpeakingWithAnotherNodesCertificateIsRefused() throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent b = c.start("b", tls(nodeB, ca));
      load(b, "secret", 100, 20);
      // Node "c" holds a valid certificate of the cluster CA, but it was issued to "a".
      ReplicaAgent impostor = c.start("c", tls(nodeA, ca));
      load(impostor, "junk", 30, 20);
      RoundReport in = repair(impostor, b);
      assertThat(in.ok).isFalse();
      assertThat(in.error).contains("UNAUTHORIZED").contains("issued to [a");
      RoundReport out = repair(b, impostor);
      assertThat(out.ok).isFalse();
      assertThat(out.error).contains("peer says it is node 'c'");
      assertThat(b.store().recordCount()).isEqualTo(100);
      assertThat(impostor.store().recordCount()).isEqualTo(30);
      assertThat(refusals(b, "unauthorized")).isPositive();
      // Without pinning the CA alone vouches, and the round goes through.
      ReplicaAgent unpinned = c.start("d", withPin(tls(nodeA, ca), false));
      ReplicaAgent lenientB = c.start("e", withPin(tls(nodeB, ca), false));
      assertThat(repair(unpinned, lenientB).ok).isTrue();
    }
  }

  @Test
  void aServerWhoseCertificateDoesNotNameTheAddressIsRefused() throws Exception {
    Certs.Issued elsewhere =
        Certs.node(
            java.nio.file.Files.createDirectories(dir.resolve("elsewhere")),
            ca,
            "b",
            new org.bouncycastle.asn1.x509.GeneralName(
                org.bouncycastle.asn1.x509.GeneralName.dNSName, "b.example"));
    try (Agents c = new Agents(dir)) {
      ReplicaAgent b = c.start("b", tls(elsewhere, ca));
      ReplicaAgent a = c.start("a", tls(nodeA, ca));
      load(a, "k", 50, 10);
      RoundReport r = repair(a, b); // a connects to 127.0.0.1, which b's certificate does not name
      assertThat(r.ok).isFalse();
      assertThat(b.store().recordCount()).isZero();
    }
  }

  static Map<String, String> withPin(Map<String, String> m, boolean pin) {
    Map<String, String> out = new HashMap<>(m);
    out.put("tls-pin-node-id", Boolean.toString(pin));
    return out;
  }

  @Test
  void peersWithoutAValidCertificateGetNothing() throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent b = c.start("b", tls(nodeB, ca));
      load(b, "secret", 200, 40);
      // Another CA (trusting itself), a self-signed certificate, and plaintext: each both ways.
      ReplicaAgent fromOtherCa = c.start("x", tls(rogue, otherCa));
      ReplicaAgent selfSigned = c.start("y", tls(self, self));
      ReplicaAgent plain = c.start("z", Map.of("idle-timeout", "3s"));
      for (ReplicaAgent bad : new ReplicaAgent[] {fromOtherCa, selfSigned, plain}) {
        load(bad, "junk-" + bad.config().nodeId() + "-", 50, 20);
        double before = refusals(b, "tls");
        RoundReport in = repair(bad, b);
        assertThat(in.ok).as("%s -> b", bad.config().nodeId()).isFalse();
        RoundReport out = repair(b, bad);
        assertThat(out.ok).as("b -> %s", bad.config().nodeId()).isFalse();
        String who = bad.config().nodeId();
        // The refusal is logged and counted by b (as server for `in`, as client for `out`).
        await()
            .atMost(Duration.ofSeconds(10))
            .untilAsserted(
                () ->
                    assertThat(refusals(b, "tls"))
                        .as("tls refusals at b after %s", who)
                        .isGreaterThan(before));
        assertThat(bad.store().recordCount()).as("records that reached %s", who).isEqualTo(50);
      }
      assertThat(b.store().recordCount()).isEqualTo(200);
    }
  }

  @Test
  void aTlsClientWithoutACertificateIsRefused() throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent b = c.start("b", tls(nodeB, ca));
      // Trusts the cluster CA but presents no certificate.
      SSLSocket s =
          (SSLSocket)
              Certs.context(ca, null).getSocketFactory().createSocket("127.0.0.1", b.peerPort());
      s.setSoTimeout(10_000);
      assertThatThrownBy(
              () -> {
                s.startHandshake();
                s.getOutputStream().write(new byte[] {0, 0, 0, 1, 0});
                s.getOutputStream().flush();
                InputStream in = s.getInputStream();
                if (in.read() < 0) {
                  throw new java.io.EOFException("closed by the agent");
                }
              })
          .isInstanceOf(java.io.IOException.class);
      s.close();
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> assertThat(refusals(b, "tls")).isGreaterThanOrEqualTo(1));
      // With a CA-signed client certificate the same handshake succeeds.
      try (SSLSocket ok =
          (SSLSocket)
              Certs.context(ca, nodeA).getSocketFactory().createSocket("127.0.0.1", b.peerPort())) {
        ok.startHandshake();
        assertThat(ok.getSession().getPeerCertificates()[0]).isEqualTo(nodeB.cert());
      }
    }
  }

  @Test
  void nonLoopbackListenerNeedsCertificatesOrAllowPlaintext() {
    Map<String, String> m = Agents.base("a", dir);
    m.put("peer-listen", "0.0.0.0:7400");
    assertThatThrownBy(() -> AgentConfig.fromMap(m))
        .isInstanceOf(AgentConfig.ConfigException.class)
        .hasMessageContaining("not a loopback address")
        .hasMessageContaining("allow-plaintext");
    m.put("allow-plaintext", "true");
    assertThat(AgentConfig.fromMap(m).security().peerTls()).isFalse();
    m.remove("allow-plaintext");
    m.putAll(tls(nodeA, ca));
    assertThat(AgentConfig.fromMap(m).security().peerTls()).isTrue();
    // Loopback runs plaintext by default.
    assertThat(AgentConfig.fromMap(Agents.base("a", dir)).security().peerTls()).isFalse();
    // Incomplete TLS settings are refused.
    Map<String, String> half = Agents.base("a", dir);
    half.put("tls-cert", nodeA.certPem().toString());
    assertThatThrownBy(() -> AgentConfig.fromMap(half))
        .hasMessageContaining("must be given together");
  }
}
