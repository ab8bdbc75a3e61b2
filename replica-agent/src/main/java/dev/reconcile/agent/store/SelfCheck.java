package dev.reconcile.agent.store;

import java.time.Duration;
import java.util.List;

/**
 * Report of {@link ReplicaStore#selfCheck()}: the maintained sketches against a rebuild from the
 * records, and the digest index against the records.
 *
 * @param ok true when every partition and the index check passed and no record is corrupt
 * @param partitions one entry per partition, in order
 * @param records records scanned
 * @param indexEntries digest index entries scanned
 * @param corruptRecords records that failed validation (format, length, flags, CRC32C)
 * @param problems human-readable findings (capped at 100)
 * @param elapsed wall time of the check
 */
public record SelfCheck(
    boolean ok,
    List<PartitionCheck> partitions,
    long records,
    long indexEntries,
    long corruptRecords,
    List<String> problems,
    Duration elapsed) {

  /**
   * One partition: {@code elements} counted by the rebuild; {@code mismatch} names what differed
   * (null when ok).
   */
  public record PartitionCheck(int partition, boolean ok, long elements, String mismatch) {}

  public long mismatchedPartitions() {
    return partitions.stream().filter(p -> !p.ok()).count();
  }

  @Override
  public String toString() {
    return "SelfCheck{"
        + (ok ? "ok" : "FAILED")
        + ", partitions="
        + partitions.size()
        + " ("
        + mismatchedPartitions()
        + " mismatched), records="
        + records
        + ", indexEntries="
        + indexEntries
        + ", corrupt="
        + corruptRecords
        + ", elapsed="
        + elapsed.toMillis()
        + " ms"
        + (problems.isEmpty() ? "" : ", problems=" + problems)
        + "}";
  }
}
