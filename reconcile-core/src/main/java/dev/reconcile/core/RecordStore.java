package dev.reconcile.core;

import java.util.List;

/**
 * The records behind a side's {@link PartitionSketches}: the port through which a session's repair
 * stream reads what the peer lacks and writes what it sends. Implemented by the agent's RocksDB
 * store and by {@link MemoryReplica}. Calls come from the thread that drives the session and may
 * block.
 */
public interface RecordStore {
  /**
   * The current records of {@code partition} whose element is one of {@code elements}. Elements no
   * longer present (overwritten meanwhile) are skipped; an element shared by several keys yields
   * all of them.
   */
  List<ReplicaRecord> recordsFor(int partition, long[] elements);

  /**
   * Applies repair records atomically through the store's conflict rule (newer version wins): all
   * of the batch or, on failure, none of it. Applying a record twice changes nothing.
   *
   * @throws RuntimeException when the write failed; nothing of the batch was applied
   */
  ApplyOutcome apply(List<ReplicaRecord> records);
}
