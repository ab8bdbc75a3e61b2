package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.MissingChunk;
import dev.reconcile.core.wire.RecordRequest;
import dev.reconcile.core.wire.Refusal.Code;

/**
 * What the side that decoded a partition tells the other. In a repair round: a {@link
 * RecordRequest} for the elements it lacks and how many records it will send (the repair stream
 * makes the rest of the lists redundant). In a dry run the responder, when it decoded, lists both
 * ways ({@link MissingChunk}) so the initiator can report. The receiving side of lists keeps only
 * what its own set confirms and counts the rest as unverified; the side asked for records checks
 * the request by reading them (the repair stream sends what it finds and counts the rest as {@link
 * RepairStats#listedNotFound}), which spares it a lookup of every element first.
 *
 * <p>No list grows past the session's cap ({@code max-listed-elements}): a longer one is cut, the
 * partition is flagged partial, and the next round repairs what is left, so a divergence of any
 * size is repaired in steps and never refused.
 */
final class ResultStream {
  private final SessionContext ctx;
  private final Runnable allSettled;

  /** {@code allSettled} runs on the initiator once every unequal partition has its result. */
  ResultStream(SessionContext ctx, Runnable allSettled) {
    this.ctx = ctx;
    this.allSettled = allSettled;
  }

  /** The decoding side has settled {@code part}: tells the peer. */
  void send(Part part) {
    if (ctx.dryRun) {
      if (!ctx.initiator()) {
        sendLists(part);
      }
    } else {
      sendRequest(part);
    }
  }

  private void sendRequest(Part part) {
    long[] want = part.missingLocal.toArray();
    long willSend = part.lacksThere >= 0 ? part.lacksThere : part.missingRemote.size();
    int chunk = ctx.config.limits().chunkElements();
    int p = part.partition;
    boolean partial = part.partial;
    ctx.out.add(
        new Outbox.Stream() {
          int i;
          boolean finished;

          @Override
          public Envelope.Builder next() {
            if (finished) {
              return null;
            }
            int n = Math.min(chunk, want.length - i);
            RecordRequest.Builder r =
                RecordRequest.newBuilder()
                    .setPartition(p)
                    .setElements(Wire.packLongs(want, i, i + n))
                    .setWillSend(willSend)
                    .setPartial(partial);
            i += n;
            finished = i == want.length;
            return Envelope.newBuilder().setRecordRequest(r.setLast(finished));
          }

          @Override
          public boolean finished() {
            return finished;
          }
        });
  }

  /** Responder of a dry run: both lists of a settled partition. */
  private void sendLists(Part part) {
    // What the initiator lacks is what only this side has.
    long[] atI = part.missingRemote.toArray();
    long[] atR = part.missingLocal.toArray();
    int chunk = ctx.config.limits().chunkElements();
    int p = part.partition;
    int attempts = part.attempts;
    boolean fallback = part.fallback;
    // The digest the lists were checked against this side's table by (TableExchange): none after
    // a fallback or a failed check, so that the initiator looks them up.
    Long digest =
        fallback || part.tableFingerprint == null
            ? null
            : ctx.params.spec().fingerprintDigest(part.tableFingerprint);
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
            if (finished && digest != null) {
              m.setSnapshotDigest(digest);
            }
            return Envelope.newBuilder().setMissing(m.setLast(finished));
          }

          @Override
          public boolean finished() {
            return finished;
          }
        });
  }

  /** Initiator of a dry run: one chunk of a partition's lists. */
  void onMissing(MissingChunk m) throws ProtocolException {
    Part part = ctx.part(m.getPartition(), "MissingChunk");
    if (part.phase != Part.Phase.WAIT_RESULT || !ctx.dryRun) {
      throw new ProtocolException(
          Code.MALFORMED,
          "MissingChunk for partition "
              + part.partition
              + " in phase "
              + part.phase
              + (ctx.dryRun ? "" : " of a repair round"));
    }
    addCapped(part, part.missingLocal, m.getMissingAtInitiator(), "MissingChunk");
    addCapped(part, part.missingRemote, m.getMissingAtResponder(), "MissingChunk");
    if (!m.getLast()) {
      return;
    }
    boolean tables = !m.getFallback() && !part.fallback;
    if (tables
        && m.hasSnapshotDigest()
        && TableExchange.matchesTables(ctx.params.spec(), part, m.getSnapshotDigest())) {
      ctx.stats.checkedByFingerprint++;
    } else {
      part.missingRemote = ctx.verified(part.partition, part.missingRemote, true);
      part.missingLocal = ctx.verified(part.partition, part.missingLocal, false);
    }
    settle(
        part,
        m.getFallback() || part.fallback
            ? PartitionOutcome.Path.FALLBACK
            : PartitionOutcome.Path.IBLT);
  }

  /** The peer decoded a partition: the records it asks for, and how many it will send. */
  void onRecordRequest(RecordRequest r) throws ProtocolException {
    Part part = ctx.part(r.getPartition(), "RecordRequest");
    PartitionOutcome.Path path;
    if (ctx.initiator() && part.phase == Part.Phase.WAIT_RESULT) {
      path = part.fallback ? PartitionOutcome.Path.FALLBACK : PartitionOutcome.Path.IBLT;
    } else if (!ctx.initiator() && part.phase == Part.Phase.STREAMING) {
      path = PartitionOutcome.Path.RATELESS;
    } else {
      throw new ProtocolException(
          Code.MALFORMED,
          "RecordRequest for partition " + part.partition + " in phase " + part.phase);
    }
    if (ctx.dryRun) {
      throw new ProtocolException(Code.MALFORMED, "RecordRequest in a dry run");
    }
    addCapped(part, part.missingRemote, r.getElements(), "RecordRequest");
    part.partial |= r.getPartial();
    if (!r.getLast()) {
      return;
    }
    // Not looked up here: the repair stream reads the records of exactly these elements and
    // counts those it finds no record of (RepairStats.listedNotFound): one pass over the store
    // where a check first would make two.
    part.lacksHere = r.getWillSend();
    settle(part, path);
  }

  /** Adds a peer's packed elements to {@code list}, cut at the session's cap (flagged partial). */
  private void addCapped(
      Part part, LongList list, com.google.protobuf.ByteString packed, String what)
      throws ProtocolException {
    long[] xs = Wire.unpackLongs(packed, ctx.config.limits().chunkElements(), what);
    int room = ctx.listCap() - part.missingLocal.size() - part.missingRemote.size();
    if (xs.length > room) {
      part.partial = true;
    }
    for (int i = 0; i < Math.min(xs.length, Math.max(0, room)); i++) {
      list.add(xs[i]);
    }
  }

  private void settle(Part part, PartitionOutcome.Path path) {
    ctx.settle(part, path);
    if (ctx.initiator() && ctx.allSettled()) {
      allSettled.run();
    }
  }
}
