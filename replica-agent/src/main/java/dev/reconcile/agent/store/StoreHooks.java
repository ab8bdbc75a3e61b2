package dev.reconcile.agent.store;

import dev.reconcile.core.HashSpec;
import java.nio.file.Path;
import java.util.Optional;
import org.rocksdb.RocksDBException;

/**
 * A store's test seams ({@link ReplicaStore#open(StoreOptions, StoreHooks)}): element derivation, a
 * failure injected just before a batch commits or at a step of an ingest, a migration or a key
 * filter rebuild. {@link #DEFAULT} is the production behaviour; tests override single methods.
 */
class StoreHooks {
  static final StoreHooks DEFAULT = new StoreHooks();

  long element(
      HashSpec spec, long keyHash, long version, long origin, boolean tombstone, long valueHash) {
    return spec.element(keyHash, version, origin, tombstone, valueHash);
  }

  void beforeCommit() throws RocksDBException {}

  /** After the WAL sync that ends a batch applied in several slices under sync-writes. */
  void walSynced() {}

  /** Before each batch of the format-1 migration ({@link StoreFormatMigration}) is written. */
  void beforeMigrationBatch() throws RocksDBException {}

  /**
   * In a {@link PartitionIngest}, with the marker written: before the records file (1), before the
   * digests file (2), before the marker is removed (3).
   */
  void ingestStep(int step) throws RocksDBException {}

  /** Before each batch of keys a key filter rebuild adds ({@link KeyFilterRebuild}), unlocked. */
  void keyFilterRebuildBatch() {}

  /** The period over which a key filter rebuild checks that the store is quiet. */
  long keyFilterQuietMillis() {
    return 1_000;
  }

  /** Why the data folder {@code dir} does not take {@code O_DIRECT}; empty when it does. */
  Optional<String> directIoUnsupported(Path dir) {
    return DirectIo.unsupportedReason(dir);
  }
}
