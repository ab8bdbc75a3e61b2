package dev.reconcile.agent.store;

import org.rocksdb.RocksDBException;

/**
 * Test-only fault injection: called by {@link ReplicaStore} inside every record write (local writes
 * and repair {@code apply}) just before the RocksDB write batch is committed, under the writer
 * lock. Throwing a {@link RocksDBException} there behaves exactly like RocksDB failing the write
 * (I/O error, full disk): the batch is not written, sketches and counters are unchanged, and the
 * caller gets a {@link StoreException}. {@link #afterScanClose} makes the close of a partition scan
 * fail after it has released its handles. Installed with {@link
 * ReplicaStore#faultInjector(FaultInjector)}; production code never installs one (docs/security.md,
 * "Faults").
 */
@FunctionalInterface
public interface FaultInjector {
  /** No faults (the default). */
  FaultInjector NONE = records -> {};

  /** Called before committing a write batch of {@code records} changed records. */
  void beforeWrite(int records) throws RocksDBException;

  /**
   * Called when a partition scan of {@code partition} has been closed (its handles released), read
   * to its end ({@code finished}) or not; throwing makes the close throw a {@link StoreException}.
   */
  default void afterScanClose(int partition, boolean finished) throws RocksDBException {}
}
