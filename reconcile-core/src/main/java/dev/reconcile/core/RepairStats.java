package dev.reconcile.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** What one session's repair stream and verification did, from this side. */
public final class RepairStats {
  /** Keys of refused records kept for the report. */
  public static final int SAMPLE_KEYS = 8;

  long batchesSent;
  long recordsSent;
  long recordBytesSent;
  long batchesReceived;
  long recordsReceived;
  long recordBytesReceived;
  long rowBatchesSent;
  long rowBatchesReceived;
  long applied;
  long stale;
  long duplicate;
  long clockSkewRefused;
  long listedNotFound;
  final List<byte[]> clockSkewKeys = new ArrayList<>();
  final List<Integer> stillDiffering = new ArrayList<>();
  boolean verified;
  boolean verifyMismatch;

  public long batchesSent() {
    return batchesSent;
  }

  public long recordsSent() {
    return recordsSent;
  }

  /** Bytes of the record batch frames sent. */
  public long recordBytesSent() {
    return recordBytesSent;
  }

  /**
   * Elements the peer asked for (listed, not a whole partition) that this side's stream found no
   * record of when it read them: replaced by a newer version during the round (this round's own
   * repairs included: both sides send their version of a conflicting key), or never held here (a
   * wrong decode at the peer, or a peer that lies). Nothing is sent for them; a difference that
   * remains shows in the closing check and the next round.
   */
  public long listedNotFound() {
    return listedNotFound;
  }

  public long batchesReceived() {
    return batchesReceived;
  }

  public long recordsReceived() {
    return recordsReceived;
  }

  public long recordBytesReceived() {
    return recordBytesReceived;
  }

  /** Of {@link #batchesSent}, those sent as rows ({@code RowBatch}: records a range scan read). */
  public long rowBatchesSent() {
    return rowBatchesSent;
  }

  /** Of {@link #batchesReceived}, those received as rows. */
  public long rowBatchesReceived() {
    return rowBatchesReceived;
  }

  /** Received records that won and were written. */
  public long applied() {
    return applied;
  }

  /** Received records that lost to the current one. */
  public long stale() {
    return stale;
  }

  /** Received records that were already here. */
  public long duplicate() {
    return duplicate;
  }

  /** Received records refused because their version lies too far in the future. */
  public long clockSkewRefused() {
    return clockSkewRefused;
  }

  /** The keys of the first {@value #SAMPLE_KEYS} records refused for clock skew. */
  public List<byte[]> clockSkewKeys() {
    return Collections.unmodifiableList(clockSkewKeys);
  }

  /** True once the closing fingerprints were compared. */
  public boolean verified() {
    return verified;
  }

  /**
   * True when the closing verification found a difference (the initiator names the partitions in
   * {@link #stillDiffering()}; the responder only knows that there is one).
   */
  public boolean verifyMismatch() {
    return verifyMismatch;
  }

  /**
   * Partitions whose fingerprints still differed after the repair (writes during the round, or
   * records refused), ascending; known to the initiator.
   */
  public List<Integer> stillDiffering() {
    return Collections.unmodifiableList(stillDiffering);
  }

  @Override
  public String toString() {
    return String.format(
        "sent %d records in %d batches (%d B), received %d (%d B): applied %d, stale %d,"
            + " duplicate %d, refused for clock skew %d; still differing %s",
        recordsSent,
        batchesSent,
        recordBytesSent,
        recordsReceived,
        recordBytesReceived,
        applied,
        stale,
        duplicate,
        clockSkewRefused,
        stillDiffering);
  }
}
