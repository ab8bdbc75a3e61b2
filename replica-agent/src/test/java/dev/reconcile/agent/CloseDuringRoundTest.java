package dev.reconcile.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Context;
import io.vertx.core.Future;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An agent closed while one of its rounds is in a step still answers whoever waits for that round:
 * the round's result comes, failed, once the close has stopped the event loops. Before stop 51 the
 * step, once it ended, could hand its result only to the stopped event loop, and the round's future
 * never completed (the replay soak's sender-crash scenario waited ten minutes for one).
 */
class CloseDuringRoundTest {
  @TempDir Path dir;

  @Test
  void aRoundCutByItsAgentsCloseEndsFailed() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.start("b", Map.of());
      ConvergenceTest.loadCommon(a, b, 500);
      ConvergenceTest.load(b, "only-b-", 0, 2_000); // a applies these in its round's steps
      CountDownLatch inStep = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      AtomicBoolean blocked = new AtomicBoolean();
      a.store()
          .faultInjector(
              records -> {
                if (blocked.compareAndSet(false, true)) {
                  inStep.countDown();
                  try {
                    release.await(60, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                }
              });
      Context loop = a.vertx().getOrCreateContext();
      Future<RoundReport> round = a.repair(AgentCluster.peerOf(b), false);
      assertThat(inStep.await(30, TimeUnit.SECONDS)).as("a's round reached its apply").isTrue();
      Thread closer = new Thread(() -> c.stop(a), "closer");
      closer.start();
      // The close stops a's event loops, then waits for the store call the step is in.
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      boolean stopped = false;
      while (!stopped && System.nanoTime() < until) {
        try {
          loop.runOnContext(v -> {});
          Thread.sleep(20);
        } catch (RejectedExecutionException e) {
          stopped = true;
        }
      }
      assertThat(stopped).as("a's event loop stopped").isTrue();
      release.countDown();
      RoundReport r = round.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertThat(r.ok).isFalse();
      assertThat(r.error).isNotBlank();
      closer.join(30_000);
      assertThat(closer.isAlive()).as("the close ended").isFalse();
    }
  }
}
