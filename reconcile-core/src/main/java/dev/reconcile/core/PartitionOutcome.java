package dev.reconcile.core;

/**
 * How one partition was reconciled and what differs.
 *
 * @param missingLocal elements the peer has and this side lacks
 * @param missingRemote elements this side has and the peer lacks
 * @param estimate the estimated difference (-1 when none was made)
 * @param attempts IBLT attempts (0 on the fast path or a direct fallback)
 * @param finalShape the table that decoded, or {@code null}
 */
public record PartitionOutcome(
    int partition,
    Path path,
    long[] missingLocal,
    long[] missingRemote,
    long estimate,
    int attempts,
    IbltShape finalShape) {
  /** Which way the partition was settled. */
  public enum Path {
    /** Fingerprints equal. */
    FAST,
    /** An IBLT decoded (possibly after doublings). */
    IBLT,
    /** Sorted digest list exchange. */
    FALLBACK
  }

  public long difference() {
    return (long) missingLocal.length + missingRemote.length;
  }
}
