package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDBException;

/**
 * With {@code repairWal(false)} (agent key {@code repair-wal=false}), repair batches of {@link
 * StoreOptions#UNLOGGED_REPAIR_MIN_BYTES} or more skip the WAL unless {@code syncWrites} is set,
 * and {@link ReplicaStore#persistRepairs} makes them durable: checked by the WAL files' sizes, the
 * memtables' entries, and a real crash (a child JVM killed with SIGKILL) after which the store is
 * reopened.
 */
class UnloggedRepairTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 6);
  private static final int VALUE_BYTES = 4096;

  @TempDir Path dir;

  /** A store whose large repair batches skip the WAL. */
  private static StoreOptions.Builder options(Path d) {
    return Fixtures.options(d, "node-b", PARAMS, Fixtures.manualMillis(1_000_000)).repairWal(false);
  }

  /** {@code n} records of {@value #VALUE_BYTES} B from another node, keys {@code k0..}. */
  static List<ReplicaRecord> records(int first, int n, long seed) {
    Random r = new Random(seed);
    List<ReplicaRecord> out = new ArrayList<>(n);
    for (int k = first; k < first + n; k++) {
      byte[] value = new byte[VALUE_BYTES];
      r.nextBytes(value);
      out.add(ReplicaRecord.of(bytes("k" + k), value, HybridClock.version(900_000 + k, 0), 7));
    }
    return out;
  }

  /**
   * {@code atomic_flush} as the database in {@code d} was opened with (its latest OPTIONS file).
   */
  private static boolean atomicFlush(Path d) throws RocksDBException {
    return Fixtures.latestDbOptions(d, DBOptions::atomicFlush);
  }

  private static long memtableEntries(ReplicaStore store, String family) {
    return store.rocksProperty(family, "rocksdb.num-entries-active-mem-table");
  }

  /**
   * A repair batch of 100 records of 4 KiB (400 KiB) adds no bytes to the WAL and waits in the
   * memtables until {@code persistRepairs}, which flushes every family once and then has nothing to
   * do; a batch of 10 such records (40 KiB) goes through the WAL as before.
   */
  @Test
  void aLargeRepairBatchSkipsTheWalUntilTheFlushAndASmallOneDoesNot()
      throws IOException, RocksDBException {
    Path d = dir.resolve("b");
    try (ReplicaStore store = ReplicaStore.open(options(d).build())) {
      assertThat(atomicFlush(d)).isTrue();
      long wal0 = Fixtures.walBytes(d);
      assertThat(store.apply(records(0, 10, 1)).applied()).isEqualTo(10);
      long wal1 = Fixtures.walBytes(d);
      assertThat(wal1 - wal0).as("a 40 KiB batch is logged").isGreaterThan(10L * VALUE_BYTES);
      assertThat(store.unloggedRepairBatches()).isZero();

      assertThat(store.apply(records(10, 100, 2)).applied()).isEqualTo(100);
      assertThat(Fixtures.walBytes(d) - wal1)
          .as("a 400 KiB batch is not logged")
          .isLessThan(VALUE_BYTES);
      assertThat(store.unloggedRepairBatches()).isEqualTo(1);
      assertThat(memtableEntries(store, "records")).isEqualTo(110);
      assertThat(memtableEntries(store, "digests")).isEqualTo(110);

      store.persistRepairs();
      assertThat(store.unloggedRepairFlushes()).isEqualTo(1);
      assertThat(memtableEntries(store, "records")).as("flushed").isZero();
      assertThat(memtableEntries(store, "digests")).as("flushed with it").isZero();
      store.persistRepairs();
      assertThat(store.unloggedRepairFlushes()).as("nothing more to flush").isEqualTo(1);
      assertThat(store.recordCount()).isEqualTo(110);
      assertThat(store.selfCheck().ok()).isTrue();
    }
  }

  /**
   * With {@code repairWal(true)} (the default), with {@code syncWrites}, and for a client's bulk
   * put, the WAL stays; and without batches that skipped it the database does not flush atomically.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"repair-wal", "default", "sync-writes", "client-put"})
  void theWalStaysWhenAskedForAndForClients(String why) throws IOException, RocksDBException {
    Path d = dir.resolve(why);
    StoreOptions.Builder b = options(d);
    if (why.equals("repair-wal")) {
      b.repairWal(true);
    } else if (why.equals("default")) {
      b = Fixtures.options(d, "node-b", PARAMS, Fixtures.manualMillis(1_000_000));
    } else if (why.equals("sync-writes")) {
      b.syncWrites(true);
    }
    try (ReplicaStore store = ReplicaStore.open(b.build())) {
      // Only a store that may skip the WAL flushes atomically (the client's put: repairWal false).
      assertThat(atomicFlush(d)).isEqualTo(why.equals("client-put"));
      long wal0 = Fixtures.walBytes(d);
      List<ReplicaRecord> batch = records(0, 100, 3);
      if (why.equals("client-put")) {
        assertThat(store.putAll(batch)).isEqualTo(100);
      } else {
        assertThat(store.apply(batch).applied()).isEqualTo(100);
      }
      assertThat(Fixtures.walBytes(d) - wal0).isGreaterThan(100L * VALUE_BYTES);
      assertThat(store.unloggedRepairBatches()).isZero();
      store.persistRepairs();
      assertThat(store.unloggedRepairFlushes()).isZero();
      assertThat(memtableEntries(store, "records")).as("not flushed").isEqualTo(100);
    }
  }

  /**
   * A child JVM applies a 400 KiB repair batch to a store that already holds 10 logged records,
   * calls {@code persistRepairs} or not, and is killed with SIGKILL; the store reopened here:
   * persisted, every record is there; not persisted, the unlogged batch is gone whole (its records,
   * their digest-index entries and sketches alike: the self-check passes) and the logged records
   * stay; with {@code repair-wal=true} the WAL brings the batch back without a flush.
   */
  @ParameterizedTest(name = "repair-wal={0}, persist={1}")
  @CsvSource({"false, true, 110", "false, false, 10", "true, false, 110"})
  void aCrashKeepsWhatTheFlushOrTheWalMadeDurable(boolean repairWal, boolean persist, long expected)
      throws Exception {
    Path d = dir.resolve("crash");
    Process child =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                CrashChild.class.getName(),
                d.toString(),
                Boolean.toString(repairWal),
                Boolean.toString(persist))
            .redirectErrorStream(true)
            .start();
    List<String> said = new ArrayList<>();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null && !line.equals("READY")) {
        said.add(line);
      }
      assertThat(line).as("the child's output: %s", said).isEqualTo("READY");
      child.destroyForcibly(); // SIGKILL: no close, no flush
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      child.destroyForcibly();
    }
    try (ReplicaStore store = ReplicaStore.open(options(d).build())) {
      assertThat(store.recordCount()).isEqualTo(expected);
      for (ReplicaRecord r : records(0, 10, 1)) {
        assertThat(store.get(r.key()))
            .as("logged record %s", new String(r.key(), StandardCharsets.UTF_8))
            .isPresent();
      }
      assertThat(store.get(bytes("k109")).isPresent()).isEqualTo(expected == 110);
      assertThat(store.selfCheck().ok()).as("%s", store.selfCheck()).isTrue();
    }
  }

  /** The child of {@link #aCrashKeepsWhatTheFlushOrTheWalMadeDurable}. */
  static final class CrashChild {
    private CrashChild() {}

    public static void main(String[] args) throws Exception {
      StoreOptions o = options(Path.of(args[0])).repairWal(Boolean.parseBoolean(args[1])).build();
      ReplicaStore store = ReplicaStore.open(o); // never closed: the parent kills this JVM
      store.apply(records(0, 10, 1));
      store.apply(records(10, 100, 2));
      if (Boolean.parseBoolean(args[2])) {
        store.persistRepairs();
      }
      System.out.println("READY");
      System.out.flush();
      Thread.sleep(60_000);
    }
  }
}
