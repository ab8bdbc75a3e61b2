package dev.reconcile.core;

import com.google.protobuf.ByteString;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.EstimatorOffer;
import dev.reconcile.core.wire.IbltOffer;
import dev.reconcile.core.wire.IbltProto;
import dev.reconcile.core.wire.IbltRequest;
import dev.reconcile.core.wire.Refusal.Code;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The estimator path: the responder offers one estimator for the sum of its unequal partitions; the
 * initiator plans tables from the estimate ({@link TablePlanner}) and sends one IBLT per group of
 * partitions (the sum of their tables, folded from the maintained ones); the responder subtracts
 * its own, peels, and either lists the result ({@link ResultStream}), asks for the extension of the
 * failed table to its doubled shape (only the new half of the cells: the failed table is the fold
 * of the doubled one, so the receiver rebuilds the doubled difference from a copy of the failed
 * one, {@link Iblt#unfold}), asks for a larger whole table where the ladder has no doubled shape,
 * splits a group whose largest table failed, or falls back to the sorted lists ({@link
 * DigestMerge}). A partial decode is never used.
 *
 * <p>When the fingerprints' count difference says few elements differ ({@link
 * Sizing#smallFirstTable}), the responder asks for a small first table before spending an
 * estimator; if it fails, it asks for extensions while they cost no more than the estimator ({@link
 * Sizing#extendBeforeEstimating}), then offers the estimator for the group.
 */
final class TableExchange {
  /** Most tables one partition may be sent (doublings and splits): bounds a hostile responder. */
  static final int MAX_ATTEMPTS = 64;

  private final SessionContext ctx;
  private final DigestMerge digests;
  private final ResultStream results;
  private final Map<String, TableGroup> groups = new HashMap<>();
  private long estimatorWireBytes = -1;

  TableExchange(SessionContext ctx, DigestMerge digests, ResultStream results) {
    this.ctx = ctx;
    this.digests = digests;
    this.results = results;
  }

  // ---------------------------------------------------------------- responder

  /**
   * Responder, estimator mode: starts the unequal partitions. When the initiator's whole lists are
   * smaller than one estimator, it asks for them; when the count difference says few elements
   * differ, it asks for a small first table ({@link Sizing#smallFirstTable}); otherwise it offers
   * one estimator for all of them.
   */
  void start(List<Part> unequal) {
    if (unequal.isEmpty() || listsAreCheaper(unequal)) {
      return;
    }
    if (ctx.params.ibltHashCount() == Sizing.HASH_COUNT) {
      long countDifference = 0;
      for (Part part : unequal) {
        countDifference += part.countBound();
      }
      IbltShape small = Sizing.smallFirstTable(countDifference, unequal.size(), estimatorBytes());
      if (small != null && ctx.params.allows(small)) {
        TableGroup group = newGroup(unequal);
        group.blind = true;
        group.estimate = Sizing.differenceLowerBound(countDifference, unequal.size());
        requestTable(group, small, Kind.FIRST);
        return;
      }
    }
    sendEstimator(unequal);
  }

  /**
   * Responder: starts partitions on the estimator path with no small first table (after a rateless
   * stream that went past its prefix). Asks for the lists instead when they cost less.
   */
  void offer(List<Part> unequal) {
    if (unequal.isEmpty() || listsAreCheaper(unequal)) {
      return;
    }
    sendEstimator(unequal);
  }

  /** Asks for every part's list when the initiator's lists are smaller than one estimator. */
  private boolean listsAreCheaper(List<Part> unequal) {
    long remoteTotal = 0;
    for (Part part : unequal) {
      remoteTotal += Math.max(0, part.remoteCount);
    }
    if (remoteTotal * 8 > estimatorBytes()) {
      return false;
    }
    for (Part part : unequal) {
      digests.request(part, DigestMerge.REASON_SMALL);
    }
    return true;
  }

  /** Offers one estimator for the sum of {@code unequal} (estimators are linear). */
  private void sendEstimator(List<Part> unequal) {
    DifferenceEstimator sum = null;
    long count = 0;
    EstimatorOffer.Builder offer =
        EstimatorOffer.newBuilder().setPartition(unequal.get(0).partition);
    for (Part part : unequal) {
      part.phase = Part.Phase.WAIT_TABLE;
      DifferenceEstimator e = ctx.local.estimator(part.partition);
      if (sum == null) {
        sum = e;
      } else {
        sum.merge(e);
      }
      count += part.localCount;
      offer.addPartitions(part.partition);
    }
    ctx.queue(
        Envelope.newBuilder().setEstimator(offer.setCount(count).setEstimator(sum.toProto())));
  }

  private long estimatorBytes() {
    if (estimatorWireBytes < 0) {
      estimatorWireBytes = ctx.local.estimator(ctx.partitions[0]).wireBytes();
    }
    return estimatorWireBytes;
  }

  /**
   * Responder: subtracts its own table from a group's (or unfolds an extension), peels, and settles
   * or asks for more.
   */
  void onIblt(IbltOffer o) throws ProtocolException {
    int[] listed = ctx.listedPartitions(o.getPartitionsList(), o.getPartition(), "IbltOffer");
    TableGroup group = groups.get(Arrays.toString(listed));
    IbltShape expected;
    if (group != null && group.requested != null) {
      if (o.getAttempt() != group.attempts + 1 || o.getExtension() != group.requestedExtension) {
        throw new ProtocolException(
            Code.MALFORMED,
            "IbltOffer attempt "
                + o.getAttempt()
                + (o.getExtension() ? " (extension)" : "")
                + " for partitions "
                + Arrays.toString(listed)
                + " was not asked for");
      }
      expected = group.requested;
    } else if (o.getAttempt() == 1 && !o.getExtension()) {
      List<Part> members = new ArrayList<>();
      for (int p : listed) {
        Part part = ctx.part(p, "IbltOffer");
        if (part.phase != Part.Phase.WAIT_TABLE || part.group != null) {
          throw new ProtocolException(
              Code.MALFORMED, "IbltOffer attempt 1 for partition " + p + " in phase " + part.phase);
        }
        members.add(part);
      }
      group = newGroup(members);
      group.estimate = o.getEstimate();
      expected = null;
    } else {
      throw new ProtocolException(
          Code.MALFORMED,
          "IbltOffer attempt "
              + o.getAttempt()
              + (o.getExtension() ? " (extension)" : "")
              + " for partitions "
              + Arrays.toString(listed)
              + " was not asked for");
    }
    Iblt table;
    if (o.getExtension()) {
      ByteBuffer cells = Wire.readExtension(o.getTable(), ctx.params, expected);
      try {
        table = Iblt.unfold(group.kept, cells, localTable(group, expected));
      } catch (FormatException e) {
        throw new ProtocolException(Code.MALFORMED, "IbltOffer extension: " + e.getMessage());
      }
      ctx.stats.ibltCells += expected.cells() / 2;
    } else {
      table = Wire.readIblt(o.getTable(), ctx.params, expected);
      ctx.stats.ibltCells += table.cells();
      table.subtract(localTable(group, table.shape()));
    }
    takeSnapshotDigests(group, o);
    group.attempts = o.getAttempt();
    group.lastShape = table.shape();
    group.requested = null;
    group.requestedExtension = false;
    for (int p : group.partitions) {
      ctx.parts.get(p).estimate = Math.round(group.estimate / (double) group.partitions.length);
    }
    IbltShape doubled = doubledShape(table.shape());
    group.kept = doubled == null ? null : table.copy(); // before peeling, which changes the table
    PeelResult r = table.peel();
    if (r.complete()) {
      group.kept = null;
      settleGroup(group, r);
      return;
    }
    ctx.stats.decodeFailures++;
    if (group.blind
        && !Sizing.extendBeforeEstimating(
            table.shape(), estimatorBytes(), CellLayout.WIDE.cellBytes())) {
      // The count difference was far below the difference: estimate it after all.
      groups.remove(group.key);
      List<Part> members = new ArrayList<>();
      for (int p : group.partitions) {
        Part part = ctx.parts.get(p);
        part.group = null;
        members.add(part);
      }
      sendEstimator(members);
      return;
    }
    if (doubled != null) {
      ctx.stats.doublings++;
      requestTable(group, doubled, Kind.EXTENSION);
      return;
    }
    group.kept = null;
    IbltShape next = TablePlanner.nextShape(ctx.params, table.shape());
    if (next != null) {
      ctx.stats.doublings++;
      requestTable(group, next, Kind.WHOLE);
    } else if (group.partitions.length > 1) {
      // The largest table failed for several partitions: split the group, each half at the
      // largest shape again (each holds about half of the difference).
      ctx.stats.doublings++;
      for (int[] half : TablePlanner.halves(group.partitions)) {
        List<Part> members = new ArrayList<>();
        for (int p : half) {
          members.add(ctx.parts.get(p));
        }
        TableGroup g = newGroup(members);
        g.attempts = group.attempts;
        g.estimate = group.estimate * half.length / group.partitions.length;
        requestTable(g, ctx.params.maxShape(), Kind.WHOLE);
      }
    } else {
      digests.request(ctx.parts.get(group.partitions[0]), DigestMerge.REASON_TOO_LARGE);
    }
  }

  /** The doubled shape of {@code shape} when the parameters allow it (same ladder), else null. */
  private IbltShape doubledShape(IbltShape shape) {
    if (shape.log2() >= IbltShape.MAX_LOG2) {
      return null;
    }
    IbltShape d = shape.doubled();
    return ctx.params.allows(d) ? d : null;
  }

  /**
   * This side's table of {@code shape} for the group: the sum of its partitions' tables, each
   * folded with the partition's fingerprint of the same instant, which a decode is checked against
   * ({@link Part#tableFingerprint}).
   */
  private Iblt localTable(TableGroup group, IbltShape shape) {
    Iblt t = null;
    for (int p : group.partitions) {
      PartitionSketches.FoldedTable f = ctx.local.foldWithFingerprint(p, shape);
      ctx.parts.get(p).tableFingerprint = f.fingerprint();
      if (t == null) {
        t = f.table();
      } else {
        t.add(f.table());
      }
    }
    return t;
  }

  /** Initiator: the fingerprint digests of the group's partitions as of its table's fold. */
  private void addSnapshotDigests(IbltOffer.Builder b, TableGroup group) {
    for (int p : group.partitions) {
      b.addSnapshotPartitions(p)
          .addSnapshotDigests(
              ctx.params.spec().fingerprintDigest(ctx.parts.get(p).tableFingerprint));
    }
  }

  /**
   * Responder: keeps the initiator's digests that {@code o} carries (a partition of the group
   * without one has none: an older initiator, or none this time).
   */
  private void takeSnapshotDigests(TableGroup group, IbltOffer o) throws ProtocolException {
    int n =
        Wire.snapshotDigestCount(
            "IbltOffer", o.getSnapshotPartitionsCount(), o.getSnapshotDigestsCount());
    for (int p : group.partitions) {
      ctx.parts.get(p).peerTableDigest = null;
    }
    for (int j = 0; j < n; j++) {
      int p = o.getSnapshotPartitions(j);
      if (Arrays.binarySearch(group.partitions, p) < 0) {
        throw new ProtocolException(
            Code.MALFORMED,
            "IbltOffer snapshot digest for partition "
                + p
                + ", not of the group "
                + Arrays.toString(group.partitions));
      }
      ctx.parts.get(p).peerTableDigest = o.getSnapshotDigests(j);
    }
  }

  /**
   * True when {@code part}'s decoded lists turn this side's fingerprint as of its table's fold into
   * the peer's digest as of its own ({@link RatelessExchange#turnsInto}); false when they do not or
   * either is missing.
   */
  static boolean matchesTables(HashSpec spec, Part part, Long peerDigest) {
    return part.tableFingerprint != null
        && peerDigest != null
        && RatelessExchange.turnsInto(
            spec, part.tableFingerprint, part.missingRemote, part.missingLocal, peerDigest);
  }

  /** Table = I - R: only at the initiator (missing here) peel with +1, only here with -1. */
  private void settleGroup(TableGroup group, PeelResult r) {
    for (int p : group.partitions) {
      Part part = ctx.parts.get(p);
      part.missingLocal = new LongList(16);
      part.missingRemote = new LongList(16);
    }
    distribute(group, r.onlyHere(), true);
    distribute(group, r.onlyThere(), false);
    for (int p : group.partitions) {
      Part part = ctx.parts.get(p);
      if (matchesTables(ctx.params.spec(), part, part.peerTableDigest)) {
        ctx.stats.checkedByFingerprint++;
      } else {
        part.tableFingerprint = null; // the initiator is sent no digest: it looks up as well
        part.missingLocal = ctx.verified(p, part.missingLocal, false);
        part.missingRemote = ctx.verified(p, part.missingRemote, true);
      }
      ctx.settle(part, PartitionOutcome.Path.IBLT);
      results.send(part);
    }
  }

  /**
   * Files decoded elements under their partitions; an element of no group partition is unverified.
   */
  private void distribute(TableGroup group, long[] elements, boolean missingHere) {
    for (long x : elements) {
      Part part = ctx.parts.get(HashSpec.partitionOfElement(x, ctx.params.partitionsLog2()));
      if (part == null || part.group != group) {
        ctx.stats.unverified++;
        continue;
      }
      (missingHere ? part.missingLocal : part.missingRemote).add(x);
    }
  }

  /** What an {@link IbltRequest} asks for. */
  private enum Kind {
    /** A whole table of the shape (a larger one where no doubled shape exists, or a split). */
    WHOLE,
    /** The extension of the group's failed table to its doubled shape. */
    EXTENSION,
    /** A first table, before any estimator. */
    FIRST
  }

  private void requestTable(TableGroup group, IbltShape shape, Kind kind) {
    group.requested = shape;
    group.requestedExtension = kind == Kind.EXTENSION;
    IbltRequest.Builder b =
        IbltRequest.newBuilder()
            .setPartition(group.partitions[0])
            .setShape(Wire.toProto(shape))
            .setExtension(kind == Kind.EXTENSION)
            .setFirst(kind == Kind.FIRST);
    for (int p : group.partitions) {
      b.addPartitions(p);
      ctx.parts.get(p).phase = Part.Phase.WAIT_LARGER;
    }
    ctx.queue(Envelope.newBuilder().setIbltRequest(b));
  }

  // ---------------------------------------------------------------- initiator

  /**
   * Initiator: estimates the difference over the offered partitions and sends the planned tables.
   */
  void onEstimator(EstimatorOffer o) throws ProtocolException {
    List<Integer> listed =
        o.getPartitionsCount() == 0 ? List.of(o.getPartition()) : o.getPartitionsList();
    if (listed.size() > ctx.parts.size()) {
      throw new ProtocolException(
          Code.MALFORMED,
          "EstimatorOffer lists " + listed.size() + " partitions, " + ctx.parts.size() + " differ");
    }
    List<Part> covered = new ArrayList<>(listed.size());
    DifferenceEstimator sum = null;
    for (int p : listed) {
      Part part = ctx.part(p, "EstimatorOffer");
      boolean afterSmallTable =
          part.phase == Part.Phase.WAIT_RESULT && part.group != null && part.group.blind;
      if (part.phase != Part.Phase.WAIT_OFFER && !afterSmallTable) {
        throw new ProtocolException(
            Code.MALFORMED, "EstimatorOffer for partition " + p + " in phase " + part.phase);
      }
      if (afterSmallTable) {
        groups.remove(part.group.key);
        part.group = null;
      }
      part.phase = Part.Phase.WAIT_RESULT; // also rejects a partition listed twice
      covered.add(part);
      DifferenceEstimator e = ctx.local.estimator(p);
      if (sum == null) {
        sum = e;
      } else {
        sum.merge(e);
      }
    }
    Estimate estimate;
    try {
      estimate = sum.estimate(o.getEstimator());
    } catch (FormatException ex) {
      throw new ProtocolException(
          Code.MALFORMED, "estimator of partitions " + listed + ": " + ex.getMessage());
    }
    long total = estimate.value();
    int n = covered.size();
    int[] ps = new int[n];
    long[] localCounts = new long[n];
    long[] remoteCounts = new long[n];
    for (int i = 0; i < n; i++) {
      Part part = covered.get(i);
      ps[i] = part.partition;
      localCounts[i] = part.localCount;
      remoteCounts[i] = part.remoteCount;
      part.estimate = Math.round(total / (double) n);
    }
    for (TablePlanner.Group g :
        TablePlanner.plan(
            ctx.params,
            total,
            estimate.exact(),
            sum.sizingFactor(),
            ps,
            localCounts,
            remoteCounts)) {
      if (g.shape() == null) {
        for (int p : g.partitions()) {
          digests.send(ctx.parts.get(p));
        }
      } else {
        List<Part> members = new ArrayList<>();
        for (int p : g.partitions()) {
          members.add(ctx.parts.get(p));
        }
        TableGroup group = newGroup(members);
        group.estimate = g.estimate();
        sendTable(group, g.shape());
      }
    }
  }

  private void sendTable(TableGroup group, IbltShape shape) {
    group.attempts++;
    group.lastShape = shape;
    ctx.stats.ibltCells += shape.cells();
    Iblt t = localTable(group, shape);
    IbltOffer.Builder b =
        IbltOffer.newBuilder()
            .setPartition(group.partitions[0])
            .setAttempt(group.attempts)
            .setEstimate(Math.max(0, group.estimate))
            .setTable(Wire.toProto(t));
    for (int p : group.partitions) {
      b.addPartitions(p);
    }
    addSnapshotDigests(b, group);
    ctx.queue(Envelope.newBuilder().setIblt(b));
  }

  /**
   * Initiator: the extension of the group's last table to {@code doubled}: only the upper cell of
   * every folding pair, half of the doubled table's cells.
   */
  private void sendExtension(TableGroup group, IbltShape doubled) {
    group.attempts++;
    group.lastShape = doubled;
    Iblt t = localTable(group, doubled);
    ctx.stats.ibltCells += t.extensionCells();
    IbltProto table =
        IbltProto.newBuilder()
            .setFormatVersion(Wire.SKETCH_VERSION)
            .setHashId(t.spec().id())
            .setSeedFingerprint(t.spec().seedFingerprint())
            .setShape(Wire.toProto(doubled))
            .setLayout(Wire.toProto(t.layout()))
            .setCells(ByteString.copyFrom(t.packExtension()))
            .build();
    IbltOffer.Builder b =
        IbltOffer.newBuilder()
            .setPartition(group.partitions[0])
            .setAttempt(group.attempts)
            .setEstimate(Math.max(0, group.estimate))
            .setTable(table)
            .setExtension(true);
    for (int p : group.partitions) {
      b.addPartitions(p);
    }
    addSnapshotDigests(b, group);
    ctx.queue(Envelope.newBuilder().setIblt(b));
  }

  /**
   * Initiator: a first table before any estimator, the extension of a group's failed table, its
   * doubled table, or the largest one for half of it (a split).
   */
  void onIbltRequest(IbltRequest r) throws ProtocolException {
    int[] listed = ctx.listedPartitions(r.getPartitionsList(), r.getPartition(), "IbltRequest");
    IbltShape want = Wire.fromProto(r.getShape());
    if (r.getExtension() && r.getFirst()) {
      throw new ProtocolException(
          Code.MALFORMED, "IbltRequest asks for both an extension and a first table");
    }
    if (!ctx.params.allows(want)) {
      throw new ProtocolException(
          Code.LIMIT, "IbltRequest for shape " + want + ", largest " + ctx.params.maxShape());
    }
    if (r.getFirst()) {
      List<Part> members = new ArrayList<>(listed.length);
      for (int p : listed) {
        Part part = ctx.part(p, "IbltRequest");
        if (part.phase != Part.Phase.WAIT_OFFER) {
          throw new ProtocolException(
              Code.MALFORMED,
              "IbltRequest for a first table of partition " + p + " in phase " + part.phase);
        }
        part.phase = Part.Phase.WAIT_RESULT; // also rejects a partition listed twice
        members.add(part);
      }
      TableGroup group = newGroup(members);
      group.blind = true;
      long countDifference = 0;
      for (Part part : members) {
        countDifference += part.countBound();
      }
      group.estimate = Sizing.differenceLowerBound(countDifference, members.size());
      for (Part part : members) {
        part.estimate = Math.max(1, Math.round(group.estimate / (double) members.size()));
      }
      sendTable(group, want);
      return;
    }
    TableGroup outstanding = null;
    for (int p : listed) {
      Part part = ctx.part(p, "IbltRequest");
      if (part.phase != Part.Phase.WAIT_RESULT || part.group == null || part.fallback) {
        throw new ProtocolException(
            Code.MALFORMED, "IbltRequest for partition " + p + " with no table outstanding");
      }
      if (outstanding == null) {
        outstanding = part.group;
      } else if (outstanding != part.group) {
        throw new ProtocolException(
            Code.MALFORMED, "IbltRequest spans several groups: " + Arrays.toString(listed));
      }
    }
    if (r.getExtension()) {
      if (!Arrays.equals(listed, outstanding.partitions)
          || outstanding.lastShape.log2() >= IbltShape.MAX_LOG2
          || !want.equals(outstanding.lastShape.doubled())) {
        throw new ProtocolException(
            Code.MALFORMED,
            "IbltRequest for the extension of partitions "
                + Arrays.toString(listed)
                + " to "
                + want
                + ": the outstanding table is "
                + outstanding.lastShape
                + " for "
                + outstanding.key);
      }
      if (outstanding.attempts >= MAX_ATTEMPTS) {
        throw new ProtocolException(
            Code.LIMIT,
            "more than " + MAX_ATTEMPTS + " tables asked for partitions " + outstanding.key);
      }
      ctx.stats.decodeFailures++;
      ctx.stats.doublings++;
      sendExtension(outstanding, want);
      return;
    }
    TableGroup group;
    if (Arrays.equals(listed, outstanding.partitions)) {
      IbltShape next = TablePlanner.nextShape(ctx.params, outstanding.lastShape);
      if (!want.equals(next)) {
        throw new ProtocolException(
            Code.MALFORMED,
            "IbltRequest for shape "
                + want
                + ", the next shape after "
                + outstanding.lastShape
                + " is "
                + next);
      }
      group = outstanding;
    } else {
      // A split of a group whose largest table failed: the same largest shape for a part of it.
      if (!outstanding.lastShape.equals(ctx.params.maxShape())
          || !want.equals(ctx.params.maxShape())) {
        throw new ProtocolException(
            Code.MALFORMED,
            "IbltRequest splits group " + outstanding.key + " before its largest table failed");
      }
      List<Part> members = new ArrayList<>();
      for (int p : listed) {
        members.add(ctx.parts.get(p));
      }
      group = newGroup(members);
      group.attempts = outstanding.attempts;
      group.estimate = outstanding.estimate * listed.length / outstanding.partitions.length;
    }
    if (group.attempts >= MAX_ATTEMPTS) {
      throw new ProtocolException(
          Code.LIMIT, "more than " + MAX_ATTEMPTS + " tables asked for partitions " + group.key);
    }
    ctx.stats.decodeFailures++;
    ctx.stats.doublings++;
    sendTable(group, want);
  }

  private TableGroup newGroup(List<Part> members) {
    int[] ps = new int[members.size()];
    for (int j = 0; j < ps.length; j++) {
      ps[j] = members.get(j).partition;
    }
    Arrays.sort(ps);
    TableGroup group = new TableGroup(ps);
    for (Part part : members) {
      part.group = group;
    }
    groups.put(group.key, group);
    return group;
  }
}
