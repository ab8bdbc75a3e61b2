package dev.reconcile.agent.security;

import static dev.reconcile.agent.security.Agents.assertConverged;
import static dev.reconcile.agent.security.Agents.load;
import static dev.reconcile.agent.security.Agents.refusals;
import static dev.reconcile.agent.security.Agents.repair;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Refusal;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Limits against a misbehaving peer, each ending in a disconnect with a logged reason and a count
 * in {@code reconcile_peer_refusals_total{reason}}: a 2 GB length header, a session over its byte
 * cap, too many sessions from one peer, a peer that connects and goes silent.
 */
class PeerLimitsTest {
  @TempDir Path dir;

  /** Reads until the agent closes the connection; returns the bytes read before that. */
  private static byte[] readUntilClosed(Socket s, Duration within) throws IOException {
    s.setSoTimeout((int) within.toMillis());
    InputStream in = s.getInputStream();
    java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
    byte[] buf = new byte[4096];
    try {
      for (int n; (n = in.read(buf)) >= 0; ) {
        got.write(buf, 0, n);
      }
    } catch (SocketException reset) {
      // closed by the agent
    }
    return got.toByteArray();
  }

  @Test
  void aTwoGigabyteLengthHeaderClosesTheConnectionBeforeAnyAllocation() throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent b = c.start("b", Map.of());
      for (int header : new int[] {0x8000_0000, 0x7FFF_FFFF, 16 * 1024 * 1024 + 1}) {
        try (Socket s = new Socket("127.0.0.1", b.peerPort())) {
          s.getOutputStream()
              .write(
                  new byte[] {
                    (byte) (header >>> 24),
                    (byte) (header >>> 16),
                    (byte) (header >>> 8),
                    (byte) header
                  });
          s.getOutputStream().flush();
          long t0 = System.nanoTime();
          readUntilClosed(s, Duration.ofSeconds(5));
          // Closed at once (not by the idle timeout of 10 s), and a 2 GB buffer would not fit the 2
          // GB test heap anyway.
          assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
        }
      }
      await()
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(() -> assertThat(refusals(b, "frame_size")).isEqualTo(3));
      // The agent is unharmed.
      ReplicaAgent a = c.start("a", Map.of());
      load(a, "k", 50, 10);
      assertThat(repair(a, b).ok).isTrue();
    }
  }

  @Test
  void aSessionOverItsByteCapIsCutOff() throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent a = c.start("a", Map.of("batch-records", "100"));
      ReplicaAgent b = c.start("b", Map.of("max-session-bytes", "200KiB"));
      load(a, "k", 2000, 200);
      RoundReport r = repair(a, b);
      assertThat(r.ok).isFalse();
      await()
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(() -> assertThat(refusals(b, "session_bytes")).isEqualTo(1));
      assertThat(b.lastReports().values())
          .anyMatch(rep -> rep.error != null && rep.error.contains("max-session-bytes"));
      assertThat(b.store().recordCount()).isBetween(1L, 1999L);
      assertThat(b.store().selfCheck().ok()).isTrue();
      // Rounds resume where they stopped: the partitions already done are skipped, the rest fits.
      for (int i = 0; i < 20 && !repair(a, b).ok; i++) {
        // each round moves at most ~200 KiB
      }
      assertConverged(a, b);
    }
  }

  @Test
  void concurrentSessionsPerPeerAreCapped() throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent b =
          c.start(
              "b", Map.of("max-sessions", "4", "max-sessions-per-peer", "1", "idle-timeout", "5s"));
      try (Socket first = new Socket("127.0.0.1", b.peerPort())) {
        Thread.sleep(200); // the first connection holds this peer's only session
        assertThat(first.isConnected()).isTrue();
        try (Socket second = new Socket("127.0.0.1", b.peerPort())) {
          second.setSoTimeout(5000);
          DataInputStream in = new DataInputStream(second.getInputStream());
          byte[] body = new byte[in.readInt()];
          in.readFully(body);
          Envelope e = Envelope.parseFrom(body);
          assertThat(e.getRefusal().getCode()).isEqualTo(Refusal.Code.BUSY);
          assertThat(e.getRefusal().getMessage()).contains("1 per peer");
          assertThat(in.read()).isEqualTo(-1);
        }
      }
      assertThat(refusals(b, "busy")).isEqualTo(1);
    }
  }

  @Test
  void aPeerThatConnectsAndGoesSilentIsDisconnectedAfterTheIdleTimeout() throws Exception {
    try (Agents c = new Agents(dir)) {
      ReplicaAgent b = c.start("b", Map.of("idle-timeout", "1s"));
      try (Socket s = new Socket("127.0.0.1", b.peerPort())) {
        long t0 = System.nanoTime();
        readUntilClosed(s, Duration.ofSeconds(10));
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(took).isBetween(Duration.ofMillis(900), Duration.ofSeconds(5));
      }
      await()
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(() -> assertThat(refusals(b, "idle_timeout")).isEqualTo(1));
      assertThat(b.lastReports().values())
          .anyMatch(rep -> rep.error != null && rep.error.startsWith("idle timeout"));
    }
  }
}
