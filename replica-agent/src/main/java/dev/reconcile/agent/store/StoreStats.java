package dev.reconcile.agent.store;

/**
 * Counters of a store. {@code lastRebuildMillis} and {@code lastRebuildKeysPerSecond} describe the
 * sketch rebuild at open ({@code rebuildThreads} scanners in parallel).
 */
public record StoreStats(
    long recordCount,
    long lastRebuildMillis,
    double lastRebuildKeysPerSecond,
    int rebuildThreads,
    long localWrites,
    long appliedRecords,
    long purgedTombstones) {}
