package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.RatelessFallback;
import dev.reconcile.core.wire.Refusal.Code;
import dev.reconcile.core.wire.SymbolChunk;
import dev.reconcile.core.wire.SymbolRequest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The rateless mode: one stream of coded symbols per unequal partition ({@link CodedSymbols},
 * maintained on every write, so a stream costs O(d) whatever the partition's size). The responder
 * streams, the initiator decodes.
 *
 * <ol>
 *   <li>Right after the HelloAck the responder sends each stream's first batch, {@code
 *       max(FIRST_BATCH, 1.35 |Delta| + 2 sqrt |Delta|)} symbols from the partition's count
 *       difference {@code Delta}, which both sides know (so the initiator's pacing starts from the
 *       same grant without a message).
 *   <li>The initiator subtracts its own symbols and peels incrementally ({@link RatelessDecoder});
 *       a partition whose stream decoded (symbol 0 back to zero in all three sums) is settled and
 *       what it lacks is requested ({@link ResultStream}). Otherwise it grants more ({@link
 *       RatelessPacing}: from the received symbols' count moments it estimates {@code d} and jumps
 *       close to the need); all grants of one exchange go in one {@code SymbolRequest}, all symbols
 *       of one answer in one {@code SymbolChunk}.
 *   <li>A stream that used up the maintained prefix ({@code 2^ratelessLog2} symbols), or whose
 *       estimate says it would, falls back to the estimator path ({@link TableExchange}, or the
 *       digest list when cheaper): never a failure for size.
 * </ol>
 *
 * A partial decode is never used; decoded elements are verified against the initiator's own set as
 * on every path. Each side streams from a snapshot of its symbols taken when the stream starts.
 */
final class RatelessExchange {
  /**
   * The first batch of every stream at least: small, because most unequal partitions hold a
   * difference of one or two when differences are few. A protocol constant: both sides compute it.
   */
  static final int FIRST_BATCH = 4;

  /** The default pacing of the initiator's later grants. */
  static final RatelessPacing.Config PACING = RatelessPacing.Config.SESSION;

  /** Symbols received before the estimate of {@code d} is trusted to abandon a stream early. */
  static final int ESTIMATE_AFTER = 32;

  private final SessionContext ctx;
  private final TableExchange tables;
  private final ResultStream results;
  private final Runnable allSettled;
  // Responder: the snapshot each stream is sent from, and how far it was sent.
  private final Map<Integer, CodedSymbols> streams = new HashMap<>();
  private final Map<Integer, Integer> sent = new HashMap<>();
  // Initiator: a decoder and a pacing per stream.
  private final Map<Integer, RatelessDecoder> decoders = new HashMap<>();
  private final Map<Integer, RatelessPacing> pacings = new HashMap<>();

  RatelessExchange(
      SessionContext ctx, TableExchange tables, ResultStream results, Runnable allSettled) {
    this.ctx = ctx;
    this.tables = tables;
    this.results = results;
    this.allSettled = allSettled;
  }

  /** True when this side can take part: it maintains symbols and offers the mode. */
  boolean available() {
    return ctx.config.pacing() != null && ctx.params.rateless();
  }

  /** The symbols the first grant of a stream covers, from the initiator's count difference. */
  private int firstGrant(long initiatorMinusResponder) {
    return new RatelessPacing(
            new RatelessPacing.Config(FIRST_BATCH, 1, 0.25, false),
            limit(),
            initiatorMinusResponder,
            0)
        .firstGrant();
  }

  private int limit() {
    return 1 << ctx.params.ratelessLog2();
  }

  // ---------------------------------------------------------------- responder

  /** Responder: starts a stream per partition and sends each one's first batch. */
  void start(List<Part> parts) {
    if (parts.isEmpty()) {
      return;
    }
    SymbolChunk.Builder chunk = SymbolChunk.newBuilder();
    List<CodedSymbols> from = new ArrayList<>();
    List<int[]> ranges = new ArrayList<>();
    for (Part part : parts) {
      part.phase = Part.Phase.STREAMING;
      CodedSymbols snapshot = ctx.local.symbols(part.partition);
      streams.put(part.partition, snapshot);
      int n = Math.min(limit(), firstGrant(part.remoteCount - part.localCount));
      sent.put(part.partition, n);
      from.add(snapshot);
      ranges.add(new int[] {part.partition, 0, n});
    }
    ctx.queue(Envelope.newBuilder().setSymbols(pack(chunk, from, ranges)));
  }

  /** Responder: the initiator grants more symbols. */
  void onRequest(SymbolRequest r) throws ProtocolException {
    if (r.getPartitionsCount() != r.getUpToCount() || r.getPartitionsCount() > streams.size()) {
      throw new ProtocolException(
          Code.MALFORMED,
          "SymbolRequest lists "
              + r.getPartitionsCount()
              + " partitions and "
              + r.getUpToCount()
              + " limits for "
              + streams.size()
              + " streams");
    }
    List<CodedSymbols> from = new ArrayList<>();
    List<int[]> ranges = new ArrayList<>();
    for (int j = 0; j < r.getPartitionsCount(); j++) {
      int p = r.getPartitions(j);
      Part part = ctx.part(p, "SymbolRequest");
      CodedSymbols s = streams.get(p);
      if (part.phase != Part.Phase.STREAMING || s == null) {
        throw new ProtocolException(
            Code.MALFORMED, "SymbolRequest for partition " + p + " in phase " + part.phase);
      }
      long upTo = r.getUpTo(j);
      int done = sent.get(p);
      if (upTo <= done || upTo > limit()) {
        throw new ProtocolException(
            Code.MALFORMED,
            "SymbolRequest for partition "
                + p
                + " up to "
                + upTo
                + ": "
                + done
                + " were sent, the stream has "
                + limit());
      }
      sent.put(p, (int) upTo);
      from.add(s);
      ranges.add(new int[] {p, done, (int) upTo});
    }
    ctx.queue(Envelope.newBuilder().setSymbols(pack(SymbolChunk.newBuilder(), from, ranges)));
  }

  /** Responder: streams that did not decode go on the estimator path. */
  void onFallback(RatelessFallback f) throws ProtocolException {
    List<Part> parts = new ArrayList<>();
    for (int p : f.getPartitionsList()) {
      Part part = ctx.part(p, "RatelessFallback");
      if (part.phase != Part.Phase.STREAMING) {
        throw new ProtocolException(
            Code.MALFORMED, "RatelessFallback for partition " + p + " in phase " + part.phase);
      }
      streams.remove(p);
      parts.add(part);
    }
    tables.offer(parts);
  }

  /**
   * Responder of a dry run, on Done: the initiator decoded the streams and keeps the lists; this
   * side settles them without.
   */
  void settleStreamsOfADryRun() {
    for (Part part : ctx.parts.values()) {
      if (part.phase == Part.Phase.STREAMING) {
        part.lacksHere = 0;
        part.lacksThere = 0;
        ctx.settle(part, PartitionOutcome.Path.RATELESS);
      }
    }
    streams.clear();
  }

  private static SymbolChunk.Builder pack(
      SymbolChunk.Builder chunk, List<CodedSymbols> from, List<int[]> ranges) {
    long total = 0;
    for (int[] r : ranges) {
      total += r[2] - r[1];
    }
    ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(PackedSymbols.bytes(total)));
    for (int j = 0; j < ranges.size(); j++) {
      int[] r = ranges.get(j);
      chunk.addPartitions(r[0]).addFirsts(r[1]).addCounts(r[2] - r[1]);
      PackedSymbols.write(from.get(j), r[1], r[2], out);
    }
    out.flip();
    return chunk.setSymbols(com.google.protobuf.UnsafeByteOperations.unsafeWrap(out));
  }

  // ---------------------------------------------------------------- initiator

  /** Initiator: expects a stream per partition, whose first batch the responder sends unasked. */
  void expect(List<Part> parts) {
    for (Part part : parts) {
      part.phase = Part.Phase.DECODING;
      decoders.put(part.partition, new RatelessDecoder(ctx.local.symbols(part.partition)));
      RatelessPacing.Config c = ctx.config.pacing();
      RatelessPacing pacing =
          new RatelessPacing(
              new RatelessPacing.Config(FIRST_BATCH, c.minBatch(), c.growth(), c.estimate()),
              limit(),
              part.localCount - part.remoteCount,
              0);
      pacing.firstGrant(); // the batch the responder sends unasked (see firstGrant)
      pacings.put(part.partition, pacing);
    }
  }

  /** Initiator: symbols of some streams; decodes, settles, grants more or falls back. */
  void onSymbols(SymbolChunk c) throws ProtocolException {
    int n = c.getPartitionsCount();
    if (n != c.getFirstsCount() || n != c.getCountsCount() || n > decoders.size()) {
      throw new ProtocolException(
          Code.MALFORMED, "SymbolChunk lists do not match: " + n + " partitions");
    }
    long total = 0;
    for (int j = 0; j < n; j++) {
      total += c.getCounts(j) & 0xFFFF_FFFFL;
    }
    if (c.getSymbols().size() != PackedSymbols.bytes(total)) {
      throw new ProtocolException(
          Code.MALFORMED,
          "SymbolChunk of "
              + total
              + " symbols holds "
              + c.getSymbols().size()
              + " bytes, not "
              + PackedSymbols.bytes(total));
    }
    ByteBuffer all = c.getSymbols().asReadOnlyByteBuffer();
    SymbolRequest.Builder more = SymbolRequest.newBuilder();
    RatelessFallback.Builder fallback = RatelessFallback.newBuilder();
    for (int j = 0; j < n; j++) {
      int p = c.getPartitions(j);
      Part part = ctx.part(p, "SymbolChunk");
      RatelessDecoder dec = decoders.get(p);
      if (part.phase != Part.Phase.DECODING || dec == null) {
        throw new ProtocolException(
            Code.MALFORMED, "SymbolChunk for partition " + p + " in phase " + part.phase);
      }
      ByteBuffer range = all.slice();
      int bytes = (int) PackedSymbols.bytes(c.getCounts(j) & 0xFFFF_FFFFL);
      range.limit(bytes);
      all.position(all.position() + bytes);
      long first = c.getFirsts(j);
      if (first > Integer.MAX_VALUE) {
        throw new ProtocolException(Code.MALFORMED, "SymbolChunk first index " + first);
      }
      try {
        dec.receive((int) first, range);
      } catch (FormatException e) {
        throw new ProtocolException(
            Code.MALFORMED, "symbols of partition " + p + ": " + e.getMessage());
      }
      RatelessPacing pacing = pacings.get(p);
      if (dec.complete()) {
        settle(part, dec, pacing);
        continue;
      }
      if (dec.exhausted() || beyondThePrefix(dec, pacing)) {
        fallback.addPartitions(p);
        decoders.remove(p);
        pacings.remove(p);
        part.phase = Part.Phase.WAIT_OFFER;
        continue;
      }
      if (pacing.nextGrant(dec) > 0) {
        more.addPartitions(p).addUpTo(pacing.granted());
      }
    }
    if (fallback.getPartitionsCount() > 0) {
      ctx.stats.fallbacks += fallback.getPartitionsCount();
      ctx.queue(Envelope.newBuilder().setRatelessFallback(fallback));
    }
    if (more.getPartitionsCount() > 0) {
      ctx.queue(Envelope.newBuilder().setSymbolRequest(more));
    }
    if (ctx.allSettled()) {
      allSettled.run();
    }
  }

  /** True when the estimate of {@code d} says the stream will not decode within the prefix. */
  private boolean beyondThePrefix(RatelessDecoder dec, RatelessPacing pacing) {
    if (dec.received() < ESTIMATE_AFTER) {
      return false;
    }
    RatelessPacing.Estimate e = pacing.estimate(dec);
    double low = e.d() - 2 * e.standardError();
    return RatelessPacing.SYMBOLS_PER_DIFFERENCE * low > limit();
  }

  private void settle(Part part, RatelessDecoder dec, RatelessPacing pacing) {
    // The decoded difference is (mine - theirs): "here" is only at the initiator.
    part.missingRemote = ctx.verified(part.partition, LongList.of(dec.onlyHere()), true);
    part.missingLocal = ctx.verified(part.partition, LongList.of(dec.onlyThere()), false);
    decoders.remove(part.partition);
    pacings.remove(part.partition);
    ctx.settle(part, PartitionOutcome.Path.RATELESS);
    ctx.stats.roundTrips = Math.max(ctx.stats.roundTrips, pacing.grants());
    results.send(part);
  }
}
