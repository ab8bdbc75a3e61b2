package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Hello;
import dev.reconcile.core.wire.HelloAck;
import dev.reconcile.core.wire.Mode;
import dev.reconcile.core.wire.PartitionDigest;
import dev.reconcile.core.wire.Refusal.Code;
import dev.reconcile.core.wire.SketchParamsProto;
import java.util.Arrays;
import java.util.List;

/**
 * Hello and HelloAck: protocol version, cluster id, every sketch parameter and the mode are checked
 * on both sides, and a mismatch is refused naming both values; the responder learns the partitions
 * the round covers and whether it is a dry run. The Hello carries the initiator's compact
 * fingerprints and the HelloAck the partitions that differ ({@link FingerprintExchange}), so the
 * handshake is also the comparison: an identical replica costs one round trip.
 */
final class Handshake {
  private final SessionContext ctx;

  Handshake(SessionContext ctx) {
    this.ctx = ctx;
  }

  /**
   * Initiator: the Hello, with {@code digest}, this side's compact fingerprints; it offers the
   * rateless mode when {@code rateless}.
   */
  Envelope.Builder hello(PartitionDigest digest, boolean rateless) {
    Hello.Builder h =
        Hello.newBuilder()
            .setMinVersion(Wire.FORMAT_VERSION)
            .setMaxVersion(Wire.FORMAT_VERSION)
            .setClusterId(ctx.config.clusterId())
            .setNodeId(ctx.config.nodeId())
            .setParams(ctx.params.toProto())
            .setDryRun(ctx.dryRun)
            .setDigest(digest)
            .setRowBatches(ctx.config.repair().rowBatches());
    if (rateless) {
      h.setExpectedDifference(ctx.config.expectedDifference());
    }
    if (rateless && ctx.config.pacing().groups()) {
      h.addModes(Mode.MODE_RATELESS_GROUPED);
    }
    if (rateless) {
      h.addModes(Mode.MODE_RATELESS);
    }
    h.addModes(Mode.MODE_ESTIMATOR_IBLT);
    if (ctx.config.partitions() != null) {
      for (int p : ctx.partitions) {
        h.addPartitions(p);
      }
    }
    return Envelope.newBuilder().setHello(h);
  }

  /**
   * Responder: checks a Hello (the answer follows once the fingerprints are compared) and chooses
   * the mode: rateless when both offer it ({@code rateless} says whether this side does).
   */
  void onHello(Hello h, boolean rateless) throws ProtocolException {
    ctx.peerNodeId = Wire.peerText(h.getNodeId());
    checkPeer(h.getNodeId());
    ctx.dryRun = h.getDryRun();
    if (h.getMinVersion() > Wire.FORMAT_VERSION || h.getMaxVersion() < Wire.FORMAT_VERSION) {
      throw new ProtocolException(
          Code.VERSION,
          "peer speaks protocol versions ["
              + h.getMinVersion()
              + ", "
              + h.getMaxVersion()
              + "], this peer speaks ["
              + Wire.FORMAT_VERSION
              + ", "
              + Wire.FORMAT_VERSION
              + "]");
    }
    if (!h.getClusterId().equals(ctx.config.clusterId())) {
      throw new ProtocolException(
          Code.CLUSTER,
          "cluster id mismatch: peer '"
              + (h.getClusterId().isEmpty() ? "" : Wire.peerText(h.getClusterId()))
              + "', local '"
              + ctx.config.clusterId()
              + "'");
    }
    checkParams(h.getParams());
    if (!h.getModesList().contains(Mode.MODE_ESTIMATOR_IBLT)) {
      throw new ProtocolException(
          Code.PARAMS,
          "no common mode: peer offers " + h.getModesList() + ", local MODE_ESTIMATOR_IBLT");
    }
    ctx.rateless = rateless && h.getModesList().contains(Mode.MODE_RATELESS);
    ctx.ratelessGroups =
        ctx.rateless
            && ctx.config.pacing().groups()
            && h.getModesList().contains(Mode.MODE_RATELESS_GROUPED);
    if (!ctx.dryRun && ctx.records == null) {
      throw new ProtocolException(
          Code.PARAMS, "this peer only compares (it has no records to repair): ask for a dry run");
    }
    ctx.rowBatches = h.getRowBatches() && ctx.config.repair().rowBatches();
    if (h.getExpectedDifference() < 0) { // a uint64 past 2^63 - 1
      throw new ProtocolException(
          Code.MALFORMED,
          "expected difference "
              + Long.toUnsignedString(h.getExpectedDifference())
              + " > 2^63 - 1");
    }
    // Only sizes first batches, each at most the prefix: a claim costs no more than counts can.
    ctx.expectedDifference = ctx.rateless ? h.getExpectedDifference() : 0;
    ctx.partitions = requestedPartitions(h);
    if (!h.hasDigest()) {
      throw new ProtocolException(Code.MALFORMED, "Hello without the partition digest");
    }
  }

  /** Responder: the answer, naming the unequal partitions and this side's counts of them. */
  void ack(List<Part> unequal) {
    HelloAck.Builder a =
        HelloAck.newBuilder()
            .setVersion(Wire.FORMAT_VERSION)
            .setNodeId(ctx.config.nodeId())
            .setParams(ctx.params.toProto())
            .setMode(
                ctx.ratelessGroups
                    ? Mode.MODE_RATELESS_GROUPED
                    : ctx.rateless ? Mode.MODE_RATELESS : Mode.MODE_ESTIMATOR_IBLT)
            .setRowBatches(ctx.rowBatches)
            .setExpectedDifference(ctx.expectedDifference);
    long[] counts = new long[unequal.size()];
    for (int i = 0; i < counts.length; i++) {
      a.addUnequal(unequal.get(i).partition);
      counts[i] = unequal.get(i).localCount;
    }
    ctx.queue(Envelope.newBuilder().setHelloAck(a.setUnequalCounts(Wire.packVarints(counts))));
  }

  /** Initiator: checks the responder's answer; {@code offered} says whether it offered rateless. */
  void onHelloAck(HelloAck a, boolean offered) throws ProtocolException {
    ctx.peerNodeId = Wire.peerText(a.getNodeId());
    checkPeer(a.getNodeId());
    if (a.getVersion() != Wire.FORMAT_VERSION) {
      throw new ProtocolException(
          Code.VERSION,
          "peer chose version " + a.getVersion() + ", this peer speaks " + Wire.FORMAT_VERSION);
    }
    checkParams(a.getParams());
    if (a.getMode() == Mode.MODE_RATELESS && offered) {
      ctx.rateless = true;
    } else if (a.getMode() == Mode.MODE_RATELESS_GROUPED
        && offered
        && ctx.config.pacing().groups()) {
      ctx.rateless = true;
      ctx.ratelessGroups = true;
    } else if (a.getMode() != Mode.MODE_ESTIMATOR_IBLT) {
      throw new ProtocolException(
          Code.PARAMS, "peer chose mode " + a.getMode() + ", which this peer did not offer");
    }
    if (a.getRowBatches() && !ctx.config.repair().rowBatches()) {
      throw new ProtocolException(
          Code.PARAMS, "peer chose row batches, which this peer did not offer");
    }
    ctx.rowBatches = a.getRowBatches();
    // The responder's word: a peer that does not know the field sized its first batches without.
    if (a.getExpectedDifference() != 0
        && (!ctx.rateless || a.getExpectedDifference() != ctx.config.expectedDifference())) {
      throw new ProtocolException(
          Code.PARAMS,
          "peer used expected difference "
              + Long.toUnsignedString(a.getExpectedDifference())
              + ", this peer offered "
              + (ctx.rateless ? ctx.config.expectedDifference() : 0));
    }
    ctx.expectedDifference = a.getExpectedDifference();
  }

  private void checkPeer(String nodeId) throws ProtocolException {
    String why = ctx.config.peerCheck().refusal(nodeId);
    if (why != null) {
      throw new ProtocolException(Code.UNAUTHORIZED, why);
    }
  }

  private int[] requestedPartitions(Hello h) throws ProtocolException {
    int n = ctx.params.partitions();
    if (h.getPartitionsCount() == 0) {
      return allPartitions(n);
    }
    if (h.getPartitionsCount() > n) {
      throw new ProtocolException(
          Code.LIMIT, h.getPartitionsCount() + " partitions requested, there are " + n);
    }
    int[] req = new int[h.getPartitionsCount()];
    for (int i = 0; i < req.length; i++) {
      req[i] = h.getPartitions(i);
    }
    try {
      return checkedPartitions(req, n);
    } catch (IllegalArgumentException e) {
      throw new ProtocolException(Code.MALFORMED, e.getMessage());
    }
  }

  static int[] allPartitions(int n) {
    int[] all = new int[n];
    for (int i = 0; i < n; i++) {
      all[i] = i;
    }
    return all;
  }

  /** {@code requested} sorted, each in {@code [0, n)} and listed once. */
  static int[] checkedPartitions(int[] requested, int n) {
    int[] s = requested.clone();
    Arrays.sort(s);
    for (int i = 0; i < s.length; i++) {
      if (s[i] < 0 || s[i] >= n) {
        throw new IllegalArgumentException("partition " + s[i] + " outside [0, " + n + ")");
      }
      if (i > 0 && s[i] == s[i - 1]) {
        throw new IllegalArgumentException("partition " + s[i] + " listed twice");
      }
    }
    return s;
  }

  private void checkParams(SketchParamsProto p) throws ProtocolException {
    HashSpec spec = ctx.params.spec();
    if (p.getHashId() != spec.id()) {
      throw new ProtocolException(
          Code.HASH, "hash id mismatch: peer " + p.getHashId() + ", local " + spec.id());
    }
    if (p.getSeedFingerprint() != spec.seedFingerprint()) {
      throw new ProtocolException(
          Code.SEED,
          "hash seed fingerprint mismatch: peer "
              + HashSpec.hex(p.getSeedFingerprint())
              + ", local "
              + HashSpec.hex(spec.seedFingerprint())
              + " (the peers are configured with different seeds)");
    }
    mismatch("partitions log2", p.getPartitionsLog2(), ctx.params.partitionsLog2());
    mismatch("IBLT hash count", p.getIbltHashCount(), ctx.params.ibltHashCount());
    mismatch("IBLT max log2", p.getIbltMaxLog2(), ctx.params.ibltMaxLog2());
    mismatch("rateless log2", p.getRatelessLog2(), ctx.params.ratelessLog2());
    if (!p.getEstimator().equals(ctx.params.estimator())) {
      throw new ProtocolException(
          Code.PARAMS,
          "estimator parameters mismatch: peer {"
              + oneLine(p.getEstimator())
              + "}, local {"
              + oneLine(ctx.params.estimator())
              + "}");
    }
  }

  private static String oneLine(Object o) {
    return o.toString().trim().replace('\n', ' ');
  }

  private static void mismatch(String what, int peer, int mine) throws ProtocolException {
    if (peer != mine) {
      throw new ProtocolException(
          Code.PARAMS, what + " mismatch: peer " + peer + ", local " + mine);
    }
  }
}
