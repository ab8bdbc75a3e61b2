package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.MissingChunk;
import dev.reconcile.core.wire.Refusal.Code;

/**
 * The responder's result for each settled partition, in chunks: the elements the initiator lacks
 * and those the responder lacks. The initiator keeps only what its own set confirms (what it lacks
 * must be absent here, what the responder lacks present) and counts the rest as unverified.
 */
final class ResultStream {
  private final SessionContext ctx;
  private final Runnable allSettled;

  /** {@code allSettled} runs on the initiator once every unequal partition has its result. */
  ResultStream(SessionContext ctx, Runnable allSettled) {
    this.ctx = ctx;
    this.allSettled = allSettled;
  }

  /** Responder: lists a settled partition's difference. */
  void send(Part part) {
    // What the initiator lacks is what only this side has.
    long[] atI = part.missingRemote.toArray();
    long[] atR = part.missingLocal.toArray();
    int chunk = ctx.config.limits().chunkElements();
    int p = part.partition;
    int attempts = part.attempts;
    boolean fallback = part.fallback;
    ctx.out.add(
        new Outbox.Stream() {
          int i;
          int r;
          boolean finished;

          @Override
          public Envelope.Builder next() {
            if (finished) {
              return null;
            }
            int ni = Math.min(chunk, atI.length - i);
            int nr = Math.min(chunk - ni, atR.length - r);
            MissingChunk.Builder m =
                MissingChunk.newBuilder()
                    .setPartition(p)
                    .setMissingAtInitiator(Wire.packLongs(atI, i, i + ni))
                    .setMissingAtResponder(Wire.packLongs(atR, r, r + nr))
                    .setAttempts(attempts)
                    .setFallback(fallback);
            i += ni;
            r += nr;
            finished = i == atI.length && r == atR.length;
            return Envelope.newBuilder().setMissing(m.setLast(finished));
          }

          @Override
          public boolean finished() {
            return finished;
          }
        });
  }

  /** Initiator: one chunk of a partition's result. */
  void onMissing(MissingChunk m) throws ProtocolException {
    Part part = ctx.part(m.getPartition(), "MissingChunk");
    if (part.phase != Part.Phase.WAIT_RESULT) {
      throw new ProtocolException(
          Code.MALFORMED,
          "MissingChunk for partition " + part.partition + " in phase " + part.phase);
    }
    int cap = ctx.config.limits().maxMissingPerPartition();
    int room = cap - part.missingLocal.size() - part.missingRemote.size();
    long[] atI = Wire.unpackLongs(m.getMissingAtInitiator(), Math.max(0, room), "MissingChunk");
    long[] atR =
        Wire.unpackLongs(m.getMissingAtResponder(), Math.max(0, room - atI.length), "MissingChunk");
    part.missingLocal.addAll(atI);
    part.missingRemote.addAll(atR);
    if (!m.getLast()) {
      return;
    }
    part.missingRemote = ctx.verified(part.partition, part.missingRemote, true);
    part.missingLocal = ctx.verified(part.partition, part.missingLocal, false);
    ctx.settle(
        part,
        m.getFallback() || part.fallback
            ? PartitionOutcome.Path.FALLBACK
            : PartitionOutcome.Path.IBLT);
    if (ctx.allSettled()) {
      allSettled.run();
    }
  }
}
