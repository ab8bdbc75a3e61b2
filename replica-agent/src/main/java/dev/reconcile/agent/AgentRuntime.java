package dev.reconcile.agent;

import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.core.SessionLimits;
import io.vertx.core.Vertx;

/** What a round needs from its agent. */
record AgentRuntime(
    Vertx vertx,
    ReplicaStore store,
    AgentMetrics metrics,
    AgentConfig config,
    SessionLimits limits) {}
