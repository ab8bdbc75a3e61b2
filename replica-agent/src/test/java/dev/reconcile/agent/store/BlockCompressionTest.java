package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.HashSpec;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.TableProperties;

/**
 * The table files a partition load writes and ingests ({@link PartitionIngest}) are LZ4-compressed
 * ({@link PartitionIngest#COMPRESSION}); what RocksDB flushes keeps the column families' default,
 * Snappy (docs/decisions.md, "block compression of loads"). Read from the files' own properties in
 * a plain read-only open, not from the options the store asked for.
 */
final class BlockCompressionTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 8);
  private static final long NOW = 1_700_000_000_000L;

  @TempDir Path tmp;

  private static List<ReplicaRecord> records(int partition, int count) {
    Random rnd = new Random(41);
    List<ReplicaRecord> out = new ArrayList<>();
    for (int i = 0; out.size() < count; i++) {
      byte[] key = bytes("key-" + i);
      if (partition >= 0
          && HashSpec.partition(PARAMS.spec().keyHash(key), PARAMS.partitionsLog2()) != partition) {
        continue;
      }
      byte[] value = new byte[100];
      rnd.nextBytes(value);
      out.add(ReplicaRecord.of(key, value, HybridClock.version(NOW - 1_000, i % 100), 7));
    }
    out.sort((a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
    return out;
  }

  private ReplicaStore open(Path dir) {
    return ReplicaStore.open(
        Fixtures.options(dir, "node", PARAMS, Fixtures.manualMillis(NOW)).build());
  }

  /** The compression named in each table file's properties, per column family name. */
  private static Map<String, List<String>> compressionOfFiles(Path dir) throws RocksDBException {
    Map<String, List<String>> out = new HashMap<>();
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    try (Options listing = new Options()) {
      for (byte[] name : RocksDB.listColumnFamilies(listing, dir.toString())) {
        descriptors.add(new ColumnFamilyDescriptor(name));
      }
    }
    try (DBOptions o = new DBOptions();
        RocksDB db = RocksDB.openReadOnly(o, dir.toString(), descriptors, handles)) {
      try {
        for (int i = 0; i < handles.size(); i++) {
          List<String> names = new ArrayList<>();
          for (TableProperties p : db.getPropertiesOfAllTables(handles.get(i)).values()) {
            names.add(p.getCompressionName());
          }
          out.put(new String(descriptors.get(i).getName(), StandardCharsets.US_ASCII), names);
        }
      } finally {
        handles.forEach(ColumnFamilyHandle::close); // before the database, as the store does
      }
    }
    return out;
  }

  private static void assertAllCompressedWith(Map<String, List<String>> files, String name) {
    for (String family : List.of("records_by_partition", "digests")) {
      assertThat(files.get(family)).as(family + "'s table files").isNotEmpty();
      assertThat(files.get(family)).as(family + "'s table files").containsOnly(name);
    }
  }

  @Test
  void flushedTableFilesKeepTheDefaultSnappy() throws RocksDBException {
    Path dir = tmp.resolve("applied");
    try (ReplicaStore s = open(dir)) {
      s.putAll(records(-1, 3_000));
    }
    // Reopening replays the write-ahead log and flushes the memtables into table files.
    try (ReplicaStore s = open(dir)) {
      assertThat(s.recordCount()).isEqualTo(3_000);
    }
    assertAllCompressedWith(compressionOfFiles(dir), "Snappy");
  }

  @Test
  void ingestedTableFilesAreLz4() throws RocksDBException {
    Path dir = tmp.resolve("loaded");
    List<ReplicaRecord> records = records(1, 2_000);
    try (ReplicaStore s = open(dir)) {
      try (RecordStore.PartitionLoad load = s.load(1, PartitionIngest.CHUNK_RECORDS, 0)) {
        load.add(records);
        load.finish();
      }
      assertThat(s.stats().ingestedRecords()).isEqualTo(records.size());
    }
    assertAllCompressedWith(compressionOfFiles(dir), "LZ4");
  }
}
