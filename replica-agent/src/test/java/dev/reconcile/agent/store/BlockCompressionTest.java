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
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * Block compression as the table files themselves record it (their properties, read in a plain
 * RocksDB open, not from the options the store asked for): what a flush writes to level 0 is not
 * compressed, what compactions write below it is LZ4 ({@link StoreDb#COMPRESSION_PER_LEVEL}), and a
 * partition load's files are LZ4 wherever they land ({@link PartitionIngest#COMPRESSION});
 * docs/decisions.md, "block compression by level".
 */
final class BlockCompressionTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 8);
  private static final long NOW = 1_700_000_000_000L;
  private static final List<String> FAMILIES = List.of("records_by_partition", "digests");

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

  /** One table file: its column family, its level and the compression its properties name. */
  private record TableFile(String family, int level, String compression) {}

  /** Every live table file of the store at {@code dir}. */
  private static List<TableFile> tableFiles(Path dir) throws RocksDBException {
    List<TableFile> out = new ArrayList<>();
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
        Map<String, String> compressionByFile = new HashMap<>();
        for (ColumnFamilyHandle h : handles) {
          db.getPropertiesOfAllTables(h)
              .forEach(
                  (path, p) ->
                      compressionByFile.put(
                          Path.of(path).getFileName().toString(), p.getCompressionName()));
        }
        for (LiveFileMetaData f : db.getLiveFilesMetaData()) {
          String file = Path.of(f.fileName()).getFileName().toString();
          out.add(
              new TableFile(
                  new String(f.columnFamilyName(), StandardCharsets.US_ASCII),
                  f.level(),
                  compressionByFile.get(file)));
        }
      } finally {
        handles.forEach(ColumnFamilyHandle::close); // before the database, as the store does
      }
    }
    return out;
  }

  /** The records' and the digest index's files, each family holding some. */
  private static List<TableFile> dataFiles(Path dir) throws RocksDBException {
    List<TableFile> files = tableFiles(dir);
    for (String family : FAMILIES) {
      assertThat(files).as(family + "'s table files").anyMatch(f -> f.family().equals(family));
    }
    return files.stream().filter(f -> FAMILIES.contains(f.family())).toList();
  }

  @Test
  void flushedFilesAreNotCompressedAndCompactedFilesAreLz4() throws RocksDBException {
    Path dir = tmp.resolve("applied");
    try (ReplicaStore s = open(dir)) {
      s.putAll(records(-1, 3_000));
    }
    // Reopening replays the write-ahead log and flushes the memtables into level-0 files.
    try (ReplicaStore s = open(dir)) {
      assertThat(s.recordCount()).isEqualTo(3_000);
    }
    List<TableFile> flushed = dataFiles(dir);
    assertThat(flushed).allMatch(f -> f.level() == 0, "at level 0");
    assertThat(flushed).extracting(TableFile::compression).containsOnly("NoCompression");

    Fixtures.compactAll(dir);
    List<TableFile> compacted = dataFiles(dir);
    assertThat(compacted).allMatch(f -> f.level() > 0, "below level 0");
    assertThat(compacted).extracting(TableFile::compression).containsOnly("LZ4");
    try (ReplicaStore s = open(dir)) {
      assertThat(s.recordCount()).isEqualTo(3_000);
      List<ReplicaRecord> all = new ArrayList<>();
      s.forEachRecord(all::add);
      assertThat(all).hasSize(3_000);
    }
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
    List<TableFile> loaded = dataFiles(dir);
    assertThat(loaded).extracting(TableFile::compression).containsOnly("LZ4");
    Fixtures.compactAll(dir);
    assertThat(dataFiles(dir)).extracting(TableFile::compression).containsOnly("LZ4");
  }
}
