package dev.reconcile.agent.security;

import static dev.reconcile.agent.security.Agents.load;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import dev.reconcile.agent.AgentCluster;
import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.cluster.ClusterMembership;
import dev.reconcile.agent.cluster.ClusterTicks;
import dev.reconcile.agent.cluster.MemberInfo;
import dev.reconcile.agent.cluster.PartitionDigest;
import dev.reconcile.core.Fingerprint;
import io.vertx.core.json.JsonObject;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster manager (Hazelcast, open-source edition) has no TLS and no member authentication, so
 * anyone who reaches a member's cluster port can join and write the member map. Membership is only
 * a hint: a rogue member that lies about digests cannot make an agent skip a real difference (the
 * gossip round still reaches the member it hid), and one that publishes an address of its own gets
 * a TLS handshake refused and no records (every round authenticates its peer with mTLS).
 */
class ClusterRogueMemberTest {
  @TempDir static Path pki;
  @TempDir Path dir;
  static Certs.Issued ca;
  static Certs.Issued nodeA;
  static Certs.Issued nodeB;
  static Certs.Issued otherCa;
  static Certs.Issued rogue;

  @BeforeAll
  static void certificates() throws Exception {
    ca = Certs.ca(pki, "cluster-ca");
    nodeA = Certs.node(pki, ca, "a");
    nodeB = Certs.node(pki, ca, "b");
    otherCa = Certs.ca(pki, "rogue-ca");
    rogue = Certs.node(pki, otherCa, "evil");
  }

  static Map<String, String> config(Certs.Issued node, int port, int seed) {
    Map<String, String> m = new HashMap<>(PeerTlsTest.tls(node, ca));
    m.put("cluster-listen", "127.0.0.1:" + port);
    m.put("cluster-seeds", "127.0.0.1:" + seed);
    m.put("repair-interval", "0"); // intervals only when the test ticks
    m.put("cluster-fanout", "1");
    return m;
  }

  /** A TLS server with a certificate of another CA that counts connections and plaintext bytes. */
  static final class RogueServer implements AutoCloseable {
    final SSLServerSocket socket;
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger handshakes = new AtomicInteger();
    final AtomicLong applicationBytes = new AtomicLong();
    final AtomicBoolean closed = new AtomicBoolean();

    RogueServer() throws Exception {
      socket =
          (SSLServerSocket)
              Certs.context(otherCa, rogue)
                  .getServerSocketFactory()
                  .createServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
      socket.setWantClientAuth(true);
      Thread t =
          new Thread(
              () -> {
                while (!closed.get()) {
                  try (SSLSocket s = (SSLSocket) socket.accept()) {
                    connections.incrementAndGet();
                    s.setSoTimeout(5000);
                    s.startHandshake();
                    handshakes.incrementAndGet();
                    InputStream in = s.getInputStream();
                    byte[] buf = new byte[4096];
                    int n;
                    while ((n = in.read(buf)) > 0) {
                      applicationBytes.addAndGet(n);
                    }
                  } catch (Exception e) {
                    // handshake refused by the agent, or closed
                  }
                }
              },
              "rogue-peer");
      t.setDaemon(true);
      t.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    @Override
    public void close() throws java.io.IOException {
      closed.set(true);
      socket.close();
    }
  }

  @Test
  void rogueMemberCannotHideADifferenceNorReceiveRecords() throws Exception {
    int pa = AgentCluster.clusterPort("127.0.0.1");
    int pb = AgentCluster.clusterPort("127.0.0.1");
    int pr = AgentCluster.clusterPort("127.0.0.1");
    try (Agents c = new Agents(dir);
        RogueServer evilPeer = new RogueServer()) {
      ReplicaAgent a = c.start("a", config(nodeA, pa, pa));
      ReplicaAgent b = c.start("b", config(nodeB, pb, pa));
      load(a, "secret-a-", 100, 40);
      load(b, "secret-b-", 100, 40);
      ClusterTicks.publish(a.cluster());
      ClusterTicks.publish(b.cluster());

      // The rogue: a plain Hazelcast member with the cluster's name, joined through a's port,
      // posing as a Vert.x node so that agents read its entry.
      AgentConfig.Cluster rc =
          new AgentConfig.Cluster(
              new HostPort("127.0.0.1", pr),
              List.of(new HostPort("127.0.0.1", pa)),
              a.config().cluster().name(),
              1,
              Duration.ofMinutes(5),
              Duration.ofSeconds(10));
      Config h = ClusterMembership.hazelcastConfig(rc);
      String rogueId = UUID.randomUUID().toString();
      h.getMemberAttributeConfig().setAttribute("__vertx.nodeId", rogueId);
      HazelcastInstance hz = Hazelcast.newHazelcastInstance(h);
      AtomicBoolean lying = new AtomicBoolean(true);
      Thread liar = null;
      try {
        IMap<String, String> map = hz.getMap(ClusterMembership.MAP);
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> a.cluster().membership().members().size() == 3);
        String keyA = a.cluster().membership().localMember();
        String keyB = b.cluster().membership().localMember();
        MemberInfo infoA = MemberInfo.parse(keyA, map.get(keyA));
        MemberInfo infoB = MemberInfo.parse(keyB, map.get(keyB));
        // Its own entry: a member that differs from everyone, reached at the rogue's TLS server.
        MemberInfo evil =
            new MemberInfo(
                rogueId,
                "evil",
                a.config().clusterId(),
                new HostPort("127.0.0.1", evilPeer.port()),
                new HostPort("127.0.0.1", evilPeer.port()),
                false,
                PartitionDigest.of(3, p -> new Fingerprint(p + 1, 7, 7)),
                1,
                1,
                System.currentTimeMillis());
        map.put(rogueId, evil.toJson());
        // And the lie: b's entry says b holds what a holds, and a's says a holds what b holds.
        liar =
            new Thread(
                () -> {
                  long seq = 1_000_000;
                  while (lying.get()) {
                    seq++;
                    map.put(keyB, withDigest(infoB, infoA.digest(), seq).toJson());
                    map.put(keyA, withDigest(infoA, infoB.digest(), seq).toJson());
                    try {
                      Thread.sleep(5);
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                },
                "rogue-liar");
        liar.start();
        Thread.sleep(100);

        JsonObject view = clusterView(a);
        JsonObject shownB = member(view, "b");
        assertThat(shownB.getBoolean("differs")).as("the lie is in a's view").isFalse();
        assertThat(member(view, "evil").getBoolean("differs")).isTrue();

        // One interval of a: the differing slot goes to the rogue, the gossip slot to b.
        ClusterTicks.tick(a.cluster());
        JsonObject after = clusterView(a);
        Map<String, JsonObject> rounds = new HashMap<>();
        for (Object o : after.getJsonArray("rounds")) {
          JsonObject r = (JsonObject) o;
          rounds.put(r.getString("nodeId"), r);
        }
        assertThat(rounds.get("evil").getString("reason")).isEqualTo("differs");
        assertThat(rounds.get("evil").getBoolean("ok")).isFalse();
        assertThat(rounds.get("b").getString("reason")).isEqualTo("gossip");
        assertThat(rounds.get("b").getBoolean("ok")).as(rounds.get("b").encode()).isTrue();
        // The difference the rogue hid is repaired both ways.
        assertThat(a.store().recordCount()).isEqualTo(200);
        assertThat(b.store().recordCount()).isEqualTo(200);
        // a connected to the rogue's address (it followed the hint) but refused its
        // certificate: no handshake completed, not one byte of application data.
        await().atMost(Duration.ofSeconds(10)).until(() -> evilPeer.connections.get() >= 1);
        assertThat(evilPeer.handshakes.get()).isZero();
        assertThat(evilPeer.applicationBytes.get()).isZero();
        assertThat(Agents.refusals(a, "tls")).isPositive();
      } finally {
        lying.set(false);
        if (liar != null) {
          liar.join(5000);
        }
        hz.getLifecycleService().terminate();
      }
    }
  }

  static MemberInfo withDigest(MemberInfo m, PartitionDigest d, long seq) {
    return new MemberInfo(
        m.member(),
        m.nodeId(),
        m.clusterId(),
        m.peer(),
        m.http(),
        m.httpTls(),
        d,
        m.records(),
        seq,
        m.publishedAtMillis());
  }

  static JsonObject member(JsonObject view, String node) {
    for (Object o : view.getJsonArray("members")) {
      JsonObject m = (JsonObject) o;
      if (node.equals(m.getString("nodeId"))) {
        return m;
      }
    }
    throw new AssertionError("no member " + node + " in " + view.encodePrettily());
  }

  static JsonObject clusterView(ReplicaAgent a) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + a.httpPort() + "/cluster?rounds=10"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return new JsonObject(r.body());
  }
}
