package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import java.util.function.UnaryOperator;

/** Runs two sessions against each other in memory, optionally rewriting frames in flight. */
public final class SessionDriver {
  private SessionDriver() {}

  public static void run(ReconcileSession initiator, ReconcileSession responder) {
    run(initiator, responder, UnaryOperator.identity(), UnaryOperator.identity());
  }

  /**
   * Pumps frames until both sessions finish. {@code toResponder} / {@code toInitiator} may rewrite
   * a frame, or return null to drop it. Fails if the exchange does not end within a bound.
   */
  public static void run(
      ReconcileSession initiator,
      ReconcileSession responder,
      UnaryOperator<Envelope> toResponder,
      UnaryOperator<Envelope> toInitiator) {
    initiator.start();
    for (int round = 0; round < 100_000; round++) {
      boolean moved = false;
      Envelope e;
      while ((e = initiator.poll()) != null) {
        moved = true;
        Envelope f = toResponder.apply(e);
        if (f != null) {
          responder.receive(f);
        }
      }
      while ((e = responder.poll()) != null) {
        moved = true;
        Envelope f = toInitiator.apply(e);
        if (f != null) {
          initiator.receive(f);
        }
      }
      if (!moved) {
        return;
      }
    }
    throw new AssertionError("session did not converge in 100000 rounds");
  }
}
