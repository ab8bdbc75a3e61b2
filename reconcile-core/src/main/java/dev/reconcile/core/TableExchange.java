package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.EstimatorOffer;
import dev.reconcile.core.wire.IbltOffer;
import dev.reconcile.core.wire.IbltRequest;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The estimator path: the responder offers one estimator for the sum of its unequal partitions; the
 * initiator plans tables from the estimate ({@link TablePlanner}) and sends one IBLT per group of
 * partitions (the sum of their tables, folded from the maintained ones); the responder subtracts
 * its own, peels, and either lists the result ({@link ResultStream}), asks for the doubled table,
 * splits a group whose largest table failed, or falls back to the sorted lists ({@link
 * DigestMerge}). A partial decode is never used.
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
   * Responder: starts the unequal partitions. When the initiator's whole lists are smaller than one
   * estimator, it asks for them; otherwise it offers one estimator for all of them (estimators are
   * linear: their sum estimates the total difference for the price of one).
   */
  void offer(List<Part> unequal) {
    if (unequal.isEmpty()) {
      return;
    }
    long remoteTotal = 0;
    for (Part part : unequal) {
      remoteTotal += Math.max(0, part.remoteCount);
    }
    if (remoteTotal * 8 <= estimatorBytes()) {
      for (Part part : unequal) {
        digests.request(part, DigestMerge.REASON_SMALL);
      }
      return;
    }
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

  /** Responder: subtracts its own table from a group's, peels, and settles or asks for more. */
  void onIblt(IbltOffer o) throws ProtocolException {
    int[] listed = ctx.listedPartitions(o.getPartitionsList(), o.getPartition(), "IbltOffer");
    TableGroup group;
    IbltShape expected;
    if (o.getAttempt() == 1) {
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
      group = groups.get(Arrays.toString(listed));
      if (group == null || group.requested == null || o.getAttempt() != group.attempts + 1) {
        throw new ProtocolException(
            Code.MALFORMED,
            "IbltOffer attempt "
                + o.getAttempt()
                + " for partitions "
                + Arrays.toString(listed)
                + " was not asked for");
      }
      expected = group.requested;
    }
    Iblt table = Wire.readIblt(o.getTable(), ctx.params, expected);
    ctx.stats.ibltCells += table.cells();
    group.attempts = o.getAttempt();
    group.lastShape = table.shape();
    group.requested = null;
    for (int p : group.partitions) {
      ctx.parts.get(p).estimate = Math.round(group.estimate / (double) group.partitions.length);
      table.subtract(ctx.local.iblt(p, table.shape()));
    }
    PeelResult r = table.peel();
    if (r.complete()) {
      settleGroup(group, r);
      return;
    }
    ctx.stats.decodeFailures++;
    IbltShape next = TablePlanner.nextShape(ctx.params, table.shape());
    if (next != null) {
      ctx.stats.doublings++;
      requestTable(group, next);
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
        requestTable(g, ctx.params.maxShape());
      }
    } else {
      digests.request(ctx.parts.get(group.partitions[0]), DigestMerge.REASON_TOO_LARGE);
    }
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
      part.missingLocal = ctx.verified(p, part.missingLocal, false);
      part.missingRemote = ctx.verified(p, part.missingRemote, true);
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

  private void requestTable(TableGroup group, IbltShape shape) {
    group.requested = shape;
    IbltRequest.Builder b =
        IbltRequest.newBuilder().setPartition(group.partitions[0]).setShape(Wire.toProto(shape));
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
      if (part.phase != Part.Phase.WAIT_OFFER) {
        throw new ProtocolException(
            Code.MALFORMED, "EstimatorOffer for partition " + p + " in phase " + part.phase);
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
    Iblt t = ctx.local.iblt(group.partitions[0], shape);
    for (int j = 1; j < group.partitions.length; j++) {
      t.add(ctx.local.iblt(group.partitions[j], shape));
    }
    IbltOffer.Builder b =
        IbltOffer.newBuilder()
            .setPartition(group.partitions[0])
            .setAttempt(group.attempts)
            .setEstimate(Math.max(0, group.estimate))
            .setTable(Wire.toProto(t));
    for (int p : group.partitions) {
      b.addPartitions(p);
    }
    ctx.queue(Envelope.newBuilder().setIblt(b));
  }

  /** Initiator: the doubled table of a group, or the largest one for half of it (a split). */
  void onIbltRequest(IbltRequest r) throws ProtocolException {
    int[] listed = ctx.listedPartitions(r.getPartitionsList(), r.getPartition(), "IbltRequest");
    IbltShape want = Wire.fromProto(r.getShape());
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
