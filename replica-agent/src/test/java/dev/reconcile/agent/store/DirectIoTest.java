package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDBException;

/**
 * Direct I/O for RocksDB's flushes and compactions ({@link DirectIo}, {@link
 * StoreOptions#directIo}, off by default): what the store asked RocksDB for is read back from the
 * OPTIONS file RocksDB itself wrote, and records written, flushed and compacted that way read back
 * equal.
 */
final class DirectIoTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 8);
  private static final long NOW = 1_700_000_000_000L;

  @TempDir Path tmp;

  private static List<ReplicaRecord> records(int count, int valueBytes) {
    Random rnd = new Random(48);
    List<ReplicaRecord> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      byte[] value = new byte[valueBytes];
      rnd.nextBytes(value);
      out.add(ReplicaRecord.of(bytes("key-" + i), value, HybridClock.version(NOW - 1_000, i), 7));
    }
    return out;
  }

  private static StoreOptions.Builder options(Path dir) {
    return Fixtures.options(dir, "node", PARAMS, Fixtures.manualMillis(NOW));
  }

  /** {@code use_direct_io_for_flush_and_compaction} as the store's latest OPTIONS file says. */
  private static boolean directIoInOptionsFile(Path dir) throws RocksDBException {
    return Fixtures.latestDbOptions(dir, DBOptions::useDirectIoForFlushAndCompaction);
  }

  private static void assertHolds(ReplicaStore s, List<ReplicaRecord> expected) {
    List<ReplicaRecord> all = new ArrayList<>();
    s.forEachRecord(all::add);
    assertThat(all).hasSize(expected.size());
    for (ReplicaRecord r : expected) {
      ReplicaRecord got = s.get(r.key()).orElseThrow();
      assertThat(got.value())
          .as("value of %s", new String(r.key(), StandardCharsets.UTF_8))
          .isEqualTo(r.value());
      assertThat(got.version()).isEqualTo(r.version());
    }
    assertThat(s.selfCheck().ok()).isTrue();
  }

  @Test
  void theProbeWritesOneDirectBlockAndLeavesNothing() throws Exception {
    // The machines this project runs on (ext4, and tmpfs since Linux 6.6) take O_DIRECT.
    assertThat(DirectIo.unsupportedReason(tmp)).isEmpty();
    assertThat(tmp.resolve(DirectIo.PROBE)).doesNotExist();
    try (var files = Files.list(tmp)) {
      assertThat(files).isEmpty();
    }
  }

  @Test
  void aFolderThatCannotHoldTheProbeIsReportedWithTheError() throws Exception {
    Path notAFolder = Files.writeString(tmp.resolve("plain-file"), "x");
    Optional<String> why = DirectIo.unsupportedReason(notAFolder);
    assertThat(why).isPresent();
    assertThat(why.get()).contains("O_DIRECT").contains(notAFolder.toString());
  }

  @Test
  void withDirectIoFlushesAndCompactionsUseItAndRecordsReadBackEqual() throws Exception {
    Path dir = tmp.resolve("direct");
    List<ReplicaRecord> records = records(3_000, 5_000);
    try (ReplicaStore s = ReplicaStore.open(options(dir).directIo(true).build())) {
      assertThat(s.directIo()).isTrue();
      s.putAll(records);
    }
    assertThat(directIoInOptionsFile(dir)).isTrue();
    // Reopening replays the write-ahead log and flushes the memtables: level-0 files written
    // with O_DIRECT; then every family is compacted with O_DIRECT reads and writes.
    try (ReplicaStore s = ReplicaStore.open(options(dir).directIo(true).build())) {
      assertHolds(s, records);
    }
    assertThat(directIoInOptionsFile(dir)).isTrue();
    Fixtures.compactAll(dir); // with the store's own options: O_DIRECT reads and writes
    try (ReplicaStore s = ReplicaStore.open(options(dir).directIo(true).build())) {
      assertThat(s.directIo()).isTrue();
      assertHolds(s, records);
    }
  }

  @Test
  void byDefaultTheStoreStaysBuffered() throws Exception {
    Path dir = tmp.resolve("buffered");
    try (ReplicaStore s = ReplicaStore.open(options(dir).build())) {
      assertThat(s.directIo()).isFalse();
      s.putAll(records(100, 100));
    }
    assertThat(directIoInOptionsFile(dir)).isFalse();
  }

  @Test
  void aFileSystemWithoutDirectIoFallsBackToBufferedAndKeepsEveryRecord() throws Exception {
    Path dir = tmp.resolve("no-direct");
    StoreHooks refusing =
        new StoreHooks() {
          @Override
          Optional<String> directIoUnsupported(Path d) {
            return Optional.of("a direct (O_DIRECT) write in " + d + " failed: test");
          }
        };
    List<ReplicaRecord> records = records(500, 1_000);
    try (ReplicaStore s = ReplicaStore.open(options(dir).directIo(true).build(), refusing)) {
      assertThat(s.directIo()).isFalse();
      s.putAll(records);
    }
    assertThat(directIoInOptionsFile(dir)).isFalse();
    try (ReplicaStore s = ReplicaStore.open(options(dir).directIo(true).build(), refusing)) {
      assertHolds(s, records);
    }
  }

  @Test
  void aReadOnlyStoreDoesNotAskForDirectIo() throws Exception {
    Path dir = tmp.resolve("read-only");
    List<ReplicaRecord> records = records(50, 100);
    try (ReplicaStore s = ReplicaStore.open(options(dir).directIo(true).build())) {
      s.putAll(records);
    }
    try (ReplicaStore s =
        ReplicaStore.open(options(dir).nodeId(null).readOnly(true).directIo(true).build())) {
      assertThat(s.directIo()).isFalse();
      assertThat(s.recordCount()).isEqualTo(records.size());
      assertThat(s.get(records.get(0).key()).orElseThrow().value())
          .isEqualTo(records.get(0).value());
    }
  }
}
