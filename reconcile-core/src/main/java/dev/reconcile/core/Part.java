package dev.reconcile.core;

/** One unequal partition on its way to a settled {@link PartitionOutcome}. */
final class Part {
  enum Phase {
    /** Initiator: waiting for the responder's estimator or digest request. */
    WAIT_OFFER,
    /**
     * Initiator: table or digests sent; waiting for the result, a larger-table or digest request.
     */
    WAIT_RESULT,
    /** Responder: estimator sent, waiting for a table or digests. */
    WAIT_TABLE,
    /** Responder: asked for a larger table. */
    WAIT_LARGER,
    /** Responder: asked for (or receiving) the digest list. */
    COLLECT_DIGESTS,
    /** Initiator: decoding the responder's rateless stream. */
    DECODING,
    /** Responder: streaming symbols until the initiator's request for records (or a fallback). */
    STREAMING,
    SETTLED
  }

  final int partition;
  final long localCount;
  final long remoteCount;
  Phase phase;
  TableGroup group;
  long estimate = -1;
  int attempts;
  IbltShape lastShape;
  boolean fallback;
  boolean partial;
  LongList missingLocal = new LongList(16);
  LongList missingRemote = new LongList(16);

  /** This side's fingerprint as of the instant its latest table of the partition was folded. */
  Fingerprint tableFingerprint;

  /** Responder: the initiator's fingerprint digest as of its latest table's fold, or null. */
  Long peerTableDigest;

  /** How many the peer said it will send when this side lacks an unlisted set; -1: the list. */
  long lacksHere = -1;

  /** How many this side will send when they are not listed (a whole partition); -1: the list. */
  long lacksThere = -1;

  Part(int partition, long localCount, long remoteCount) {
    this.partition = partition;
    this.localCount = localCount;
    this.remoteCount = remoteCount;
  }

  /** The difference of the element counts: a lower bound on the partition's difference. */
  long countBound() {
    return Math.abs(localCount - remoteCount);
  }

  /** One side holds nothing of the partition: in a repair, the other streams all of it. */
  boolean oneSideEmpty() {
    return localCount == 0 || remoteCount == 0;
  }
}
