package dev.reconcile.agent.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.HostPort;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.RoundReport;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.SessionConfig;
import dev.reconcile.core.Wire;
import dev.reconcile.core.fuzz.FuzzLoop;
import dev.reconcile.core.fuzz.Mutator;
import dev.reconcile.core.wire.Envelope;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Fuzzing of a live agent's peer port ({@code FrameChannel} + {@code PeerRound} + the responder
 * session) over real loopback sockets: each input runs a genuine initiator session against the
 * agent, mutating one outgoing frame at the byte level (length header included: bit flips,
 * truncation, extension, random bytes), then carries on until the agent closes the connection.
 * Afterwards the agent must have logged no ERROR (no unhandled exception), its store must pass the
 * self-check, and a genuine round must still succeed.
 */
class FrameSocketFuzzTest {
  private static final int N = 150 * Math.min(20, Mutator.scale()); // sockets are slow: capped
  @TempDir static Path dir;
  static ReplicaAgent victim;
  static ReplicaAgent peer;
  static ListAppender<ILoggingEvent> log;

  static Map<String, String> config(String node) {
    Map<String, String> m = dev.reconcile.agent.AgentCluster.baseConfig(node, dir);
    m.put("partitions-log2", "2");
    m.put("iblt-max-log2", "10");
    m.put("idle-timeout", "1s");
    m.put("max-sessions", "64");
    m.put("max-sessions-per-peer", "64");
    return m;
  }

  @BeforeAll
  static void start() throws Exception {
    log = new ListAppender<>();
    log.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(log);
    victim = ReplicaAgent.start(AgentConfig.fromMap(config("victim")));
    peer = ReplicaAgent.start(AgentConfig.fromMap(config("peer")));
    for (int i = 0; i < 300; i++) {
      victim
          .store()
          .put(("v" + i).getBytes(StandardCharsets.UTF_8), "x".getBytes(StandardCharsets.UTF_8));
      peer.store()
          .put(("p" + i).getBytes(StandardCharsets.UTF_8), "y".getBytes(StandardCharsets.UTF_8));
    }
  }

  @AfterAll
  static void stop() {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(log);
    if (victim != null) {
      victim.close();
    }
    if (peer != null) {
      peer.close();
    }
  }

  static boolean one(SplittableRandom r) throws IOException {
    ReconcileSession s =
        ReconcileSession.initiator(
            new SessionConfig("test", "fuzzer", r.nextLong(), null, null), peer.store().sketches());
    s.start();
    int target = r.nextInt(6);
    int sent = 0;
    boolean closedByAgent = false;
    try (Socket sock = new Socket("127.0.0.1", victim.peerPort())) {
      sock.setSoTimeout(3000);
      OutputStream out = sock.getOutputStream();
      DataInputStream in = new DataInputStream(sock.getInputStream());
      while (true) {
        Envelope e;
        while ((e = s.poll()) != null) {
          byte[] f = Wire.frame(e);
          if (sent++ == target) {
            out.write(Mutator.mutateBytes(f, r));
            sock.setSoTimeout(
                300); // then only a short wait: this side closes if the agent waits for more
          } else {
            out.write(f);
          }
        }
        out.flush();
        if (s.isFinished()) {
          break; // the agent now waits for a repair stream that never comes: its idle timeout ends
          // it
        }
        int n = in.readInt();
        if (n <= 0 || n > (16 << 20)) {
          break;
        }
        byte[] body = new byte[n];
        in.readFully(body);
        s.receive(Envelope.parseFrom(body));
      }
    } catch (java.io.EOFException | java.net.SocketException e) {
      closedByAgent = true;
    } catch (java.net.SocketTimeoutException e) {
      // the agent waits for bytes the mutation swallowed (a length header announcing more): we hang
      // up
    }
    return !closedByAgent;
  }

  @Test
  void peerPortSurvivesMutatedFramesOverRealSockets() throws Exception {
    assertTimeoutPreemptively(
        Duration.ofSeconds(300L * Mutator.scale()),
        () ->
            FuzzLoop.run(
                "FrameChannel+PeerRound (socket)",
                19,
                N,
                Duration.ofSeconds(4),
                FrameSocketFuzzTest::one));
    // Rounds still open end by their idle timeout; then the agent must be healthy.
    Thread.sleep(1500);
    assertThat(
            log.list.stream()
                .filter(ev -> ev.getLevel().isGreaterOrEqual(Level.ERROR))
                .map(ILoggingEvent::getFormattedMessage))
        .as("ERROR logs during the fuzz run")
        .isEmpty();
    assertThat(victim.store().selfCheck().ok()).isTrue();
    assertThat(victim.store().recordCount()).isEqualTo(300);
    RoundReport rep =
        peer.repair(new HostPort("127.0.0.1", victim.peerPort()), false)
            .toCompletionStage()
            .toCompletableFuture()
            .get(60, TimeUnit.SECONDS);
    assertThat(rep.ok).as(rep.error).isTrue();
    assertThat(victim.store().recordCount()).isEqualTo(600);
  }
}
