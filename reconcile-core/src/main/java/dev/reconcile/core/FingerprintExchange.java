package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.FingerprintSet;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.ArrayList;
import java.util.List;

/**
 * Partition fingerprints, both ways: equal partitions settle on the fast path at O(1) cost; each
 * unequal one becomes a {@link Part}. The same message closes a repair ({@link Verify}).
 */
final class FingerprintExchange {
  private final SessionContext ctx;

  FingerprintExchange(SessionContext ctx) {
    this.ctx = ctx;
  }

  /** This side's fingerprints of the session's partitions, read now. */
  Fingerprint[] own() {
    Fingerprint[] fps = new Fingerprint[ctx.partitions.length];
    for (int i = 0; i < fps.length; i++) {
      fps[i] = ctx.local.fingerprint(ctx.partitions[i]);
    }
    return fps;
  }

  Envelope.Builder frame(Fingerprint[] fps) {
    FingerprintSet.Builder b = FingerprintSet.newBuilder();
    for (int p : ctx.partitions) {
      b.addPartitions(p);
    }
    return Envelope.newBuilder().setFingerprints(b.setPacked(Wire.packFingerprints(fps)));
  }

  /** The peer's fingerprints, checked to cover exactly the session's partitions in order. */
  Fingerprint[] read(FingerprintSet f, String what) throws ProtocolException {
    int[] partitions = ctx.partitions;
    if (f.getPartitionsCount() != partitions.length) {
      throw new ProtocolException(
          Code.MALFORMED,
          what
              + " of "
              + f.getPartitionsCount()
              + " partitions, session covers "
              + partitions.length);
    }
    for (int i = 0; i < partitions.length; i++) {
      if (f.getPartitions(i) != partitions[i]) {
        throw new ProtocolException(
            Code.MALFORMED,
            what
                + " "
                + i
                + " is of partition "
                + f.getPartitions(i)
                + ", expected "
                + partitions[i]);
      }
    }
    return Wire.unpackFingerprints(f.getPacked(), partitions.length);
  }

  /**
   * Compares the peer's fingerprints with this side's: equal partitions settle on the fast path,
   * the others are returned as new parts (also registered in the context).
   */
  List<Part> compare(Fingerprint[] remote) {
    List<Part> unequal = new ArrayList<>();
    for (int i = 0; i < ctx.partitions.length; i++) {
      int p = ctx.partitions[i];
      Fingerprint mine = ctx.local.fingerprint(p);
      if (mine.equals(remote[i])) {
        ctx.stats.fastPath++;
        ctx.stats.roundTrips = Math.max(ctx.stats.roundTrips, 2);
        ctx.outcomes.put(
            p,
            new PartitionOutcome(
                p, PartitionOutcome.Path.FAST, new long[0], new long[0], 0, 0, null));
        continue;
      }
      Part part = new Part(p, mine.count(), remote[i].count());
      ctx.parts.put(p, part);
      unequal.add(part);
    }
    return unequal;
  }
}
