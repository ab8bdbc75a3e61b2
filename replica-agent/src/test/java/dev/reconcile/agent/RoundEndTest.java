package dev.reconcile.agent;

import static dev.reconcile.agent.AgentCluster.assertConverged;
import static dev.reconcile.agent.AgentCluster.repair;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The end of a round is clean on both sides: a round started the moment the last one ended is never
 * refused as busy (one round per peer is allowed), and a round that went well logs no warning on
 * either side.
 */
class RoundEndTest {
  @TempDir Path dir;

  @Test
  void backToBackRoundsAreNeverRefusedAndLogNoWarning() throws Exception {
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    Logger peerRound = (Logger) LoggerFactory.getLogger(PeerRound.class);
    peerRound.addAppender(log);
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of("max-sessions-per-peer", "1"));
      ReplicaAgent b = c.start("b", Map.of("max-sessions-per-peer", "1"));
      for (int round = 0; round < 30; round++) {
        // Something to repair every other round, a fast path in between; dry runs too.
        if (round % 2 == 0) {
          ConvergenceTest.load(a, "r" + round + "-", 0, 20);
        }
        RoundReport r = repair(a, b, round % 5 == 4);
        assertThat(r.ok).as("round %d: %s", round, r.error).isTrue();
      }
      assertConverged(a, b);
      assertThat(b.lastReports().values()).allSatisfy(r -> assertThat(r.ok).isTrue());
    } finally {
      peerRound.detachAppender(log);
    }
    assertThat(log.list)
        .filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
        .extracting(ILoggingEvent::getFormattedMessage)
        .isEmpty();
  }
}
