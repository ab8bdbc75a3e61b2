package dev.reconcile.core;

import dev.reconcile.core.wire.DigestChunk;
import dev.reconcile.core.wire.DigestRequest;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The safe path: the initiator streams a partition's sorted elements, the responder merges them
 * with its own sorted elements in one pass and lists what differs ({@link ResultStream}). Taken
 * when a partition is small (the list is cheaper than an estimator), when a table would not fit, or
 * when the largest table failed to decode.
 */
final class DigestMerge {
  static final int REASON_SMALL = 1;
  static final int REASON_TOO_LARGE = 2;

  /** The responder's merge of one partition's stream with its own cursor. */
  private static final class Merge {
    final ElementCursor cursor;
    boolean cursorValid;
    boolean sawRemote;
    long lastRemote;

    Merge(ElementCursor cursor) {
      this.cursor = cursor;
      this.cursorValid = cursor.next();
    }
  }

  private final SessionContext ctx;
  private final ResultStream results;
  private final Map<Integer, Merge> merges = new HashMap<>();

  DigestMerge(SessionContext ctx, ResultStream results) {
    this.ctx = ctx;
    this.results = results;
  }

  // ---------------------------------------------------------------- initiator

  /** Initiator: streams the partition's sorted elements. */
  void send(Part part) {
    part.fallback = true;
    ctx.stats.fallbacks++;
    int chunk = ctx.config.limits().chunkElements();
    int p = part.partition;
    ElementCursor cursor = ctx.local.sortedElements(p);
    long[] buf = new long[chunk];
    ctx.out.add(
        new Outbox.Stream() {
          boolean finished;

          @Override
          public Envelope.Builder next() {
            if (finished) {
              return null;
            }
            int n = 0;
            while (n < chunk && cursor.next()) {
              buf[n++] = cursor.element();
            }
            boolean last = n < chunk;
            if (last) {
              finished = true;
              cursor.close();
            }
            return Envelope.newBuilder()
                .setDigestChunk(
                    DigestChunk.newBuilder()
                        .setPartition(p)
                        .setElements(Wire.packLongs(buf, 0, n))
                        .setLast(last));
          }

          @Override
          public boolean finished() {
            return finished;
          }

          @Override
          public void close() {
            if (!finished) {
              finished = true;
              cursor.close();
            }
          }
        });
  }

  /**
   * Initiator: the responder asks for a partition's list (directly, or after its largest table
   * failed).
   */
  void onDigestRequest(DigestRequest r) throws ProtocolException {
    Part part = ctx.part(r.getPartition(), "DigestRequest");
    if (part.phase == Part.Phase.WAIT_OFFER) {
      part.phase = Part.Phase.WAIT_RESULT;
    } else if (part.phase != Part.Phase.WAIT_RESULT || part.fallback) {
      throw new ProtocolException(
          Code.MALFORMED,
          "DigestRequest for partition " + part.partition + " in phase " + part.phase);
    } else {
      ctx.stats.decodeFailures++;
    }
    send(part);
  }

  // ---------------------------------------------------------------- responder

  /** Responder: asks for a partition's sorted list. */
  void request(Part part, int reason) {
    part.phase = Part.Phase.COLLECT_DIGESTS;
    part.fallback = true;
    ctx.stats.fallbacks++;
    ctx.queue(
        Envelope.newBuilder()
            .setDigestRequest(
                DigestRequest.newBuilder().setPartition(part.partition).setReason(reason)));
  }

  /** Responder: merges one chunk of the initiator's sorted list with its own elements. */
  void onDigestChunk(DigestChunk c) throws ProtocolException {
    Part part = ctx.part(c.getPartition(), "DigestChunk");
    if (part.phase == Part.Phase.WAIT_TABLE) {
      // The initiator chose the list itself: the table would not fit or would cost more.
      part.phase = Part.Phase.COLLECT_DIGESTS;
      part.fallback = true;
      ctx.stats.fallbacks++;
    } else if (part.phase != Part.Phase.COLLECT_DIGESTS) {
      throw new ProtocolException(
          Code.MALFORMED,
          "DigestChunk for partition " + part.partition + " in phase " + part.phase);
    }
    long[] remote =
        Wire.unpackLongs(c.getElements(), ctx.config.limits().chunkElements(), "DigestChunk");
    Merge m = merges.computeIfAbsent(part.partition, p -> new Merge(ctx.local.sortedElements(p)));
    int cap = ctx.listCap();
    ElementCursor cur = m.cursor;
    for (long r : remote) {
      if (m.sawRemote && Long.compareUnsigned(r, m.lastRemote) < 0) {
        throw new ProtocolException(
            Code.MALFORMED, "DigestChunk of partition " + part.partition + " is not sorted");
      }
      m.sawRemote = true;
      m.lastRemote = r;
      if (part.partial) {
        continue; // the lists are full: the rest waits for the next round
      }
      while (m.cursorValid && Long.compareUnsigned(cur.element(), r) < 0) {
        part.missingRemote.add(cur.element()); // only here: the initiator lacks it
        m.cursorValid = cur.next();
      }
      if (m.cursorValid && cur.element() == r) {
        m.cursorValid = cur.next();
      } else {
        part.missingLocal.add(r);
      }
      if (part.missingLocal.size() + part.missingRemote.size() >= cap) {
        part.partial = true; // cut at max-listed-elements; a later round lists the rest
      }
    }
    if (!c.getLast()) {
      return;
    }
    while (m.cursorValid && !part.partial) {
      part.missingRemote.add(cur.element());
      m.cursorValid = cur.next();
      if (part.missingLocal.size() + part.missingRemote.size() >= cap) {
        part.partial = true;
      }
    }
    close(part.partition);
    ctx.settle(part, PartitionOutcome.Path.FALLBACK);
    results.send(part);
  }

  private void close(int partition) {
    Merge m = merges.remove(partition);
    if (m != null) {
      m.cursor.close();
    }
  }

  /** Closes every open cursor (the session ended). */
  void closeAll() {
    List<Merge> open = new ArrayList<>(merges.values());
    merges.clear();
    RuntimeException first = null;
    for (Merge m : open) {
      first = Releases.run(m.cursor::close, first);
    }
    Releases.rethrow(first);
  }
}
