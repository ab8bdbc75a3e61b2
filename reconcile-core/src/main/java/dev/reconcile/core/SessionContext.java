package dev.reconcile.core;

import dev.reconcile.core.ReconcileSession.Role;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;

/**
 * What the phases of one session share: who this side is, its ports, the partitions in play, the
 * unequal partitions' state, the settled outcomes, the outbox and the counters. Owned by {@link
 * ReconcileSession}; each phase reads and writes the part it owns.
 */
final class SessionContext {
  final Role role;
  final SessionConfig config;
  final PartitionSketches local;
  final SketchParams params;
  final RecordStore records;
  final RoundProgress progress;
  final SessionStats stats = new SessionStats();
  final RepairStats repair = new RepairStats();
  final Outbox out = new Outbox();

  /** The unequal partitions being reconciled, by partition. */
  final TreeMap<Integer, Part> parts = new TreeMap<>();

  /** Settled partitions, by partition. */
  final TreeMap<Integer, PartitionOutcome> outcomes = new TreeMap<>();

  int[] partitions;
  String peerNodeId = "";
  boolean dryRun;

  /** The rateless mode was chosen for this session. */
  boolean rateless;

  /** Both sides offered row batches: bulk partitions go as {@code RowBatch} frames. */
  boolean rowBatches;

  /** The rateless mode with grouped streams was chosen for this session. */
  boolean ratelessGroups;

  /**
   * The difference the initiator expects, as both sides use it to size the rateless streams' first
   * batches (the HelloAck's {@code expected_difference}); 0 for none.
   */
  long expectedDifference;

  SessionContext(
      Role role,
      SessionConfig config,
      PartitionSketches local,
      RecordStore records,
      RoundProgress progress) {
    this.role = role;
    this.config = config;
    this.local = local;
    this.params = local.params();
    this.records = records;
    this.progress = progress == null ? RoundProgress.NONE : progress;
    this.dryRun = config.dryRun() || records == null;
  }

  boolean initiator() {
    return role == Role.INITIATOR;
  }

  void queue(Envelope.Builder frame) {
    out.add(frame);
  }

  Part part(int p, String what) throws ProtocolException {
    Part part = parts.get(p);
    if (part == null) {
      throw new ProtocolException(
          Code.MALFORMED, what + " for partition " + p + ", which is not being reconciled");
    }
    return part;
  }

  /**
   * A peer's list of partitions (or {@code single} when empty): ascending, at most those unequal.
   */
  int[] listedPartitions(List<Integer> list, int single, String what) throws ProtocolException {
    int[] ps;
    if (list.isEmpty()) {
      ps = new int[] {single};
    } else {
      if (list.size() > parts.size()) {
        throw new ProtocolException(
            Code.MALFORMED,
            what + " lists " + list.size() + " partitions, " + parts.size() + " differ");
      }
      ps = new int[list.size()];
      for (int j = 0; j < ps.length; j++) {
        ps[j] = list.get(j);
      }
    }
    for (int j = 1; j < ps.length; j++) {
      if (ps[j] <= ps[j - 1]) {
        throw new ProtocolException(
            Code.MALFORMED, what + " partitions are not ascending: " + Arrays.toString(ps));
      }
    }
    return ps;
  }

  /** Records how {@code part} was settled. */
  void settle(Part part, PartitionOutcome.Path path) {
    part.phase = Part.Phase.SETTLED;
    if (part.group != null) {
      part.attempts = part.group.attempts;
      part.lastShape = part.group.lastShape;
    }
    // Hello (which carries the fingerprints), then one per table, list or symbol batch.
    stats.roundTrips = Math.max(stats.roundTrips, 1 + part.attempts + (part.fallback ? 1 : 0));
    long[] local = part.missingLocal.toArray();
    long[] remote = part.missingRemote.toArray();
    int cap = listCap();
    if (local.length + remote.length > cap) {
      // Cut at max-listed-elements: what is listed is exact, the rest waits for the next round.
      local = Arrays.copyOf(local, Math.min(local.length, cap));
      remote = Arrays.copyOf(remote, cap - local.length);
      part.missingLocal = LongList.of(local);
      part.missingRemote = LongList.of(remote);
      part.partial = true;
    }
    outcomes.put(
        part.partition,
        new PartitionOutcome(
            part.partition,
            path,
            local,
            remote,
            part.lacksHere >= 0 ? part.lacksHere : local.length,
            part.lacksThere >= 0 ? part.lacksThere : remote.length,
            part.partial,
            part.estimate,
            part.attempts,
            path == PartitionOutcome.Path.IBLT ? part.lastShape : null));
  }

  /** Most elements one partition's lists may hold in this session (max-listed-elements). */
  int listCap() {
    return config.limits().maxMissingPerPartition();
  }

  boolean allSettled() {
    for (Part part : parts.values()) {
      if (part.phase != Part.Phase.SETTLED) {
        return false;
      }
    }
    return true;
  }

  /**
   * Keeps the listed elements that are present here ({@code present}) or absent here (not {@code
   * present}); counts the others as unverified. An element fails this check when the decode was
   * wrong (a random element is never present) or when a write changed the set during the session;
   * either way nothing may be done with it, and the next round sees any difference that remains.
   */
  LongList verified(int p, LongList list, boolean present) {
    long[] xs = list.toArray();
    boolean[] here = xs.length == 0 ? new boolean[0] : local.containsAll(p, xs);
    LongList kept = new LongList(xs.length);
    for (int i = 0; i < xs.length; i++) {
      if (here[i] == present) {
        kept.add(xs[i]);
      } else {
        stats.unverified++;
      }
    }
    return kept;
  }
}
