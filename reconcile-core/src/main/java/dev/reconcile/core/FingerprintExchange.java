package dev.reconcile.core;

import dev.reconcile.core.wire.HelloAck;
import dev.reconcile.core.wire.PartitionDigest;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.ArrayList;
import java.util.List;

/**
 * Partition fingerprints, compact: the initiator's Hello carries an 8-byte digest and the element
 * count of every partition the session covers; the responder answers with the partitions whose
 * digests differ and its counts of those. Equal partitions settle on the fast path at O(1) cost;
 * each unequal one becomes a {@link Part}. The same digests close a repair ({@link Verify}).
 */
final class FingerprintExchange {
  private final SessionContext ctx;

  /**
   * Initiator: the counts its Hello carried. Both sides size the first batch of a rateless stream
   * from the same two counts (these and the responder's in the HelloAck), so the initiator must not
   * read its counts again: a write between Hello and HelloAck would make it expect symbols that
   * never come, and the round would wait until its idle timeout.
   */
  private long[] helloCounts;

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

  /** This side's compact fingerprints, for the Hello (the counts are kept for the HelloAck). */
  PartitionDigest digest() {
    Fingerprint[] fps = own();
    helloCounts = new long[fps.length];
    for (int i = 0; i < fps.length; i++) {
      helloCounts[i] = fps[i].count();
    }
    return Wire.packDigest(ctx.params.spec(), fps);
  }

  /** The per-partition digests of {@code fps}. */
  long[] hashes(Fingerprint[] fps) {
    long[] d = new long[fps.length];
    for (int i = 0; i < fps.length; i++) {
      d[i] = ctx.params.spec().fingerprintDigest(fps[i]);
    }
    return d;
  }

  /**
   * Responder: compares the initiator's digest with this side's fingerprints. Equal partitions
   * settle on the fast path; the others are returned as new parts (also registered).
   */
  List<Part> compare(PartitionDigest remote) throws ProtocolException {
    int n = ctx.partitions.length;
    long[] counts = Wire.digestCounts(remote, n);
    long[] hashes = Wire.digestHashes(remote, n);
    Fingerprint[] mine = own();
    long[] myHashes = hashes(mine);
    List<Part> unequal = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int p = ctx.partitions[i];
      if (myHashes[i] == hashes[i] && mine[i].count() == counts[i]) {
        fastPath(p);
      } else {
        Part part = new Part(p, mine[i].count(), counts[i]);
        ctx.parts.put(p, part);
        unequal.add(part);
      }
    }
    return unequal;
  }

  /** Initiator: the responder's list of unequal partitions and its counts of them. */
  List<Part> unequal(HelloAck a) throws ProtocolException {
    int n = a.getUnequalCount();
    if (n > ctx.partitions.length) {
      throw new ProtocolException(
          Code.MALFORMED,
          "HelloAck lists "
              + n
              + " unequal partitions, the session covers "
              + ctx.partitions.length);
    }
    long[] counts = Wire.unpackVarints(a.getUnequalCounts(), n, "HelloAck counts");
    List<Part> unequal = new ArrayList<>(n);
    int j = 0;
    for (int i = 0; i < ctx.partitions.length; i++) {
      int p = ctx.partitions[i];
      if (j < n && a.getUnequal(j) == p) {
        Part part = new Part(p, helloCounts[i], counts[j]);
        ctx.parts.put(p, part);
        unequal.add(part);
        j++;
      } else {
        fastPath(p);
      }
    }
    if (j != n) {
      throw new ProtocolException(
          Code.MALFORMED,
          "HelloAck lists partition "
              + a.getUnequal(j)
              + ", not one of the session's or not ascending");
    }
    return unequal;
  }

  private void fastPath(int p) {
    ctx.stats.fastPath++;
    ctx.stats.roundTrips = Math.max(ctx.stats.roundTrips, 1);
    ctx.outcomes.put(p, PartitionOutcome.fast(p));
  }
}
