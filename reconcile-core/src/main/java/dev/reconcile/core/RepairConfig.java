package dev.reconcile.core;

import java.util.function.LongSupplier;

/**
 * How a session streams records after the difference is known.
 *
 * @param window most record batches this side has sent and the peer not yet acknowledged
 * @param batchRecords most records per batch this side sends (and elements it looks up at once)
 * @param batchBytes a batch is closed once its records reach about this many bytes
 * @param bulkBatchRecords most records per batch of records read by a range scan (a bulk partition:
 *     the peer holds none of it; or a list the store filters in place, {@link
 *     RecordStore.PartitionScan#ranged}): at least {@code batchRecords}; such a batch is still
 *     closed at {@code batchBytes}, so the bytes in flight stay within {@code window x batchBytes}
 *     and only the per-batch costs (frames, worker steps, write batches) shrink
 * @param maxBatchRecords most records a received batch may hold
 * @param maxClockSkewMillis a received record whose version lies more than this far ahead of the
 *     local wall clock is refused and counted (it would win every conflict and drag the clocks of
 *     the cluster along); 0 accepts any version
 * @param wallMillis the local wall clock, in milliseconds
 * @param rowBatches offer to send and take range-scanned records as {@code RowBatch} frames (stored
 *     rows, no message per record; used when both sides offer it, docs/wire-format.md "row
 *     batches"); off, this side streams every record as {@code RecordBatch}, as a peer of before
 *     that frame
 */
public record RepairConfig(
    int window,
    int batchRecords,
    long batchBytes,
    int bulkBatchRecords,
    int maxBatchRecords,
    long maxClockSkewMillis,
    LongSupplier wallMillis,
    boolean rowBatches) {
  /**
   * The agent's defaults: 8 batches in flight of up to 1,000 records (16,000 of a bulk partition)
   * or 1 MiB; batches of up to 100,000 records accepted (the most an agent may be configured to
   * send); 1 h clock skew.
   */
  public static final RepairConfig DEFAULT =
      new RepairConfig(
          8, 1000, 1 << 20, 16_000, 100_000, 3_600_000L, System::currentTimeMillis, true);

  /** A config that offers row batches. */
  public RepairConfig(
      int window,
      int batchRecords,
      long batchBytes,
      int bulkBatchRecords,
      int maxBatchRecords,
      long maxClockSkewMillis,
      LongSupplier wallMillis) {
    this(
        window,
        batchRecords,
        batchBytes,
        bulkBatchRecords,
        maxBatchRecords,
        maxClockSkewMillis,
        wallMillis,
        true);
  }

  /** A config whose bulk batches are no larger than the others ({@code batchRecords}). */
  public RepairConfig(
      int window,
      int batchRecords,
      long batchBytes,
      int maxBatchRecords,
      long maxClockSkewMillis,
      LongSupplier wallMillis) {
    this(
        window,
        batchRecords,
        batchBytes,
        batchRecords,
        maxBatchRecords,
        maxClockSkewMillis,
        wallMillis,
        true);
  }

  /** This config, offering row batches or not. */
  public RepairConfig withRowBatches(boolean offer) {
    return new RepairConfig(
        window,
        batchRecords,
        batchBytes,
        bulkBatchRecords,
        maxBatchRecords,
        maxClockSkewMillis,
        wallMillis,
        offer);
  }

  public RepairConfig {
    if (window < 1
        || batchRecords < 1
        || batchBytes < 1
        || bulkBatchRecords < batchRecords
        || maxBatchRecords < bulkBatchRecords) {
      throw new IllegalArgumentException(
          "bad repair config: window "
              + window
              + ", batch records "
              + batchRecords
              + ", batch bytes "
              + batchBytes
              + ", bulk batch records "
              + bulkBatchRecords
              + ", max batch records "
              + maxBatchRecords);
    }
    if (maxClockSkewMillis < 0 || wallMillis == null) {
      throw new IllegalArgumentException("bad repair config: clock skew " + maxClockSkewMillis);
    }
  }
}
