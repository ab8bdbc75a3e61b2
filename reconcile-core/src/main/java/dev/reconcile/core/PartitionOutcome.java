package dev.reconcile.core;

/**
 * How one partition was reconciled and what differs, as this side knows it.
 *
 * <p>The elements are listed where this side learned them (it decoded them, or the peer listed
 * them); otherwise only counted: in a repair round the side that decoded a partition asks for what
 * it lacks and says how many records it will send, so the other side knows the number of records it
 * will receive but not their elements; a partition that one side lacks entirely is streamed whole
 * without listing anything.
 *
 * @param missingLocal elements the peer has and this side lacks, where listed
 * @param missingRemote elements this side has and the peer lacks, where listed
 * @param lacksHere how many elements the peer has and this side lacks ({@code missingLocal.length}
 *     when listed)
 * @param lacksThere how many elements this side has and the peer lacks
 * @param partial true when a list was cut at the session's cap: the round repairs part of the
 *     difference and a later round the rest
 * @param estimate the estimated difference (-1 when none was made)
 * @param attempts IBLT attempts (0 on other paths)
 * @param finalShape the table that decoded, or {@code null}
 */
public record PartitionOutcome(
    int partition,
    Path path,
    long[] missingLocal,
    long[] missingRemote,
    long lacksHere,
    long lacksThere,
    boolean partial,
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
    FALLBACK,
    /** The rateless stream decoded. */
    RATELESS,
    /** One side held nothing of the partition: the other streams all of it. */
    BULK
  }

  /** An outcome whose elements are all listed. */
  public PartitionOutcome(
      int partition,
      Path path,
      long[] missingLocal,
      long[] missingRemote,
      long estimate,
      int attempts,
      IbltShape finalShape) {
    this(
        partition,
        path,
        missingLocal,
        missingRemote,
        missingLocal.length,
        missingRemote.length,
        false,
        estimate,
        attempts,
        finalShape);
  }

  static PartitionOutcome fast(int partition) {
    return new PartitionOutcome(
        partition, Path.FAST, new long[0], new long[0], 0, 0, false, 0, 0, null);
  }

  /** Elements that differ, both ways. */
  public long difference() {
    return lacksHere + lacksThere;
  }
}
