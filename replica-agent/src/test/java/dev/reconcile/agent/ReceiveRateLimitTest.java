package dev.reconcile.agent;

import static dev.reconcile.agent.AgentCluster.assertConverged;
import static dev.reconcile.agent.AgentCluster.repair;
import static dev.reconcile.agent.ConvergenceTest.b;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code receive-rate-limit}: an agent reads from a peer at most at its rate (plus one second of
 * burst), and the round still completes.
 */
class ReceiveRateLimitTest {
  private static final long RATE = 256 * 1024;

  @TempDir Path dir;

  @Test
  void aRoundsReceiveRateIsBoundedAndTheRoundCompletes() throws Exception {
    Map<String, String> frames = Map.of("max-frame-bytes", "512KiB", "batch-bytes", "128KiB");
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", frames);
      Map<String, String> limited = new java.util.HashMap<>(frames);
      limited.put("receive-rate-limit", Long.toString(RATE));
      ReplicaAgent b = c.start("b", limited);
      byte[] value = new byte[100];
      for (int i = 0; i < 20_000; i++) {
        a.store().put(b("k" + i), value);
      }
      long start = System.nanoTime();
      RoundReport r = repair(a, b); // b, the responder, reads the records
      double seconds = (System.nanoTime() - start) / 1e9;
      assertThat(r.ok).as(String.valueOf(r.error)).isTrue();
      assertThat(r.recordsSent).isEqualTo(20_000);
      long bytes = r.stats.bytesSent(); // what b read from a
      assertThat(bytes).as("enough bytes for the bound to mean something").isGreaterThan(8 * RATE);
      // At most RATE * (t + 1) + one socket chunk: t >= bytes / RATE - 1, with slack for the chunk.
      double floor = (bytes - RATE - 65_536.0) / RATE;
      System.out.printf(
          "receive-rate-limit %d B/s: read %d bytes in %.2f s (%.0f B/s)%n",
          RATE, bytes, seconds, bytes / seconds);
      assertThat(seconds)
          .as("%d bytes read at most at %d B/s take at least %.1f s", bytes, RATE, floor)
          .isGreaterThanOrEqualTo(floor);
      assertConverged(a, b);
    }
  }
}
