package dev.reconcile.agent.store;

import dev.reconcile.core.ElementCursor;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.ExactEstimator;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Stream;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ConfigOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.OptionsUtil;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/** Shared set-up of the store tests (public: the agent's store-format tests use it too). */
public final class Fixtures {
  static final long SEED = 0x5eed_0001L;
  static final EstimatorFactory ESTIMATORS = ExactEstimator.factory(1.0);

  private Fixtures() {}

  static SketchParams params(int partitionsLog2, int maxLog2) {
    return new SketchParams(HashSpec.xxh3(SEED), partitionsLog2, 3, maxLog2, ESTIMATORS.params());
  }

  /**
   * Compacts every column family of the closed store at {@code dir} into its last level, opened
   * with the options the store itself wrote (its OPTIONS file): the compactions a running store's
   * background threads would do.
   */
  static void compactAll(Path dir) throws RocksDBException {
    List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (ConfigOptions config = new ConfigOptions();
        DBOptions o = new DBOptions()) {
      OptionsUtil.loadLatestOptions(config, dir.toString(), o, descriptors);
      try (RocksDB db = RocksDB.open(o, dir.toString(), descriptors, handles)) {
        try {
          for (ColumnFamilyHandle h : handles) {
            db.compactRange(h);
          }
        } finally {
          handles.forEach(ColumnFamilyHandle::close);
        }
      } finally {
        descriptors.forEach(d -> d.getOptions().close());
      }
    }
  }

  /**
   * {@code n} records of {@code partition} under {@code params}, keys {@code prefix} followed by a
   * number, in row order (one chunk of a partition load).
   */
  static List<ReplicaRecord> partitionRecords(
      SketchParams params, String prefix, int partition, int n, long version) {
    HashSpec spec = params.spec();
    List<ReplicaRecord> out = new ArrayList<>();
    for (int i = 0; out.size() < n; i++) {
      byte[] key = bytes(prefix + i);
      if (HashSpec.partition(spec.keyHash(key), params.partitionsLog2()) == partition) {
        out.add(ReplicaRecord.of(key, bytes("v-" + prefix + i), version, 7));
      }
    }
    out.sort((a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
    return out;
  }

  /** A manual millisecond source starting at {@code start}. */
  static AtomicLong manualMillis(long start) {
    return new AtomicLong(start);
  }

  static StoreOptions.Builder options(
      Path dir, String node, SketchParams params, AtomicLong millis) {
    return StoreOptions.builder(dir, params, ESTIMATORS)
        .nodeId(node)
        .clock(new HybridClock(millis::get))
        .rebuildThreads(2);
  }

  /** The column families of the RocksDB database in {@code dir}, by name. */
  public static List<String> columnFamilies(Path dir) throws RocksDBException {
    List<String> out = new ArrayList<>();
    try (Options o = new Options()) {
      for (byte[] n : RocksDB.listColumnFamilies(o, dir.toString())) {
        out.add(new String(n, StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  /**
   * Starts {@code thread} and returns it once it waits (parked on a lock or monitor); fails if it
   * does not within 10 s.
   */
  static Thread startUntilWaiting(Thread thread) {
    thread.start();
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (thread.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    if (thread.getState() != Thread.State.WAITING) {
      throw new AssertionError(thread.getName() + " did not wait: " + thread.getState());
    }
    return thread;
  }

  /** {@code read} of the database options in {@code dir}'s latest OPTIONS file. */
  static <T> T latestDbOptions(Path dir, Function<DBOptions, T> read) throws RocksDBException {
    List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    try (ConfigOptions config = new ConfigOptions();
        DBOptions o = new DBOptions()) {
      OptionsUtil.loadLatestOptions(config, dir.toString(), o, descriptors);
      descriptors.forEach(d -> d.getOptions().close());
      return read.apply(o);
    }
  }

  /** The bytes of the WAL files ({@code *.log}) in {@code dir}. */
  static long walBytes(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      long sum = 0;
      for (Path f : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".log"))::iterator) {
        sum += Files.size(f);
      }
      return sum;
    }
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static long[] drain(ElementCursor c) {
    List<Long> out = new ArrayList<>();
    try (c) {
      while (c.next()) {
        out.add(c.element());
      }
    }
    long[] a = new long[out.size()];
    for (int i = 0; i < a.length; i++) {
      a[i] = out.get(i);
    }
    return a;
  }
}
