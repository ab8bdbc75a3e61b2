package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.PerfLevel;
import org.rocksdb.RocksDB;

/**
 * RocksDB's performance counters are a per-thread setting, on by default; the store reads none of
 * them and turns them off on each thread that calls it ({@code StoreDb.countersOff}), for writes
 * and reads alike.
 */
class PerfCountersTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 6);

  @TempDir Path dir;
  @TempDir Path probeDir;

  private Options probeOptions;

  /** A second database, whose handle reads the calling thread's level (RocksDB's is per thread). */
  private RocksDB probe;

  private ReplicaStore store;

  @BeforeEach
  void open() throws Exception {
    probeOptions = new Options().setCreateIfMissing(true);
    probe = RocksDB.open(probeOptions, probeDir.toString());
    store =
        ReplicaStore.open(
            Fixtures.options(dir, "node-a", PARAMS, Fixtures.manualMillis(1_000)).build());
  }

  @AfterEach
  void close() {
    store.close();
    probe.close();
    probeOptions.close();
  }

  /** The perf level of {@code call}'s thread before and after it runs, on a new thread. */
  private PerfLevel[] levelsAround(Runnable call) throws Exception {
    PerfLevel[] levels = new PerfLevel[2];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              try {
                levels[0] = probe.getPerfLevel();
                call.run();
                levels[1] = probe.getPerfLevel();
              } catch (Throwable e) {
                failure.set(e);
              }
            });
    t.start();
    t.join();
    assertThat(failure.get()).isNull();
    return levels;
  }

  @Test
  void aThreadThatWritesOrReadsTheStoreCountsNothingFromThenOn() throws Exception {
    PerfLevel[] write = levelsAround(() -> store.put(bytes("k"), bytes("v")));
    AtomicReference<byte[]> value = new AtomicReference<>();
    PerfLevel[] read = levelsAround(() -> value.set(store.get(bytes("k")).orElseThrow().value()));
    PerfLevel[] idle = levelsAround(() -> {});

    // RocksDB's default, which the store turns off; a thread that never calls it keeps it.
    assertThat(write[0]).isEqualTo(PerfLevel.ENABLE_COUNT);
    assertThat(read[0]).isEqualTo(PerfLevel.ENABLE_COUNT);
    assertThat(idle[1]).isEqualTo(PerfLevel.ENABLE_COUNT);
    assertThat(write[1]).isEqualTo(PerfLevel.DISABLE);
    assertThat(read[1]).isEqualTo(PerfLevel.DISABLE);
    assertThat(value.get()).isEqualTo(bytes("v"));
  }

  /** A scan read on a thread other than the one that opened it (rounds move between threads). */
  @Test
  void aThreadThatReadsAScanOpenedElsewhereCountsNothingFromThenOn() throws Exception {
    int records = 0;
    for (int i = 0; i < 64; i++) {
      store.put(bytes("k" + i), bytes("v" + i));
    }
    for (int p = 0; p < store.params().partitions(); p++) {
      try (RecordStore.PartitionScan scan = store.scan(p, null)) {
        AtomicReference<List<ReplicaRecord>> read = new AtomicReference<>();
        PerfLevel[] levels = levelsAround(() -> read.set(scan.next(1_000, 1L << 20)));
        assertThat(levels[0]).isEqualTo(PerfLevel.ENABLE_COUNT);
        assertThat(levels[1]).isEqualTo(PerfLevel.DISABLE);
        records += read.get().size();
      }
    }
    assertThat(records).isEqualTo(64);
  }
}
