package dev.reconcile.agent;

import static dev.reconcile.agent.AgentCluster.assertConverged;
import static dev.reconcile.agent.AgentCluster.metric;
import static dev.reconcile.agent.AgentCluster.repair;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Done;
import dev.reconcile.core.wire.Envelope;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Peer connections carry one round after another ({@code peer-keepalive}): rounds to one peer share
 * a connection; a connection the peer closed is not reused; one it closed just as a round began
 * costs a second attempt on a new connection, not a failed round; a frame between rounds closes the
 * connection on either side. Some tests run the rounds through a relay on loopback that can drop a
 * connection or inject a frame.
 */
class PeerConnectionsTest {
  @TempDir Path dir;

  private static double connections(ReplicaAgent a, String kind) {
    return metric(a, "reconcile_peer_connections_total", "kind=\"" + kind + "\"");
  }

  private static double refusals(ReplicaAgent a, String reason) {
    return metric(a, "reconcile_peer_refusals_total", "reason=\"" + reason + "\"");
  }

  private static RoundReport repairVia(ReplicaAgent from, Relay relay) throws Exception {
    return from.repair(new HostPort("127.0.0.1", relay.port()), false)
        .toCompletionStage()
        .toCompletableFuture()
        .get(60, TimeUnit.SECONDS);
  }

  @Test
  void roundsToOnePeerShareOneConnection() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.start("b", Map.of());
      for (int round = 0; round < 5; round++) {
        ConvergenceTest.load(round % 2 == 0 ? a : b, "r" + round + "-", 0, 30);
        RoundReport r = repair(a, b, round == 3);
        assertThat(r.ok).as("round %d: %s", round, r.error).isTrue();
        assertThat(r.missingLocal + r.missingRemote).as("round %d", round).isEqualTo(30);
        if (round == 3) {
          repair(a, b); // the dry run repaired nothing
        }
      }
      assertConverged(a, b);
      assertThat(connections(a, "opened")).isEqualTo(1);
      assertThat(connections(a, "reused")).isEqualTo(5);
      assertThat(connections(a, "stale")).isZero();
    }
  }

  @Test
  void theResponderKeepsAtMostMaxIdleConnections() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent b = c.start("b", Map.of("max-idle-connections", "1"));
      ReplicaAgent a1 = c.start("a1", Map.of());
      ReplicaAgent a2 = c.start("a2", Map.of());
      ConvergenceTest.load(a1, "one", 0, 5);
      assertThat(repair(a1, b).ok).isTrue();
      // a2's connection waits too: one more than b keeps, so b closes a1's, the older.
      ConvergenceTest.load(a2, "two", 0, 5);
      assertThat(repair(a2, b).ok).isTrue();
      ConvergenceTest.load(a2, "two-again", 0, 5);
      assertThat(repair(a2, b).ok).isTrue();
      assertThat(connections(a2, "opened")).isEqualTo(1);
      assertThat(connections(a2, "reused")).isEqualTo(1);
      ConvergenceTest.load(a1, "one-again", 0, 5);
      RoundReport r = repair(a1, b);
      assertThat(r.ok).as(r.error).isTrue();
      assertThat(connections(a1, "opened")).isEqualTo(2);
      assertThat(b.store().recordCount()).isEqualTo(20);
    }
  }

  @Test
  void theSessionByteCapCountsEachRoundOnAKeptConnection() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.start("b", Map.of("max-session-bytes", "64KiB"));
      long received = 0;
      for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 20; i++) {
          a.store().put(ConvergenceTest.b("r" + round + "-" + i), new byte[200]);
        }
        RoundReport r = repair(a, b);
        assertThat(r.ok).as("round %d: %s", round, r.error).isTrue();
        received += r.recordBytesSent;
      }
      // Together the rounds sent b more than its cap; each alone stayed under it.
      assertThat(received).isGreaterThan(64 * 1024);
      assertThat(connections(a, "opened")).isEqualTo(1);
      assertThat(refusals(b, "session_bytes")).isZero();
      assertConverged(a, b);
    }
  }

  @Test
  void withKeepaliveZeroEveryRoundOpensItsOwnConnection() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of("peer-keepalive", "0"));
      ReplicaAgent b = c.start("b", Map.of("peer-keepalive", "0"));
      for (int round = 0; round < 3; round++) {
        ConvergenceTest.load(a, "r" + round + "-", 0, 10);
        assertThat(repair(a, b).ok).isTrue();
      }
      assertConverged(a, b);
      assertThat(connections(a, "opened")).isEqualTo(3);
      assertThat(connections(a, "reused")).isZero();
    }
  }

  @Test
  void aConnectionTheResponderClosedIsNotReused() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of("peer-keepalive", "30s"));
      // b keeps an idle connection for 2 x 200 ms only.
      ReplicaAgent b = c.start("b", Map.of("peer-keepalive", "200ms"));
      ConvergenceTest.load(a, "x", 0, 10);
      assertThat(repair(a, b).ok).isTrue();
      Thread.sleep(1000);
      ConvergenceTest.load(a, "y", 0, 10);
      RoundReport r = repair(a, b);
      assertThat(r.ok).as(r.error).isTrue();
      assertConverged(a, b);
      assertThat(connections(a, "opened")).isEqualTo(2);
      assertThat(connections(a, "reused")).isZero();
      assertThat(connections(a, "stale")).isZero();
    }
  }

  @Test
  void aKeptConnectionLostAsTheRoundBeginsCostsASecondAttemptNotAFailedRound() throws Exception {
    try (AgentCluster c = new AgentCluster(dir);
        Relay relay = new Relay(c.start("b", Map.of()).peerPort())) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.agents.get(0);
      ConvergenceTest.load(a, "x", 0, 10);
      assertThat(repairVia(a, relay).ok).isTrue();
      // The relay drops the kept connection on the next bytes from a (its Hello), forwarding
      // nothing: to a, the peer closed the connection just as the round began.
      relay.dropOnNextClientBytes.set(true);
      ConvergenceTest.load(a, "y", 0, 10);
      RoundReport r = repairVia(a, relay);
      assertThat(r.ok).as(r.error).isTrue();
      assertThat(r.recordsSent).isEqualTo(10);
      assertConverged(a, b);
      assertThat(connections(a, "stale")).isEqualTo(1);
      assertThat(connections(a, "opened")).isEqualTo(2);
      assertThat(relay.connections()).isEqualTo(2);
      // The lost attempt is not a failed round: two rounds, both ok.
      assertThat(metric(a, "reconcile_rounds_total", "result=\"failed\"")).isZero();
      assertThat(metric(a, "reconcile_rounds_total", "result=\"ok\"")).isEqualTo(2);
    }
  }

  @Test
  void aFrameBetweenRoundsClosesTheConnectionOnEitherSide() throws Exception {
    byte[] done =
        Wire.frame(
            Envelope.newBuilder()
                .setFormatVersion(Wire.FORMAT_VERSION)
                .setDone(Done.getDefaultInstance())
                .build());
    try (AgentCluster c = new AgentCluster(dir);
        Relay relay = new Relay(c.start("b", Map.of()).peerPort())) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.agents.get(0);
      ConvergenceTest.load(a, "x", 0, 10);
      assertThat(repairVia(a, relay).ok).isTrue();

      // To the initiator, on its kept connection: it closes it, and the next round opens a new one.
      relay.injectToClient(done);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> refusals(a, "frame_between_rounds") == 1 && relay.closedConnections() == 1);
      ConvergenceTest.load(a, "y", 0, 10);
      assertThat(repairVia(a, relay).ok).isTrue();
      assertThat(connections(a, "opened")).isEqualTo(2);

      // To the responder, on its kept connection: it closes it.
      relay.injectToServer(done);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> refusals(b, "frame_between_rounds") == 1 && relay.closedConnections() == 2);
      ConvergenceTest.load(a, "z", 0, 10);
      RoundReport r = repairVia(a, relay);
      assertThat(r.ok).as(r.error).isTrue();
      assertConverged(a, b);
      assertThat(relay.connections()).isEqualTo(3);
    }
  }

  /**
   * A TCP relay on loopback to {@code target}: each accepted connection gets its own connection to
   * the target and two pumping threads. It can drop a connection on the client's next bytes and
   * inject bytes on the latest connection.
   */
  static final class Relay implements AutoCloseable {
    final AtomicBoolean dropOnNextClientBytes = new AtomicBoolean();
    private final ServerSocket server;
    private final int target;
    private final List<Socket[]> pairs = new CopyOnWriteArrayList<>();
    private final List<Socket[]> closed = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    Relay(int target) throws IOException {
      this.target = target;
      this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      this.acceptor = new Thread(this::acceptLoop, "relay-accept");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return server.getLocalPort();
    }

    /** Connections accepted so far. */
    int connections() {
      return pairs.size();
    }

    /** Connections that ended so far (either side closed). */
    int closedConnections() {
      return closed.size();
    }

    void injectToClient(byte[] bytes) throws IOException {
      write(latest()[0], bytes);
    }

    void injectToServer(byte[] bytes) throws IOException {
      write(latest()[1], bytes);
    }

    private Socket[] latest() {
      return pairs.get(pairs.size() - 1);
    }

    private static void write(Socket s, byte[] bytes) throws IOException {
      OutputStream out = s.getOutputStream();
      synchronized (out) {
        out.write(bytes);
        out.flush();
      }
    }

    private void acceptLoop() {
      while (!server.isClosed()) {
        try {
          Socket client = server.accept();
          Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
          Socket[] pair = {client, upstream};
          pairs.add(pair);
          pump(pair, client, upstream, true);
          pump(pair, upstream, client, false);
        } catch (IOException e) {
          return;
        }
      }
    }

    private void pump(Socket[] pair, Socket from, Socket to, boolean fromClient) {
      Thread t =
          new Thread(
              () -> {
                byte[] buf = new byte[64 * 1024];
                try (InputStream in = from.getInputStream()) {
                  OutputStream out = to.getOutputStream();
                  for (int n; (n = in.read(buf)) >= 0; ) {
                    if (fromClient && dropOnNextClientBytes.compareAndSet(true, false)) {
                      break;
                    }
                    synchronized (out) {
                      out.write(buf, 0, n);
                      out.flush();
                    }
                  }
                } catch (IOException e) {
                  // one side closed
                } finally {
                  end(pair);
                }
              },
              "relay-pump");
      t.setDaemon(true);
      t.start();
    }

    private synchronized void end(Socket[] pair) {
      if (!closed.contains(pair)) {
        closed.add(pair);
      }
      for (Socket s : pair) {
        try {
          s.close();
        } catch (IOException e) {
          // already closed
        }
      }
    }

    @Override
    public void close() throws IOException {
      server.close();
      for (Socket[] p : pairs) {
        end(p);
      }
    }
  }
}
