package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import java.util.function.UnaryOperator;

/**
 * Runs a round between two sessions in one process: frames pass from one side to the other in
 * memory until neither has anything left to send. The same state machines the agent drives over
 * TCP; the CLI's one-shot diff and repair, the benchmarks, the cluster simulation and the tests use
 * this driver.
 */
public final class LocalRound {
  /** Exchanges after which a round that still moves is declared stuck. */
  static final int MAX_EXCHANGES = 10_000_000;

  private LocalRound() {}

  /** Starts {@code initiator} and pumps frames until both sessions stop; returns the initiator. */
  public static ReconcileSession run(ReconcileSession initiator, ReconcileSession responder) {
    return run(initiator, responder, UnaryOperator.identity(), UnaryOperator.identity());
  }

  /**
   * As {@link #run(ReconcileSession, ReconcileSession)}, passing every frame through {@code
   * toResponder} or {@code toInitiator}, which may rewrite it or drop it (return null): fault
   * injection for tests.
   *
   * @throws IllegalStateException when the exchange does not end within a bound
   */
  public static ReconcileSession run(
      ReconcileSession initiator,
      ReconcileSession responder,
      UnaryOperator<Envelope> toResponder,
      UnaryOperator<Envelope> toInitiator) {
    initiator.start();
    for (int round = 0; round < MAX_EXCHANGES; round++) {
      boolean moved = pump(initiator, responder, toResponder);
      moved |= pump(responder, initiator, toInitiator);
      if (!moved) {
        return initiator;
      }
    }
    throw new IllegalStateException("round did not end in " + MAX_EXCHANGES + " exchanges");
  }

  private static boolean pump(
      ReconcileSession from, ReconcileSession to, UnaryOperator<Envelope> link) {
    boolean moved = false;
    Envelope e;
    while ((e = from.poll()) != null) {
      moved = true;
      Envelope f = link.apply(e);
      if (f != null) {
        to.receive(f);
      }
    }
    return moved;
  }

  /**
   * Compares two sides (no records move): the initiator on {@code left}, the responder on {@code
   * right}. Fails when the round does not succeed.
   */
  public static ReconcileSession compare(
      SessionConfig config, PartitionSketches left, PartitionSketches right) {
    ReconcileSession i = ReconcileSession.initiator(config.withDryRun(true), left);
    ReconcileSession r =
        ReconcileSession.responder(
            config.withSessionId(0).withNodeId(config.nodeId() + "-peer"), right);
    run(i, r);
    requireSuccess(i, r);
    return i;
  }

  /**
   * Repairs two replicas against each other: the initiator on {@code left}, the responder on {@code
   * right}. Returns the initiator, whose stats and outcomes describe the round.
   */
  public static ReconcileSession repair(
      SessionConfig config, MemoryReplica left, MemoryReplica right) {
    return repair(config, left.sketches(), left, right.sketches(), right);
  }

  /** As {@link #repair(SessionConfig, MemoryReplica, MemoryReplica)} over any ports. */
  public static ReconcileSession repair(
      SessionConfig config,
      PartitionSketches leftSketches,
      RecordStore leftRecords,
      PartitionSketches rightSketches,
      RecordStore rightRecords) {
    ReconcileSession i =
        ReconcileSession.initiator(config, leftSketches, leftRecords, RoundProgress.NONE);
    ReconcileSession r =
        ReconcileSession.responder(
            config.withSessionId(0).withNodeId(config.nodeId() + "-peer"),
            rightSketches,
            rightRecords);
    run(i, r);
    requireSuccess(i, r);
    return i;
  }

  private static void requireSuccess(ReconcileSession i, ReconcileSession r) {
    if (!i.succeeded() || !r.succeeded()) {
      String why =
          i.failure()
              .map(Object::toString)
              .or(() -> r.failure().map(Object::toString))
              .orElse("did not finish");
      throw new IllegalStateException("round failed: " + why);
    }
  }
}
