package dev.reconcile.agent;

import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.core.SessionLimits;
import io.vertx.core.Vertx;
import java.util.concurrent.Executor;

/**
 * What a round needs from its agent; {@code roundThreads} is the pool its {@link RoundWorker} runs
 * on.
 */
record AgentRuntime(
    Vertx vertx,
    ReplicaStore store,
    AgentMetrics metrics,
    AgentConfig config,
    SessionLimits limits,
    Executor roundThreads) {}
