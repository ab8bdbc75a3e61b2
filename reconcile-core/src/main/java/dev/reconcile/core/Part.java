package dev.reconcile.core;

/** One unequal partition on its way to a settled {@link PartitionOutcome}. */
final class Part {
  enum Phase {
    /** Initiator: waiting for the responder's estimator or digest request. */
    WAIT_OFFER,
    /**
     * Initiator: table or digests sent; waiting for results, a request for a larger table or
     * digests.
     */
    WAIT_RESULT,
    /** Responder: estimator sent, waiting for a table or digests. */
    WAIT_TABLE,
    /** Responder: asked for a larger table. */
    WAIT_LARGER,
    /** Responder: asked for (or receiving) the digest list. */
    COLLECT_DIGESTS,
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
  LongList missingLocal = new LongList(16);
  LongList missingRemote = new LongList(16);

  Part(int partition, long localCount, long remoteCount) {
    this.partition = partition;
    this.localCount = localCount;
    this.remoteCount = remoteCount;
  }

  /** The difference of the element counts: a lower bound on the partition's difference. */
  long countBound() {
    return Math.abs(localCount - remoteCount);
  }
}
