package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ProtocolException;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RowBatches;
import dev.reconcile.core.SketchParams;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rocksdb.RocksDBException;

/**
 * A bulk partition received as ingested table files ({@link PartitionIngest}) ends exactly as the
 * same records applied batch by batch would leave it: same records, same sketches, a store whose
 * index agrees with its records (self-check, also after a reopen); and every way out (a local write
 * in the range, a row out of order, a failed ingest, a crash between the two ingests) loses nothing
 * and leaves a consistent store.
 */
final class PartitionIngestTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 8);
  private static final long NOW = 1_700_000_000_000L;
  private static final int P = 1;

  @TempDir Path tmp;

  /** {@code count} records of partition {@link #P}, in row order (as a peer's scan sends them). */
  private static List<ReplicaRecord> partitionRecords(long seed, int count, int valueBytes) {
    Random rnd = new Random(seed);
    HashSpec spec = PARAMS.spec();
    List<ReplicaRecord> out = new ArrayList<>();
    for (int i = 0; out.size() < count; i++) {
      byte[] key = bytes("key-" + seed + "-" + i);
      if (HashSpec.partition(spec.keyHash(key), PARAMS.partitionsLog2()) != P) {
        continue;
      }
      long version = HybridClock.version(NOW - 1_000 + rnd.nextInt(900), rnd.nextInt(100));
      if (rnd.nextInt(10) == 0) {
        out.add(ReplicaRecord.tombstone(key, version, 7));
      } else {
        byte[] value = new byte[valueBytes];
        rnd.nextBytes(value);
        out.add(ReplicaRecord.of(key, value, version, 7));
      }
    }
    out.sort((a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
    return out;
  }

  private ReplicaStore open(Path dir, StoreHooks hooks) {
    return ReplicaStore.open(
        Fixtures.options(dir, "receiver", PARAMS, Fixtures.manualMillis(NOW)).build(), hooks);
  }

  private ReplicaStore open(Path dir) {
    return open(dir, StoreHooks.DEFAULT);
  }

  /** A load that writes table files from the first record. */
  private static RecordStore.PartitionLoad ingest(ReplicaStore s, int partition) {
    return s.load(partition, PartitionIngest.CHUNK_RECORDS, 0);
  }

  /**
   * The records in batches of {@code batch}: every other batch as checked rows ({@code addRows}, as
   * a peer's row batches arrive), the others as records, so that both ways and their mixes go
   * through every test that loads with this.
   */
  private static ApplyOutcome loadInBatches(
      RecordStore.PartitionLoad load, List<ReplicaRecord> records, int batch) {
    ApplyOutcome out = ApplyOutcome.EMPTY;
    for (int i = 0; i < records.size(); i += batch) {
      List<ReplicaRecord> part = records.subList(i, Math.min(records.size(), i + batch));
      out = out.plus((i / batch) % 2 == 1 ? load.addRows(rows(part)) : load.add(part));
    }
    return out;
  }

  /** {@code records} as the checked rows of a row batch from a peer. */
  static RowBatches.Rows rows(List<ReplicaRecord> records) {
    RowBatches.Builder b = new RowBatches.Builder(PARAMS.spec(), 64);
    records.forEach(b::add);
    int partition =
        HashSpec.partition(PARAMS.spec().keyHash(records.get(0).key()), PARAMS.partitionsLog2());
    try {
      return RowBatches.read(
          b.build(partition, 0), Integer.MAX_VALUE, PARAMS.spec(), PARAMS.partitionsLog2());
    } catch (ProtocolException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * Rows only, through all that a load does with them: held back under the threshold then spilled
   * into a table file, several chunks, tombstones past the grace period dropped, a row out of order
   * ending the chunk: the same store as the records applied.
   */
  @Test
  void rowsAreLoadedAsTheSameRecordsApplied() {
    List<ReplicaRecord> records = partitionRecords(41, 1_500, 60);
    List<ReplicaRecord> sent = new ArrayList<>();
    int expired = 0;
    for (int i = 0; i < records.size(); i++) {
      ReplicaRecord r = records.get(i);
      if (r.tombstone() && i % 2 == 0) {
        sent.add(
            ReplicaRecord.tombstone(r.key(), HybridClock.version(NOW - 8 * 86_400_000L, 0), 7));
        expired++;
      } else {
        sent.add(r);
      }
    }
    assertThat(expired).isPositive();
    List<ReplicaRecord> withRepeat = new ArrayList<>(sent.subList(0, 1_200));
    withRepeat.add(sent.get(10)); // not after the row before: the rest is applied
    withRepeat.addAll(sent.subList(1_200, sent.size()));
    try (ReplicaStore s = open(tmp.resolve("rows"))) {
      ApplyOutcome outcome = ApplyOutcome.EMPTY;
      long threshold = 200L * (records.get(0).key().length + 60);
      try (RecordStore.PartitionLoad load = s.load(P, 400, threshold)) {
        for (int i = 0; i < withRepeat.size(); i += 90) {
          outcome =
              outcome.plus(
                  load.addRows(rows(withRepeat.subList(i, Math.min(withRepeat.size(), i + 90)))));
        }
        outcome = outcome.plus(load.finish());
      }
      assertThat(outcome.applied()).isEqualTo(sent.size() - expired);
      assertThat(outcome.duplicate()).isEqualTo(expired + 1);
      assertThat(s.stats().ingestedRecords()).isPositive();
      assertSameAsApplied(s, sent);
    }
  }

  /**
   * A repeated row while the rows are held back (position 50, under the threshold of 200 rows), in
   * the table file (300), and as the first row of a new chunk (400, a chunk of 400 rows): the chunk
   * so far is kept, the rest applied, the same store as the records applied. The two phases are
   * separate methods (one profile each for the JIT); each must end the chunk the same way.
   */
  @ParameterizedTest
  @ValueSource(ints = {50, 300, 400})
  void aRowOutOfOrderEndsTheChunkWhetherHeldOrInTheFile(int at) {
    List<ReplicaRecord> records = partitionRecords(43, 700, 40);
    List<ReplicaRecord> sent = new ArrayList<>(records.subList(0, at));
    sent.add(records.get(at / 2)); // not after the row before
    sent.addAll(records.subList(at, records.size()));
    try (ReplicaStore s = open(tmp.resolve("h" + at))) {
      ApplyOutcome outcome = ApplyOutcome.EMPTY;
      long threshold = 200L * (records.get(0).key().length + 40);
      try (RecordStore.PartitionLoad load = s.load(P, 400, threshold)) {
        for (int i = 0; i < sent.size(); i += 70) {
          outcome =
              outcome.plus(load.addRows(rows(sent.subList(i, Math.min(sent.size(), i + 70)))));
        }
        outcome = outcome.plus(load.finish());
      }
      assertThat(outcome.applied()).isEqualTo(records.size());
      assertThat(outcome.duplicate()).isEqualTo(1);
      assertThat(s.stats().ingestedRecords()).isEqualTo(at < 200 ? 0 : at);
      assertSameAsApplied(s, records);
    }
  }

  @Test
  void rowsOfAnotherPartitionAreRefused() {
    List<ReplicaRecord> records = partitionRecords(42, 10, 20);
    try (ReplicaStore s = open(tmp.resolve("rx"));
        RecordStore.PartitionLoad load = ingest(s, P + 1)) {
      assertThatThrownBy(() -> load.addRows(rows(records)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not of the partition being loaded, " + (P + 1));
    }
  }

  /**
   * A range scan hands out the stored rows as they are: read back as a peer reads them, they are
   * the partition's records in key order, in batches closed by the byte cap.
   */
  @Test
  void aScanHandsOutItsStoredRows() throws ProtocolException {
    List<ReplicaRecord> records = partitionRecords(43, 700, 50);
    try (ReplicaStore s = open(tmp.resolve("scan"))) {
      s.putAll(records);
      List<ReplicaRecord> got = new ArrayList<>();
      int batches = 0;
      try (RecordStore.PartitionScan scan = s.scan(P, s.sketches())) {
        while (true) {
          RowBatches.Builder b = new RowBatches.Builder(PARAMS.spec(), 64);
          int n = scan.nextRows(b, 1_000, 4_096);
          if (n == 0) {
            break;
          }
          assertThat(b.count()).isEqualTo(n);
          // closed once past 4 KiB: by the last row at most
          assertThat(b.bytes()).isLessThan(4_096 + 200);
          batches++;
          got.addAll(
              RowBatches.read(b.build(P, batches), 1_000, PARAMS.spec(), PARAMS.partitionsLog2())
                  .records());
        }
      }
      assertThat(batches).isGreaterThan(5);
      List<ReplicaRecord> stored = new ArrayList<>();
      s.forEachRecord(
          r -> {
            if (HashSpec.partition(PARAMS.spec().keyHash(r.key()), PARAMS.partitionsLog2()) == P) {
              stored.add(r);
            }
          });
      assertThat(got).isEqualTo(stored);
      assertThat(got).hasSize(records.size());
    }
  }

  private static List<ReplicaRecord> contents(ReplicaStore s) {
    List<ReplicaRecord> out = new ArrayList<>();
    s.forEachRecord(out::add);
    return out;
  }

  private static List<Fingerprint> fingerprints(ReplicaStore s) {
    List<Fingerprint> out = new ArrayList<>();
    for (int p = 0; p < PARAMS.partitions(); p++) {
      out.add(s.sketches().fingerprint(p));
    }
    return out;
  }

  /** The reference: the same records through apply into an empty store. */
  private void assertSameAsApplied(ReplicaStore s, List<ReplicaRecord> records) {
    try (ReplicaStore ref = open(tmp.resolve("reference-" + System.nanoTime()))) {
      ref.putAll(records);
      assertThat(contents(s)).isEqualTo(contents(ref));
      assertThat(fingerprints(s)).isEqualTo(fingerprints(ref));
      assertThat(s.recordCount()).isEqualTo(ref.recordCount());
    }
    assertThat(s.selfCheck().ok()).as("self-check").isTrue();
  }

  private static long filesIn(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.count();
    }
  }

  @Test
  void aLoadedPartitionEqualsTheSameRecordsApplied() throws IOException {
    List<ReplicaRecord> records = partitionRecords(11, 2_000, 40);
    Path dir = tmp.resolve("a");
    try (ReplicaStore s = open(dir)) {
      // Chunks of 300 records: several ingests of the same partition, each range still free.
      ApplyOutcome taken;
      ApplyOutcome finished;
      try (RecordStore.PartitionLoad load = s.load(P, 300, 0)) {
        taken = loadInBatches(load, records, 170);
        finished = load.finish();
      }
      ApplyOutcome all = taken.plus(finished);
      long tombstones = records.stream().filter(ReplicaRecord::tombstone).count();
      assertThat(all.applied()).isEqualTo(records.size());
      assertThat(all.stale() + all.duplicate()).isZero();
      assertThat(tombstones).isPositive(); // tombstones within the grace period are stored
      assertSameAsApplied(s, records);
      assertThat(s.stats().appliedRecords()).isEqualTo(records.size());
      assertThat(s.stats().ingestedRecords()).isEqualTo(records.size());
      assertThat(filesIn(dir.resolve(IngestMarker.FOLDER))).isZero();
    }
    try (ReplicaStore s = open(dir)) {
      assertThat(s.recoveredIngest()).isEqualTo(-1);
      assertSameAsApplied(s, records);
    }
  }

  /**
   * Keys and values of every size the table files' reused buffers grow through (keys of 1-300
   * bytes, values of 0-70 000 bytes, in no order of size), ingested as the same records applied.
   */
  @Test
  void recordsOfEverySizeAreIngestedAsApplied() {
    long seed = 31;
    Random rnd = new Random(seed);
    HashSpec spec = PARAMS.spec();
    List<ReplicaRecord> records = new ArrayList<>();
    while (records.size() < 150) {
      byte[] key = new byte[1 + rnd.nextInt(300)];
      rnd.nextBytes(key);
      if (HashSpec.partition(spec.keyHash(key), PARAMS.partitionsLog2()) != P) {
        continue;
      }
      byte[] value = new byte[rnd.nextInt(4) == 0 ? rnd.nextInt(70_001) : rnd.nextInt(100)];
      rnd.nextBytes(value);
      records.add(ReplicaRecord.of(key, value, HybridClock.version(NOW - 500, records.size()), 7));
    }
    records.sort((a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
    try (ReplicaStore s = open(tmp.resolve("sizes"))) {
      ApplyOutcome all;
      try (RecordStore.PartitionLoad load = ingest(s, P)) {
        all = loadInBatches(load, records, 40).plus(load.finish());
      }
      assertThat(all.applied()).as("seed %d", seed).isEqualTo(records.size());
      assertThat(s.stats().ingestedRecords()).isEqualTo(records.size());
      assertSameAsApplied(s, records);
    }
  }

  @Test
  void recordsBecomeVisibleWhenTheirChunkIsIngested() {
    List<ReplicaRecord> records = partitionRecords(12, 500, 20);
    try (ReplicaStore s = open(tmp.resolve("v"));
        RecordStore.PartitionLoad load = s.load(P, 400, 0)) {
      ApplyOutcome first = load.add(records.subList(0, 300));
      assertThat(first.total()).isZero();
      assertThat(s.get(records.get(0).key())).isEmpty();
      assertThat(s.sketches().fingerprint(P)).isEqualTo(Fingerprint.EMPTY);
      // The 401st record ends the first chunk of 400: those become visible.
      ApplyOutcome second = load.add(records.subList(300, 500));
      assertThat(second.applied()).isEqualTo(400);
      assertThat(s.get(records.get(399).key())).contains(records.get(399));
      assertThat(s.get(records.get(400).key())).isEmpty();
      assertThat(load.finish().applied()).isEqualTo(100);
      assertSameAsApplied(s, records);
    }
  }

  @Test
  void aLoadClosedBeforeFinishLeavesNothing() throws IOException {
    List<ReplicaRecord> records = partitionRecords(13, 300, 20);
    Path dir = tmp.resolve("c");
    try (ReplicaStore s = open(dir)) {
      try (RecordStore.PartitionLoad load = ingest(s, P)) {
        load.add(records);
      }
      assertThat(s.recordCount()).isZero();
      assertThat(contents(s)).isEmpty();
      assertThat(filesIn(dir.resolve(IngestMarker.FOLDER))).isZero();
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  @Test
  void aLocalWriteInTheRangeSendsTheChunkThroughTheConflictRule() {
    List<ReplicaRecord> records = partitionRecords(14, 400, 20);
    ReplicaRecord mid = records.get(200);
    try (ReplicaStore s = open(tmp.resolve("w"))) {
      ApplyOutcome outcome;
      try (RecordStore.PartitionLoad load = ingest(s, P)) {
        ApplyOutcome taken = load.add(records);
        // A client writes one of the keys while the load is open: a newer version.
        long v = s.put(mid.key(), bytes("local"));
        outcome = taken.plus(load.finish());
        assertThat(s.get(mid.key()).orElseThrow().version()).isEqualTo(v);
      }
      assertThat(outcome.applied()).isEqualTo(records.size() - 1);
      assertThat(outcome.stale()).isEqualTo(1);
      assertThat(s.get(mid.key()).orElseThrow().value()).isEqualTo(bytes("local"));
      for (ReplicaRecord r : records) {
        if (!Arrays.equals(r.key(), mid.key())) {
          assertThat(s.get(r.key())).contains(r);
        }
      }
      assertThat(s.recordCount()).isEqualTo(records.size());
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  /**
   * A read of one key asks the key filter before RocksDB, so the filter must hold a chunk's keys
   * before its files make them visible: read between the two ingests (step 2: the records file is
   * in, the digests file not yet) and after both (step 3, before the end), every record of the
   * chunk is found, from another thread as a client's get would be (with the keys added at the
   * ingest's end, as before stop 51, the reads find nothing and this fails).
   */
  @Test
  void aReadDuringAnIngestFindsTheRecordsItsFilesMadeVisible() throws Exception {
    List<ReplicaRecord> records = partitionRecords(32, 300, 20);
    for (int step : new int[] {2, 3}) {
      ReplicaStore[] store = new ReplicaStore[1];
      List<String> problems = new ArrayList<>();
      int[] reads = new int[1];
      StoreHooks hooks =
          during(
              step,
              () -> {
                Thread reader =
                    new Thread(
                        () -> {
                          for (ReplicaRecord r : records) {
                            reads[0]++;
                            if (!store[0].get(r.key()).equals(Optional.of(r))) {
                              problems.add("step " + step + ": " + ReplicaRecord.hex(r.key(), 32));
                            }
                          }
                        });
                reader.start();
                try {
                  reader.join();
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              });
      try (ReplicaStore s = open(tmp.resolve("read-" + step), hooks)) {
        store[0] = s;
        try (RecordStore.PartitionLoad load = ingest(s, P)) {
          load.add(records);
          assertThat(load.finish().applied()).isEqualTo(records.size());
        }
        assertThat(reads[0]).as("reads during step %d", step).isEqualTo(records.size());
        assertThat(problems).isEmpty();
        assertSameAsApplied(s, records);
      }
    }
  }

  /**
   * Runs {@code action} at ingest step {@code step} (on the loading thread, the range reserved).
   */
  private static StoreHooks during(int step, Runnable action) {
    return new StoreHooks() {
      @Override
      void ingestStep(int st) {
        if (st == step) {
          action.run();
        }
      }
    };
  }

  /**
   * A client's put into another partition, and into the same partition outside the chunk's range,
   * completes while an ingest is between its synced marker and its files: the ingest holds the
   * writer lock only for its check and its end (with the lock held throughout, as before stop 45,
   * the puts wait for the whole ingest and this fails).
   */
  @Test
  void aClientWriteOutsideTheRangeGoesOnDuringAnIngest() throws InterruptedException {
    List<ReplicaRecord> records = partitionRecords(31, 300, 20);
    // A key of the partition that sorts before the chunk's first key: outside its range.
    byte[] below = keyOfPartition(P, "a-");
    assertThat(Arrays.compareUnsigned(below, records.get(0).key())).isNegative();
    byte[] elsewhere = keyOfPartition(P + 1, "elsewhere-");
    ReplicaStore[] store = new ReplicaStore[1];
    boolean[] done = new boolean[2];
    Thread[] client = new Thread[1];
    int[] steps = {1, 2};
    for (int step : steps) {
      StoreHooks hooks =
          during(
              step,
              () -> {
                Thread t =
                    new Thread(
                        () -> {
                          store[0].put(elsewhere, bytes("client-" + step));
                          store[0].put(below, bytes("client-" + step));
                        });
                t.start();
                try {
                  t.join(10_000);
                } catch (InterruptedException e) {
                  throw new AssertionError(e);
                }
                done[step - 1] = !t.isAlive();
                client[0] = t;
              });
      try (ReplicaStore s = open(tmp.resolve("o" + step), hooks)) {
        store[0] = s;
        try (RecordStore.PartitionLoad load = ingest(s, P)) {
          load.add(records);
          assertThat(load.finish().applied()).isEqualTo(records.size());
        }
        client[0].join(); // before stop 45 it ended only after the ingest
        assertThat(done[step - 1])
            .as("the puts of step %d finished during the ingest", step)
            .isTrue();
        assertThat(s.get(elsewhere).orElseThrow().value()).isEqualTo(bytes("client-" + step));
        assertThat(s.get(below).orElseThrow().value()).isEqualTo(bytes("client-" + step));
        for (ReplicaRecord r : records) {
          assertThat(s.get(r.key())).contains(r);
        }
        assertThat(s.recordCount()).isEqualTo(records.size() + 2);
        assertThat(s.selfCheck().ok()).isTrue();
      }
    }
  }

  /**
   * A client's put of a key in the chunk's range, while the ingest is between its files, waits for
   * the ingest to end and then goes through the conflict rule against the ingested record: its
   * newer version wins, nothing of it is lost, and the index agrees with the records; so does a
   * repair batch's newer record of another key in the range ({@code apply}); a self-check started
   * between the two files waits for the end too and finds the store whole.
   */
  @Test
  void aWriteInTheRangeAndASelfCheckWaitForTheIngest() throws Exception {
    List<ReplicaRecord> records = partitionRecords(33, 300, 20);
    ReplicaRecord mid = records.get(150);
    ReplicaRecord newer =
        ReplicaRecord.of(records.get(100).key(), bytes("repaired"), HybridClock.version(NOW, 0), 9);
    ReplicaStore[] store = new ReplicaStore[1];
    Thread[] waiting = new Thread[3];
    long[] version = new long[1];
    boolean[] checked = new boolean[1];
    StoreHooks hooks =
        during(
            2, // the records are in, their index rows not yet
            () -> {
              waiting[0] =
                  Fixtures.startUntilWaiting(
                      new Thread(() -> version[0] = store[0].put(mid.key(), bytes("local"))));
              waiting[1] =
                  Fixtures.startUntilWaiting(
                      new Thread(() -> checked[0] = store[0].selfCheck().ok()));
              waiting[2] =
                  Fixtures.startUntilWaiting(new Thread(() -> store[0].apply(List.of(newer))));
            });
    try (ReplicaStore s = open(tmp.resolve("in"), hooks)) {
      store[0] = s;
      try (RecordStore.PartitionLoad load = ingest(s, P)) {
        load.add(records);
        assertThat(load.finish().applied()).isEqualTo(records.size());
      }
      for (Thread t : waiting) {
        t.join();
      }
      assertThat(checked[0]).as("the self-check that waited").isTrue();
      ReplicaRecord now = s.get(mid.key()).orElseThrow();
      assertThat(now.value()).isEqualTo(bytes("local"));
      assertThat(now.version()).isEqualTo(version[0]).isGreaterThan(mid.version());
      assertThat(s.get(newer.key())).contains(newer);
      for (ReplicaRecord r : records) {
        if (!Arrays.equals(r.key(), mid.key()) && !Arrays.equals(r.key(), newer.key())) {
          assertThat(s.get(r.key())).contains(r);
        }
      }
      assertThat(s.recordCount()).isEqualTo(records.size());
      assertThat(s.selfCheck().ok()).isTrue();
      ReplicaStoreTest.assertIndexAgreesWithRecords(s, "after the ingest");
      ReplicaStoreTest.assertEqualsMemorySketches(s, "after the ingest");
    }
  }

  /** The first key {@code prefix + i} of {@code partition}. */
  private static byte[] keyOfPartition(int partition, String prefix) {
    for (int i = 0; ; i++) {
      byte[] key = bytes(prefix + i);
      if (HashSpec.partition(PARAMS.spec().keyHash(key), PARAMS.partitionsLog2()) == partition) {
        return key;
      }
    }
  }

  @Test
  void aRowOutOfOrderEndsTheChunkAndTheRestIsApplied() {
    List<ReplicaRecord> records = partitionRecords(15, 600, 20);
    List<ReplicaRecord> sent = new ArrayList<>(records.subList(0, 300));
    sent.add(records.get(100)); // a repeat: not after the row before
    sent.addAll(records.subList(300, 600));
    try (ReplicaStore s = open(tmp.resolve("o"))) {
      ApplyOutcome outcome;
      try (RecordStore.PartitionLoad load = ingest(s, P)) {
        ApplyOutcome taken = loadInBatches(load, sent, 250);
        assertThat(s.get(records.get(0).key())).contains(records.get(0)); // chunk ingested
        outcome = taken.plus(load.finish());
      }
      assertThat(outcome.applied()).isEqualTo(600);
      assertThat(outcome.duplicate()).isEqualTo(1);
      assertSameAsApplied(s, records);
    }
  }

  @Test
  void tombstonesPastTheGracePeriodAreNotStored() {
    List<ReplicaRecord> records = new ArrayList<>(partitionRecords(16, 200, 20));
    List<ReplicaRecord> sent = new ArrayList<>();
    int expired = 0;
    for (ReplicaRecord r : records) {
      if (r.tombstone()) {
        // 8 days old: past the default grace of 7 days.
        sent.add(
            ReplicaRecord.tombstone(r.key(), HybridClock.version(NOW - 8 * 86_400_000L, 0), 7));
        expired++;
      } else {
        sent.add(r);
      }
    }
    assertThat(expired).isPositive();
    try (ReplicaStore s = open(tmp.resolve("g"))) {
      ApplyOutcome outcome;
      try (RecordStore.PartitionLoad load = ingest(s, P)) {
        outcome = load.add(sent).plus(load.finish());
      }
      assertThat(outcome.duplicate()).isEqualTo(expired);
      assertThat(outcome.applied()).isEqualTo(sent.size() - expired);
      assertSameAsApplied(s, sent);
      assertThat(s.recordCount()).isEqualTo(sent.size() - expired);
    }
  }

  @Test
  void aRecordOfAnotherPartitionIsRefused() {
    List<ReplicaRecord> records = partitionRecords(17, 10, 20);
    try (ReplicaStore s = open(tmp.resolve("x"));
        RecordStore.PartitionLoad load = ingest(s, P + 1)) {
      assertThatThrownBy(() -> load.add(records))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not of the partition being loaded, " + (P + 1));
    }
  }

  /** Fails (an I/O error) or crashes (an Error nothing catches) at one ingest step. */
  private static StoreHooks at(int step, boolean crash) {
    return new StoreHooks() {
      @Override
      void ingestStep(int s) throws RocksDBException {
        if (s == step) {
          if (crash) {
            throw new SimulatedCrash();
          }
          throw new RocksDBException("injected: IO error: No space left on device");
        }
      }
    };
  }

  private static final class SimulatedCrash extends Error {
    private static final long serialVersionUID = 1L;

    SimulatedCrash() {
      super("simulated crash");
    }
  }

  @Test
  void aFailedIngestIsUndoneAtOnceAndTheStoreStaysWritable() {
    for (int step = 1; step <= 3; step++) {
      List<ReplicaRecord> earlier = partitionRecords(18, 100, 20);
      List<ReplicaRecord> records = partitionRecords(19, 300, 20);
      Path dir = tmp.resolve("f" + step);
      try (ReplicaStore s = open(dir, at(step, false))) {
        s.putAll(earlier.subList(0, 10)); // rows of the partition outside the chunk's range
        List<ReplicaRecord> before = contents(s);
        List<Fingerprint> fps = fingerprints(s);
        try (RecordStore.PartitionLoad load = ingest(s, P)) {
          load.add(records);
          assertThatThrownBy(load::finish)
              .as("step %d", step)
              .isInstanceOf(StoreException.class)
              .hasMessageContaining("No space left on device");
        }
        assertThat(contents(s)).as("step %d", step).isEqualTo(before);
        assertThat(fingerprints(s)).isEqualTo(fps);
        assertThat(s.selfCheck().ok()).isTrue();
        s.put(bytes("after"), bytes("v")); // still writable
      }
      try (ReplicaStore s = open(dir)) {
        assertThat(s.recoveredIngest()).isEqualTo(-1);
        assertThat(s.selfCheck().ok()).isTrue();
      }
    }
  }

  @Test
  void aCrashBetweenTheIngestsIsUndoneAtTheNextOpen() throws IOException {
    for (int step = 1; step <= 3; step++) {
      List<ReplicaRecord> records = partitionRecords(20, 300, 20);
      List<ReplicaRecord> other = partitionRecords(21, 20, 20);
      Path dir = tmp.resolve("k" + step);
      List<ReplicaRecord> before;
      try (ReplicaStore s = open(dir, at(step, true))) {
        s.putAll(other);
        before = contents(s);
        RecordStore.PartitionLoad load = ingest(s, P);
        load.add(records);
        assertThatThrownBy(load::finish).isInstanceOf(SimulatedCrash.class);
        load.close();
      }
      try (ReplicaStore s = open(dir)) {
        assertThat(s.recoveredIngest()).as("step %d", step).isEqualTo(P);
        assertThat(contents(s)).isEqualTo(before);
        assertThat(s.selfCheck().ok()).isTrue();
        assertThat(filesIn(dir.resolve(IngestMarker.FOLDER))).isZero();
      }
      try (ReplicaStore s = open(dir)) {
        assertThat(s.recoveredIngest()).isEqualTo(-1);
      }
    }
  }

  @Test
  void aReadOnlyOpenRefusesAStoreWithAnInterruptedIngest() {
    List<ReplicaRecord> records = partitionRecords(22, 50, 20);
    Path dir = tmp.resolve("r");
    try (ReplicaStore s = open(dir, at(2, true))) {
      RecordStore.PartitionLoad load = ingest(s, P);
      load.add(records);
      assertThatThrownBy(load::finish).isInstanceOf(SimulatedCrash.class);
      load.close();
    }
    AtomicLong ms = Fixtures.manualMillis(NOW);
    assertThatThrownBy(
            () -> ReplicaStore.open(Fixtures.options(dir, null, PARAMS, ms).readOnly(true).build()))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("open it writable once to undo it");
  }

  @Test
  void twoLoadsOfOnePartitionEndAsOne() {
    List<ReplicaRecord> records = partitionRecords(23, 400, 20);
    try (ReplicaStore s = open(tmp.resolve("t"))) {
      ApplyOutcome a;
      ApplyOutcome b;
      try (RecordStore.PartitionLoad first = ingest(s, P);
          RecordStore.PartitionLoad second = ingest(s, P)) {
        a = first.add(records);
        b = second.add(records);
        a = a.plus(first.finish());
        b = b.plus(second.finish()); // its range holds the first's records now: applied
      }
      assertThat(a.applied()).isEqualTo(records.size());
      assertThat(b.applied()).isZero();
      assertThat(b.duplicate()).isEqualTo(records.size());
      assertSameAsApplied(s, records);
    }
  }

  @Test
  void aLoadBelowTheThresholdIsHeldBackAndAppliedAtFinish() throws IOException {
    List<ReplicaRecord> records = partitionRecords(24, 300, 40);
    Path dir = tmp.resolve("s");
    try (ReplicaStore s = open(dir)) {
      ApplyOutcome outcome;
      try (RecordStore.PartitionLoad load = s.load(P)) { // the default threshold, 1 MiB
        ApplyOutcome taken = loadInBatches(load, records, 70);
        assertThat(taken.total()).isZero();
        assertThat(s.recordCount()).isZero();
        assertThat(filesIn(dir.resolve(IngestMarker.FOLDER))).isZero();
        outcome = taken.plus(load.finish());
      }
      assertThat(outcome.applied()).isEqualTo(records.size());
      assertThat(s.stats().ingestedRecords()).isZero();
      assertSameAsApplied(s, records);
    }
  }

  @Test
  void reachingTheThresholdStartsATableFileWithTheRecordsHeldBack() throws IOException {
    List<ReplicaRecord> records = partitionRecords(25, 400, 40);
    long bytes = 0;
    int below = 0; // records whose bytes stay under the threshold
    long threshold = 100L * (records.get(0).key().length + 40);
    for (ReplicaRecord r : records) {
      bytes += r.key().length + r.value().length;
      if (bytes >= threshold) {
        break;
      }
      below++;
    }
    assertTheFileStartsAt(
        tmp.resolve("h"), records, below, s -> s.load(P, PartitionIngest.CHUNK_RECORDS, threshold));
  }

  @Test
  void reachingTheRecordThresholdStartsATableFileWhateverTheBytes() throws IOException {
    assertTheFileStartsAt(
        tmp.resolve("r"),
        partitionRecords(27, 300, 8),
        99,
        s -> s.load(P, PartitionIngest.CHUNK_RECORDS, Long.MAX_VALUE, 100));
  }

  /**
   * Loads {@code records} with the load {@code loadOf} gives: the first {@code below} are held back
   * (no table file, nothing visible), the next starts the file, and at {@code finish} all are
   * ingested, as {@code apply} would have stored them.
   */
  private void assertTheFileStartsAt(
      Path dir,
      List<ReplicaRecord> records,
      int below,
      Function<ReplicaStore, RecordStore.PartitionLoad> loadOf)
      throws IOException {
    try (ReplicaStore s = open(dir)) {
      ApplyOutcome outcome;
      try (RecordStore.PartitionLoad load = loadOf.apply(s)) {
        outcome = load.add(records.subList(0, below));
        assertThat(filesIn(dir.resolve(IngestMarker.FOLDER))).isZero();
        outcome = outcome.plus(load.add(records.subList(below, records.size())));
        assertThat(filesIn(dir.resolve(IngestMarker.FOLDER))).isEqualTo(1);
        assertThat(s.recordCount()).isZero();
        outcome = outcome.plus(load.finish());
      }
      assertThat(outcome.applied()).isEqualTo(records.size());
      assertThat(filesIn(dir.resolve(IngestMarker.FOLDER))).isZero();
      assertThat(s.stats().ingestedRecords()).isEqualTo(records.size());
      assertSameAsApplied(s, records);
    }
  }

  @Test
  void theDefaultLoadIngestsAPartitionOfManySmallRecords() {
    // Far below 1 MiB of keys and values, but past the record threshold.
    List<ReplicaRecord> records = partitionRecords(28, PartitionIngest.MIN_INGEST_RECORDS + 10, 8);
    assertThat(records.stream().mapToLong(r -> r.key().length + 8L).sum())
        .isLessThan(PartitionIngest.MIN_INGEST_BYTES / 4);
    try (ReplicaStore s = open(tmp.resolve("d"))) {
      ApplyOutcome outcome;
      try (RecordStore.PartitionLoad load = s.load(P)) {
        outcome = loadInBatches(load, records, 1000).plus(load.finish());
      }
      assertThat(outcome.applied()).isEqualTo(records.size());
      assertThat(s.stats().ingestedRecords()).isEqualTo(records.size());
      assertSameAsApplied(s, records);
    }
  }
}
