package dev.reconcile.agent.cluster;

import java.util.concurrent.TimeUnit;

/** Test access to one agent's cluster interval, for tests in other packages. */
public final class ClusterTicks {
  private ClusterTicks() {}

  /** Runs one interval of {@code mode} (read, choose, rounds) and waits for it. */
  public static void tick(ClusterMode mode) throws Exception {
    mode.tick().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  /** Publishes {@code mode}'s entry now and waits. */
  public static void publish(ClusterMode mode) throws Exception {
    mode.publishNow().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
