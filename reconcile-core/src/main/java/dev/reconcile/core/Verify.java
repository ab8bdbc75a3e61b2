package dev.reconcile.core;

import dev.reconcile.core.wire.FingerprintSet;

/**
 * The close of a repair: the initiator sends its partition fingerprints as they are now, the
 * responder answers with its own, and each side reports the partitions that still differ (writes
 * during the round, or records refused) instead of hiding them.
 */
final class Verify {
  private final SessionContext ctx;
  private final FingerprintExchange fingerprints;
  private Fingerprint[] sent;

  Verify(SessionContext ctx, FingerprintExchange fingerprints) {
    this.ctx = ctx;
    this.fingerprints = fingerprints;
  }

  /** Initiator: sends its fingerprints. */
  void start() {
    sent = fingerprints.own();
    ctx.queue(fingerprints.frame(sent));
  }

  /** Initiator: compares the responder's answer with what it sent. */
  void onAnswer(FingerprintSet f) throws ProtocolException {
    compare(fingerprints.read(f, "verify fingerprints"), sent);
    ctx.progress.roundComplete();
  }

  /** Responder: answers the initiator's fingerprints with its own and compares. */
  void onRequest(FingerprintSet f) throws ProtocolException {
    Fingerprint[] theirs = fingerprints.read(f, "verify fingerprints");
    Fingerprint[] mine = fingerprints.own();
    ctx.queue(fingerprints.frame(mine));
    compare(theirs, mine);
  }

  private void compare(Fingerprint[] theirs, Fingerprint[] mine) {
    for (int i = 0; i < mine.length; i++) {
      if (!theirs[i].equals(mine[i])) {
        ctx.repair.stillDiffering.add(ctx.partitions[i]);
      }
    }
    ctx.repair.verified = true;
  }
}
