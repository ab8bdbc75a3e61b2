package dev.reconcile.agent.store;

/**
 * Counters of a store. {@code lastRebuildMillis} and {@code lastRebuildKeysPerSecond} describe the
 * sketch rebuild at open in wall time ({@code rebuildThreads} scanners in parallel); the CPU
 * figures sum the scanner threads' CPU time (the per-core rate, meaningful on a shared machine).
 * {@code ingestedRecords} counts the applied records that came as ingested table files (a part of
 * {@code appliedRecords}, {@link PartitionIngest}). {@code keyFilterBytes} is the memory of the
 * store's {@link KeyFilter} (0 when read-only); {@code keyFilterSkippedReads} counts the reads of a
 * current record it spared (keys the store surely lacked), {@code keyFilterFalsePositives} the
 * reads it let through that found no record (false positives, and keys purged since the filter was
 * built); {@code keyFilterSegments} is how many segments a query of the filter reads (1 after an
 * open or a rebuild), {@code keyFilterRebuilds} how many times it was rebuilt into one segment
 * since the open ({@link KeyFilterRebuild}); {@code keyFilterDeniedReads} counts a client's reads
 * of one key ({@code get}, {@code surelyLacks}) it answered "absent" without RocksDB.
 */
public record StoreStats(
    long recordCount,
    long lastRebuildMillis,
    double lastRebuildKeysPerSecond,
    long lastRebuildCpuMillis,
    double lastRebuildKeysPerCpuSecond,
    int rebuildThreads,
    long localWrites,
    long appliedRecords,
    long purgedTombstones,
    long ingestedRecords,
    long keyFilterBytes,
    long keyFilterSkippedReads,
    long keyFilterFalsePositives,
    int keyFilterSegments,
    long keyFilterRebuilds,
    long keyFilterDeniedReads) {}
