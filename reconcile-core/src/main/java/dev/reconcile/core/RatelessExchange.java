package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.RatelessFallback;
import dev.reconcile.core.wire.Refusal.Code;
import dev.reconcile.core.wire.SymbolChunk;
import dev.reconcile.core.wire.SymbolRequest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The rateless mode: streams of coded symbols ({@link CodedSymbols}, maintained on every write, so
 * a stream costs O(d) whatever the partitions' sizes). The responder streams, the initiator
 * decodes.
 *
 * <h2>Streams</h2>
 *
 * A stream carries the symbols of one unequal partition, or with {@code MODE_RATELESS_GROUPED} the
 * sum of the symbols of a group of them (prefixes are linear: the sum of the partitions' prefixes
 * is the prefix of their union, and an element's partition is its top bits, {@link
 * HashSpec#partitionOfElement}). One stream for all the unequal partitions pays the symbols per
 * difference of the whole difference {@code d} (1.44 at {@code d = 128}) instead of those of its
 * shares {@code d / k} (about 1.7-2 at {@code d / k < 10}) plus each stream's granularity of
 * grants; but a group shares one prefix of {@code M} symbols, which decodes about {@code M / 1.35}
 * differences, not {@code k} times that. So:
 *
 * <ul>
 *   <li>The unequal partitions form one group (named by its lowest partition) when there are at
 *       least two and {@code 1.35 max(sum |Delta_p|, e) <= M / 4} ({@code Delta_p} the partition's
 *       count difference, which both sides know from the fingerprints: a lower bound on its
 *       difference; {@code e} the expected difference, below); otherwise each partition streams
 *       alone. The rule is part of the mode: both sides derive the streams from the HelloAck
 *       without a message.
 *   <li>A group's grants stop at {@link #ESTIMATE_AFTER} symbols until that many arrived, so that
 *       the estimate of {@code d} ({@link RatelessPacing#estimate}) is sharp before any large
 *       grant; from then on, and whenever the prefix is exhausted, a group whose estimate exceeds
 *       {@code M / 2} symbols' worth ({@code 1.35 d > M / 2}) is <b>split</b>: the initiator's
 *       {@code SymbolRequest} names it in {@code split} and grants each of its partitions a first
 *       batch of its own (its share of the estimate), and the partitions go on alone. A split
 *       wastes the group's symbols received so far: {@code ESTIMATE_AFTER} when {@code d} is large.
 * </ul>
 *
 * <h2>A round</h2>
 *
 * <ol>
 *   <li>Right after the HelloAck the responder sends each stream's first batch, {@code
 *       max(FIRST_BATCH, 1.35 d0 + 2 sqrt d0)} symbols, {@code d0 = max(b, e_s)}: {@code b} the
 *       stream's known bound ({@code |Delta|} of a partition, {@code sum |Delta_p|} of a group),
 *       {@code e_s} its share of the initiator's expected difference {@code e} ({@code
 *       Hello.expected_difference}, echoed in the HelloAck: all of it for a group, {@code ceil(e /
 *       k)} for each of {@code k} partitions streaming alone). Both sides know both (so the
 *       initiator's pacing starts from the same grant without a message).
 *   <li>The initiator subtracts its own symbols and peels incrementally ({@link RatelessDecoder});
 *       a stream that decoded (symbol 0 back to zero in all three sums) settles its partitions and
 *       what they lack is requested ({@link ResultStream}). Otherwise it grants more ({@link
 *       RatelessPacing}: from the received symbols' count moments it estimates {@code d} and jumps
 *       close to the need); all grants of one exchange go in one {@code SymbolRequest}, all symbols
 *       of one answer in one {@code SymbolChunk}.
 *   <li>A partition's stream that used up the maintained prefix ({@code 2^ratelessLog2} symbols),
 *       or whose estimate says it would, falls back to the estimator path ({@link TableExchange},
 *       or the digest list when cheaper): never a failure for size.
 * </ol>
 *
 * A partial decode is never used. Each side streams from a snapshot of its symbols taken when the
 * stream starts, and reads each partition's fingerprint at the same instant ({@link
 * PartitionSketches#addSymbols}); the snapshot's symbols are copied as the stream reaches them
 * ({@link SymbolSnapshot}), and released when the streams are over ({@link #release}).
 *
 * <h2>Checking a decode</h2>
 *
 * The responder sends, with the first symbols of a stream, the fingerprint digest of each of its
 * partitions as of its snapshot ({@code SymbolChunk.snapshot_digests}). When a stream decodes, the
 * initiator checks each partition against it: its own snapshot's fingerprint {@code F_i}, minus the
 * elements decoded as only here, plus those decoded as only there, must be the responder's
 * fingerprint {@code F_r} ({@link Fingerprint}: a count and two sums modulo 2^64, the second of an
 * independent hash, so a set that is not the responder's passes with probability about 2^-64 per
 * digest). A partition that passes is exact as of the two snapshots, at O(d) in memory. One that
 * does not (a wrong decode; or a snapshot whose fingerprint was not read at its instant; or a
 * responder that sends no digests) has its decoded elements verified against the initiator's own
 * set as on every other path: each looked up in the store, kept when present (only here) or absent
 * (only there), the others counted as unverified. An element of a group's stream outside the
 * group's partitions is counted as unverified either way. The lookups cost a seek per element in an
 * agent's digest index, 2-7 us each at 10^7 records: most of a dry round's session
 * (docs/benchmarks.md, section 2).
 */
final class RatelessExchange {
  /**
   * The first batch of every stream at least: small, because most unequal partitions hold a
   * difference of one or two when differences are few. A protocol constant: both sides compute it.
   */
  static final int FIRST_BATCH = 4;

  /** The default pacing of the initiator's later grants. */
  static final RatelessPacing.Config PACING = RatelessPacing.Config.SESSION;

  /**
   * Symbols received before the estimate of {@code d} is trusted to abandon a stream early, and the
   * most a group's grants reach before that many arrived.
   */
  static final int ESTIMATE_AFTER = 32;

  /** A group forms when {@code 1.35 sum |Delta_p|} is at most this share of the prefix. */
  static final double GROUP_SHARE = 0.25;

  /** A group splits when its estimate's need {@code 1.35 d} exceeds this share of the prefix. */
  static final double SPLIT_SHARE = 0.5;

  private final SessionContext ctx;
  private final TableExchange tables;
  private final ResultStream results;
  private final Runnable allSettled;
  // Both sides: the partitions of each group stream, by the group's lowest partition.
  private final Map<Integer, int[]> groups = new HashMap<>();
  // Responder: the snapshot each stream is sent from, and how far it was sent.
  private final Map<Integer, SymbolSnapshot> streams = new HashMap<>();
  private final Map<Integer, Integer> sent = new HashMap<>();
  // Initiator: a decoder and a pacing per stream; grants of split groups (round trips).
  private final Map<Integer, RatelessDecoder> decoders = new HashMap<>();
  private final Map<Integer, RatelessPacing> pacings = new HashMap<>();
  private final Map<Integer, Integer> grantsBefore = new HashMap<>();
  // Both sides: each streaming partition's fingerprint as of its stream's snapshot.
  private final Map<Integer, Fingerprint> snapshotFingerprints = new HashMap<>();
  // Initiator: the responder's fingerprint digest of each partition's snapshot, as it sent them.
  private final Map<Integer, Long> remoteDigests = new HashMap<>();

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

  private int limit() {
    return 1 << ctx.params.ratelessLog2();
  }

  /**
   * The streams of {@code parts} (see the class comment): one group of all of them, or one stream
   * each; each stream's partitions in ascending order, the first naming the stream.
   */
  private List<int[]> streamsOf(List<Part> parts) {
    List<int[]> out = new ArrayList<>();
    double bound = 0;
    for (Part part : parts) {
      bound += part.countBound();
    }
    if (ctx.ratelessGroups
        && parts.size() > 1
        && RatelessPacing.SYMBOLS_PER_DIFFERENCE * Math.max(bound, ctx.expectedDifference)
            <= GROUP_SHARE * limit()) {
      int[] members = new int[parts.size()];
      for (int i = 0; i < members.length; i++) {
        members[i] = parts.get(i).partition;
      }
      Arrays.sort(members);
      groups.put(members[0], members);
      out.add(members);
    } else {
      for (Part part : parts) {
        out.add(new int[] {part.partition});
      }
    }
    return out;
  }

  /** The pacing of a stream of {@code members}, with the initiator's count differences. */
  private RatelessPacing pacing(RatelessPacing.Config c, int[] members, long prior) {
    long delta = 0;
    long bound = 0;
    for (int p : members) {
      Part part = ctx.parts.get(p);
      long d =
          ctx.initiator() ? part.localCount - part.remoteCount : part.remoteCount - part.localCount;
      delta += d;
      bound += Math.abs(d);
    }
    return new RatelessPacing(
        new RatelessPacing.Config(FIRST_BATCH, c.minBatch(), c.growth(), c.estimate()),
        limit(),
        delta,
        bound,
        prior);
  }

  /**
   * The first grant of a stream: the symbols the responder sends unasked (see the class comment).
   */
  private int firstGrant(int[] members, int unequal) {
    return pacing(
            new RatelessPacing.Config(FIRST_BATCH, 1, 0.25, false),
            members,
            expected(members, unequal))
        .firstGrant();
  }

  /**
   * The share of the expected difference ({@link SessionContext#expectedDifference}) of the stream
   * of {@code members}: all of it for a group, which holds every unequal partition; else an equal
   * share over the {@code unequal} partitions. Both sides know both numbers.
   */
  private long expected(int[] members, int unequal) {
    long e = ctx.expectedDifference;
    if (e <= 0 || groups.containsKey(members[0])) {
      return Math.max(e, 0);
    }
    int k = Math.max(1, unequal);
    return (e + k - 1) / k;
  }

  /**
   * The symbols of a stream of {@code members}: a copy of this side's, summed over a group; each
   * member's fingerprint of the same instant is kept ({@link #snapshotFingerprints}).
   */
  private SymbolSnapshot symbolsOf(int[] members) {
    SymbolSnapshot sum = new SymbolSnapshot(ctx.params.spec(), ctx.params.ratelessLog2());
    try {
      for (int p : members) {
        snapshotFingerprints.put(p, ctx.local.addSymbols(p, sum));
      }
    } catch (RuntimeException e) {
      Releases.rethrow(Releases.run(sum::release, e));
    }
    return sum;
  }

  /**
   * Both sides, when the streams are over (every partition settled, or the session failed): the
   * snapshots are released, so that the store's writes no longer copy symbols for them.
   */
  void release() {
    RuntimeException first = null;
    for (SymbolSnapshot s : streams.values()) {
      first = Releases.run(s::release, first);
    }
    streams.clear();
    for (RatelessDecoder d : decoders.values()) {
      first = Releases.run(d::release, first);
    }
    decoders.clear();
    Releases.rethrow(first);
  }

  /** Responder: the digests of the snapshots of {@code members}, for the initiator's check. */
  private void addSnapshotDigests(SymbolChunk.Builder chunk, int[] members) {
    for (int p : members) {
      chunk
          .addSnapshotPartitions(p)
          .addSnapshotDigests(ctx.params.spec().fingerprintDigest(snapshotFingerprints.get(p)));
    }
  }

  // ---------------------------------------------------------------- responder

  /** Responder: starts the streams of the unequal partitions and sends each one's first batch. */
  void start(List<Part> parts) {
    if (parts.isEmpty()) {
      return;
    }
    List<SymbolSnapshot> from = new ArrayList<>();
    List<int[]> ranges = new ArrayList<>();
    SymbolChunk.Builder chunk = SymbolChunk.newBuilder();
    for (Part part : parts) {
      part.phase = Part.Phase.STREAMING;
    }
    for (int[] members : streamsOf(parts)) {
      SymbolSnapshot snapshot = symbolsOf(members);
      addSnapshotDigests(chunk, members);
      int n = Math.min(limit(), firstGrant(members, parts.size()));
      streams.put(members[0], snapshot);
      sent.put(members[0], n);
      from.add(snapshot);
      ranges.add(new int[] {members[0], 0, n});
    }
    ctx.queue(Envelope.newBuilder().setSymbols(pack(chunk, from, ranges)));
  }

  /** Responder: the initiator grants more symbols (and may split groups). */
  void onRequest(SymbolRequest r) throws ProtocolException {
    if (r.getPartitionsCount() != r.getUpToCount()) {
      throw new ProtocolException(
          Code.MALFORMED,
          "SymbolRequest lists "
              + r.getPartitionsCount()
              + " streams and "
              + r.getUpToCount()
              + " limits");
    }
    // Streams that a split starts: partition -> whether this request started it yet.
    Map<Integer, Boolean> starting = new HashMap<>();
    for (int g : r.getSplitList()) {
      int[] members = groups.remove(g);
      if (members == null || !streams.containsKey(g)) {
        throw new ProtocolException(
            Code.MALFORMED, "SymbolRequest splits " + g + ", which is no group stream");
      }
      streams.remove(g).release();
      sent.remove(g);
      for (int p : members) {
        starting.put(p, false);
      }
    }
    if (r.getPartitionsCount() > streams.size() + starting.size()) {
      throw new ProtocolException(
          Code.MALFORMED,
          "SymbolRequest lists "
              + r.getPartitionsCount()
              + " streams; "
              + (streams.size() + starting.size())
              + " are open");
    }
    List<SymbolSnapshot> from = new ArrayList<>();
    List<int[]> ranges = new ArrayList<>();
    SymbolChunk.Builder chunk = SymbolChunk.newBuilder();
    for (int j = 0; j < r.getPartitionsCount(); j++) {
      int p = r.getPartitions(j);
      Part part = ctx.part(p, "SymbolRequest");
      if (part.phase != Part.Phase.STREAMING) {
        throw new ProtocolException(
            Code.MALFORMED, "SymbolRequest for partition " + p + " in phase " + part.phase);
      }
      Boolean started = starting.get(p);
      if (Boolean.FALSE.equals(started)) {
        starting.put(p, true);
        int[] alone = {p};
        streams.put(p, symbolsOf(alone));
        addSnapshotDigests(chunk, alone);
        sent.put(p, 0);
      }
      SymbolSnapshot s = streams.get(p);
      if (s == null || Boolean.TRUE.equals(started)) {
        throw new ProtocolException(
            Code.MALFORMED,
            "SymbolRequest for partition "
                + p
                + (s == null ? ", which streams no symbols" : " twice"));
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
    for (Map.Entry<Integer, Boolean> e : starting.entrySet()) {
      if (!e.getValue()) {
        throw new ProtocolException(
            Code.MALFORMED,
            "SymbolRequest splits the group of partition "
                + e.getKey()
                + " but grants it no symbols");
      }
    }
    ctx.queue(Envelope.newBuilder().setSymbols(pack(chunk, from, ranges)));
  }

  /** Responder: streams that did not decode go on the estimator path. */
  void onFallback(RatelessFallback f) throws ProtocolException {
    List<Part> parts = new ArrayList<>();
    for (int p : f.getPartitionsList()) {
      Part part = ctx.part(p, "RatelessFallback");
      if (part.phase != Part.Phase.STREAMING || !streams.containsKey(p) || groups.containsKey(p)) {
        throw new ProtocolException(
            Code.MALFORMED,
            "RatelessFallback for partition "
                + p
                + (groups.containsKey(p) ? ", a group stream" : " in phase " + part.phase));
      }
      streams.remove(p).release();
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
    release();
  }

  private static SymbolChunk.Builder pack(
      SymbolChunk.Builder chunk, List<SymbolSnapshot> from, List<int[]> ranges) {
    long total = 0;
    for (int[] r : ranges) {
      total += r[2] - r[1];
    }
    ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(PackedSymbols.bytes(total)));
    for (int j = 0; j < ranges.size(); j++) {
      int[] r = ranges.get(j);
      chunk.addPartitions(r[0]).addFirsts(r[1]).addCounts(r[2] - r[1]);
      SymbolSnapshot s = from.get(j);
      s.ensure(r[2]);
      PackedSymbols.write(s.symbols(), r[1], r[2], out);
    }
    out.flip();
    return chunk.setSymbols(com.google.protobuf.UnsafeByteOperations.unsafeWrap(out));
  }

  // ---------------------------------------------------------------- initiator

  /** Initiator: expects the streams of the unequal partitions, whose first batches come unasked. */
  void expect(List<Part> parts) {
    for (Part part : parts) {
      part.phase = Part.Phase.DECODING;
    }
    for (int[] members : streamsOf(parts)) {
      decoders.put(members[0], new RatelessDecoder(symbolsOf(members)));
      RatelessPacing pacing = pacing(ctx.config.pacing(), members, expected(members, parts.size()));
      pacing.firstGrant(); // the batch the responder sends unasked (see firstGrant)
      pacings.put(members[0], pacing);
    }
  }

  /** Initiator: symbols of some streams; decodes, settles, grants more, splits or falls back. */
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
    takeSnapshotDigests(c);
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
      int[] group = groups.get(p);
      if (dec.complete()) {
        settle(group == null ? new int[] {p} : group, dec, pacing);
        continue;
      }
      if (group != null) {
        if (dec.exhausted() || tooLargeForAGroup(dec, pacing)) {
          split(p, group, dec, pacing, more);
        } else if (pacing.nextGrant(dec, Math.max(dec.received(), ESTIMATE_AFTER)) > 0) {
          more.addPartitions(p).addUpTo(pacing.granted());
        }
        continue;
      }
      if (dec.exhausted() || beyondThePrefix(dec, pacing)) {
        fallback.addPartitions(p);
        decoders.remove(p).release();
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

  /** Initiator: keeps the responder's snapshot digests that {@code c} carries. */
  private void takeSnapshotDigests(SymbolChunk c) throws ProtocolException {
    int n =
        Wire.snapshotDigestCount(
            "SymbolChunk", c.getSnapshotPartitionsCount(), c.getSnapshotDigestsCount());
    for (int j = 0; j < n; j++) {
      int p = c.getSnapshotPartitions(j);
      Part part = ctx.part(p, "SymbolChunk snapshot digest");
      if (part.phase != Part.Phase.DECODING) {
        throw new ProtocolException(
            Code.MALFORMED,
            "SymbolChunk snapshot digest for partition " + p + " in phase " + part.phase);
      }
      remoteDigests.put(p, c.getSnapshotDigests(j));
    }
  }

  /**
   * Initiator: true when {@code part}'s decoded lists turn this side's snapshot fingerprint into
   * the responder's (see the class comment); false when they do not or a digest is missing.
   */
  private boolean matchesSnapshots(Part part) {
    Fingerprint mine = snapshotFingerprints.get(part.partition);
    Long theirs = remoteDigests.get(part.partition);
    return mine != null
        && theirs != null
        && turnsInto(ctx.params.spec(), mine, part.missingRemote, part.missingLocal, theirs);
  }

  /**
   * True when the set of fingerprint {@code mine}, without {@code onlyHere} and with {@code
   * onlyThere}, has the fingerprint digest {@code theirs}.
   */
  static boolean turnsInto(
      HashSpec spec, Fingerprint mine, LongList onlyHere, LongList onlyThere, long theirs) {
    Fingerprint.Accumulator f = new Fingerprint.Accumulator(spec);
    f.set(mine);
    for (int i = 0; i < onlyHere.size(); i++) {
      f.remove(onlyHere.get(i));
    }
    for (int i = 0; i < onlyThere.size(); i++) {
      f.add(onlyThere.get(i));
    }
    return spec.fingerprintDigest(f.snapshot()) == theirs;
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

  /** True when a group's estimated need is past its share of the prefix (see the class comment). */
  private boolean tooLargeForAGroup(RatelessDecoder dec, RatelessPacing pacing) {
    return dec.received() >= ESTIMATE_AFTER
        && RatelessPacing.SYMBOLS_PER_DIFFERENCE * pacing.estimate(dec).d() > SPLIT_SHARE * limit();
  }

  /**
   * Abandons the group stream {@code id}: each partition starts its own stream, granted its share
   * of the group's estimate (as the prior of its pacing) in {@code more}.
   */
  private void split(
      int id,
      int[] members,
      RatelessDecoder dec,
      RatelessPacing pacing,
      SymbolRequest.Builder more) {
    double d = Math.max(pacing.estimate(dec).d(), dec.recovered());
    long prior = (long) Math.ceil(d / members.length);
    groups.remove(id);
    decoders.remove(id).release();
    pacings.remove(id);
    more.addSplit(id);
    ctx.stats.splits++;
    for (int p : members) {
      RatelessPacing own = pacing(ctx.config.pacing(), new int[] {p}, prior);
      remoteDigests.remove(p); // the responder's new stream of p comes with its own
      decoders.put(p, new RatelessDecoder(symbolsOf(new int[] {p})));
      pacings.put(p, own);
      grantsBefore.put(p, pacing.grants());
      more.addPartitions(p).addUpTo(own.firstGrant());
    }
  }

  private void settle(int[] members, RatelessDecoder dec, RatelessPacing pacing) {
    int id = members[0];
    // The decoded difference is (mine - theirs): "here" is only at the initiator.
    if (members.length == 1) {
      Part part = ctx.parts.get(id);
      part.missingRemote = LongList.of(dec.onlyHere());
      part.missingLocal = LongList.of(dec.onlyThere());
    } else {
      for (int p : members) {
        Part part = ctx.parts.get(p);
        part.missingRemote = new LongList(16);
        part.missingLocal = new LongList(16);
      }
      distribute(members, dec.onlyHere(), true);
      distribute(members, dec.onlyThere(), false);
    }
    decoders.remove(id).release();
    pacings.remove(id);
    groups.remove(id);
    ctx.stats.roundTrips =
        Math.max(ctx.stats.roundTrips, grantsBefore.getOrDefault(id, 0) + pacing.grants());
    for (int p : members) {
      Part part = ctx.parts.get(p);
      if (matchesSnapshots(part)) {
        ctx.stats.checkedByFingerprint++;
      } else {
        part.missingRemote = ctx.verified(p, part.missingRemote, true);
        part.missingLocal = ctx.verified(p, part.missingLocal, false);
      }
      ctx.settle(part, PartitionOutcome.Path.RATELESS);
      results.send(part);
    }
  }

  /** Files a group's decoded elements under their partitions; others are unverified. */
  private void distribute(int[] members, long[] elements, boolean onlyHere) {
    for (long x : elements) {
      int p = HashSpec.partitionOfElement(x, ctx.params.partitionsLog2());
      if (Arrays.binarySearch(members, p) < 0) {
        ctx.stats.unverified++;
        continue;
      }
      Part part = ctx.parts.get(p);
      (onlyHere ? part.missingRemote : part.missingLocal).add(x);
    }
  }
}
