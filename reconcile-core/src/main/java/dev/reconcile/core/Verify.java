package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.VerifyDigest;
import dev.reconcile.core.wire.VerifyReply;

/**
 * The close of a repair: the initiator sends one 8-byte digest of its partition fingerprints as
 * they are now; the responder answers "equal", or with its own compact fingerprints, from which the
 * initiator names the partitions that still differ (writes during the round, or records refused)
 * instead of hiding them. The responder only learns that something differs.
 */
final class Verify {
  private final SessionContext ctx;
  private final FingerprintExchange fingerprints;
  private long[] sent;

  Verify(SessionContext ctx, FingerprintExchange fingerprints) {
    this.ctx = ctx;
    this.fingerprints = fingerprints;
  }

  /** Initiator: sends the digest. */
  void start() {
    sent = fingerprints.hashes(fingerprints.own());
    ctx.queue(
        Envelope.newBuilder()
            .setVerifyDigest(
                VerifyDigest.newBuilder().setDigest(ctx.params.spec().sessionDigest(sent))));
  }

  /** Responder: compares and answers. */
  void onDigest(VerifyDigest d) {
    Fingerprint[] mine = fingerprints.own();
    boolean equal = ctx.params.spec().sessionDigest(fingerprints.hashes(mine)) == d.getDigest();
    VerifyReply.Builder reply = VerifyReply.newBuilder().setEqual(equal);
    if (!equal) {
      reply.setDigest(Wire.packDigest(ctx.params.spec(), mine));
      ctx.repair.verifyMismatch = true;
    }
    ctx.repair.verified = true;
    ctx.queue(Envelope.newBuilder().setVerifyReply(reply));
  }

  /** Initiator: the partitions that still differ, if any. */
  void onReply(VerifyReply r) throws ProtocolException {
    if (!r.getEqual()) {
      long[] theirs = Wire.digestHashes(r.getDigest(), ctx.partitions.length);
      for (int i = 0; i < sent.length; i++) {
        if (theirs[i] != sent[i]) {
          ctx.repair.stillDiffering.add(ctx.partitions[i]);
        }
      }
      ctx.repair.verifyMismatch = true;
    }
    ctx.repair.verified = true;
    ctx.progress.roundComplete();
  }
}
