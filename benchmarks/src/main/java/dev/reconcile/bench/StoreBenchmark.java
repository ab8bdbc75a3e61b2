package dev.reconcile.bench;

import dev.reconcile.agent.store.HybridClock;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.agent.store.StoreOptions;
import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.CellLayout;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteOptions;

/**
 * Replica store costs: local write throughput with and without sketch maintenance (and plain
 * RocksDB puts as the floor), a client's point reads, repair {@code apply} throughput of 100-byte
 * records, and the sketch rebuild at open from a prepared store.
 *
 * <pre>
 *   ./mvnw -B -ntp -o -pl benchmarks -am package -DskipTests
 *   java -jar benchmarks/target/benchmarks.jar StoreBenchmark -f 1 -wi 2 -i 5 -w 2s -r 2s
 * </pre>
 */
public class StoreBenchmark {
  static final int VALUE_BYTES = 100;

  public static SketchParams params(int partitionsLog2, int maxLog2) {
    return new SketchParams(
        HashSpec.xxh3(0x5eedL),
        partitionsLog2,
        3,
        maxLog2,
        dev.reconcile.estimator.StrataEstimatorFactory.defaults().params());
  }

  public static StoreOptions.Builder options(Path dir, SketchParams params) {
    return StoreOptions.builder(
            dir, params, dev.reconcile.estimator.StrataEstimatorFactory.defaults())
        .nodeId("bench");
  }

  /** A 16-byte key, big-endian {@code i} twice: increasing in {@code i}, byte for byte. */
  static byte[] ascendingKey(long i) {
    byte[] k = new byte[16];
    for (int j = 0; j < 8; j++) {
      k[j] = (byte) (i >>> (56 - 8 * j));
      k[8 + j] = k[j];
    }
    return k;
  }

  static byte[] key(long i) {
    byte[] k = new byte[16];
    long x = i * 0x9E37_79B9_7F4A_7C15L; // spread the keys over the key space
    for (int j = 0; j < 8; j++) {
      k[j] = (byte) (x >>> (56 - 8 * j));
      k[8 + j] = (byte) (i >>> (56 - 8 * j));
    }
    return k;
  }

  public static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    Files.walkFileTree(
        dir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
            Files.delete(f);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
            Files.delete(d);
            return FileVisitResult.CONTINUE;
          }
        });
  }

  /**
   * Local writes: 100-byte values, 16-byte keys, a keyspace of 2^20 (new keys, then overwrites).
   */
  @State(Scope.Benchmark)
  public static class Writes {
    /** SKETCHES: full store; NO_SKETCHES: records + index only; RAW: plain RocksDB put. */
    @Param({"SKETCHES", "NO_SKETCHES", "RAW"})
    public String mode;

    @Param({"4"})
    public int partitionsLog2;

    @Param({"15"})
    public int maxLog2;

    /** Coded symbols per partition, 2^ratelessLog2 (the agent's default 14; 0 for none). */
    @Param({"14"})
    public int ratelessLog2;

    Path dir;
    ReplicaStore store;
    Options rawOptions;
    RocksDB raw;
    WriteOptions rawWrite;
    byte[] value = new byte[VALUE_BYTES];
    long next;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
      dir = Files.createTempDirectory("store-bench-writes");
      new SplittableRandom(1).nextBytes(value);
      if (mode.equals("RAW")) {
        rawOptions =
            new Options()
                .setCreateIfMissing(true)
                .setTableFormatConfig(new BlockBasedTableConfig().setFormatVersion(5));
        raw = RocksDB.open(rawOptions, dir.toString());
        rawWrite = new WriteOptions();
      } else {
        store =
            ReplicaStore.open(
                options(dir, params(partitionsLog2, maxLog2).withRatelessLog2(ratelessLog2))
                    .maintainSketches(mode.equals("SKETCHES"))
                    .build());
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
      if (store != null) {
        store.close();
      }
      if (raw != null) {
        rawWrite.close();
        raw.close();
        rawOptions.close();
      }
      deleteTree(dir);
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @Fork(
      value = 1,
      jvmArgsAppend = {"-Xmx3g"})
  @Warmup(iterations = 2, time = 2)
  @Measurement(iterations = 5, time = 2)
  public long put(Writes s) throws RocksDBException {
    byte[] k = key(s.next++ & ((1 << 20) - 1));
    if (s.raw != null) {
      s.raw.put(s.rawWrite, k, s.value);
      return 0;
    }
    return s.store.put(k, s.value);
  }

  /**
   * The in-memory part of a local overwrite alone, with the maintained tables as two core {@code
   * Iblt}s (three parallel arrays each): remove the old element and add the new one in fingerprint,
   * estimator and both tables of a random partition. This is the layout the store used before
   * {@code IbltLadder} (interleaved cells, shared hashes); kept to show why it changed.
   */
  @State(Scope.Benchmark)
  public static class SketchOnly {
    @Param({"4"})
    public int partitionsLog2;

    @Param({"15"})
    public int maxLog2;

    Fingerprint.Accumulator[] fps;
    DifferenceEstimator[] ests;
    Iblt[] big;
    Iblt[] big3;
    long x = 1;

    @Setup(Level.Trial)
    public void setUp() {
      SketchParams p = params(partitionsLog2, maxLog2);
      int n = p.partitions();
      fps = new Fingerprint.Accumulator[n];
      ests = new DifferenceEstimator[n];
      big = new Iblt[n];
      big3 = new Iblt[n];
      for (int i = 0; i < n; i++) {
        fps[i] = new Fingerprint.Accumulator(p.spec());
        ests[i] = dev.reconcile.estimator.StrataEstimatorFactory.defaults().create(p.spec());
        big[i] = new Iblt(p.spec(), p.maxShape(), CellLayout.WIDE);
        big3[i] = new Iblt(p.spec(), p.maxShapeBase3(), CellLayout.WIDE);
      }
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.NANOSECONDS)
  @Fork(
      value = 1,
      jvmArgsAppend = {"-Xmx3g"})
  @Warmup(iterations = 2, time = 2)
  @Measurement(iterations = 5, time = 2)
  public long sketchUpdateCoreIblts(SketchOnly s) {
    long old = s.x;
    long neu = old * 0x9E37_79B9_7F4A_7C15L + 0x632B_E59B_D9B4_E019L;
    s.x = neu;
    int p = (int) (neu >>> (64 - s.partitionsLog2));
    s.fps[p].remove(old);
    s.ests[p].remove(old);
    s.big[p].delete(old);
    s.big3[p].delete(old);
    s.fps[p].add(neu);
    s.ests[p].add(neu);
    s.big[p].insert(neu);
    s.big3[p].insert(neu);
    return neu;
  }

  /**
   * Repair batches of 1000 new 100-byte records: keys spread over the key space ({@code SPREAD}, a
   * repair of scattered differences) or in increasing order ({@code ASCENDING}, what a catch-up's
   * range scan sends: each partition's rows arrive in order).
   */
  @State(Scope.Benchmark)
  public static class Applies {
    @Param({"4"})
    public int partitionsLog2;

    @Param({"SPREAD", "ASCENDING"})
    public String keyOrder;

    @Param({"15"})
    public int maxLog2;

    Path dir;
    ReplicaStore store;
    byte[] value = new byte[VALUE_BYTES];
    long next;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      dir = Files.createTempDirectory("store-bench-apply");
      new SplittableRandom(2).nextBytes(value);
      store = ReplicaStore.open(options(dir, params(partitionsLog2, maxLog2)).build());
    }

    List<ReplicaRecord> batch() {
      List<ReplicaRecord> b = new ArrayList<>(1000);
      for (int i = 0; i < 1000; i++) {
        long n = next++;
        byte[] k = keyOrder.equals("ASCENDING") ? ascendingKey(n) : key(n);
        b.add(ReplicaRecord.of(k, value, HybridClock.version(1_700_000_000_000L + n, 0), 77));
      }
      return b;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
      store.close();
      deleteTree(dir);
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(1000)
  @Fork(
      value = 1,
      jvmArgsAppend = {"-Xmx3g"})
  @Warmup(iterations = 2, time = 2)
  @Measurement(iterations = 5, time = 2)
  public ApplyOutcome apply(Applies s) {
    return s.store.apply(s.batch());
  }

  /**
   * A client's point reads: a store loaded with {@code records} 100-byte records by bulk writes of
   * a thousand (left as the load leaves it: the last ones in the memtables, the rest in table
   * files), read at keys drawn uniformly from those stored ({@code PRESENT}) or from keys never
   * written ({@code ABSENT}).
   */
  @State(Scope.Benchmark)
  public static class Reads {
    @Param({"1000000"})
    public int records;

    @Param({"PRESENT", "ABSENT"})
    public String keys;

    Path dir;
    ReplicaStore store;
    final SplittableRandom random = new SplittableRandom(3);

    @Setup(Level.Trial)
    public void setUp() throws IOException, InterruptedException {
      dir = Files.createTempDirectory("store-bench-reads");
      store = ReplicaStore.open(options(dir, params(4, 15)).build());
      byte[] value = new byte[VALUE_BYTES];
      new SplittableRandom(4).nextBytes(value);
      List<ReplicaRecord> batch = new ArrayList<>(1000);
      for (int i = 0; i < records; i++) {
        batch.add(
            ReplicaRecord.of(key(i), value, HybridClock.version(1_700_000_000_000L + i, 0), 77));
        if (batch.size() == 1000 || i == records - 1) {
          store.putAll(batch);
          batch.clear();
        }
      }
      // The load grew the key filter in segments; the store rebuilds it into one in the
      // background (KeyFilterRebuild): measure the filter as a grown store keeps it.
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (store.stats().keyFilterSegments() > 1 && System.nanoTime() < end) {
        Thread.sleep(10);
      }
      System.out.printf(
          "%nkey filter: %d segment(s), %d rebuild(s)%n",
          store.stats().keyFilterSegments(), store.stats().keyFilterRebuilds());
    }

    byte[] nextKey() {
      int i = random.nextInt(records);
      return key(keys.equals("PRESENT") ? i : (long) records + i);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
      store.close();
      deleteTree(dir);
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.NANOSECONDS)
  @Fork(
      value = 1,
      jvmArgsAppend = {"-Xmx3g"})
  @Warmup(iterations = 2, time = 2)
  @Measurement(iterations = 5, time = 2)
  public Object get(Reads s) {
    return s.store.get(s.nextKey());
  }

  /** A prepared store of {@code records} 100-byte records, reopened by each invocation. */
  @State(Scope.Benchmark)
  public static class Prepared {
    @Param({"1000000"})
    public int records;

    @Param({"4"})
    public int partitionsLog2;

    @Param({"15"})
    public int maxLog2;

    /** Coded symbols per partition, 2^ratelessLog2 (the agent's default 14; 0 for none). */
    @Param({"14"})
    public int ratelessLog2;

    @Param({"1", "2"})
    public int threads;

    /** false: scan and count only (the RocksDB part of the rebuild). */
    @Param({"true", "false"})
    public boolean sketches;

    Path dir;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      dir = Files.createTempDirectory("store-bench-rebuild");
      byte[] value = new byte[VALUE_BYTES];
      new SplittableRandom(3).nextBytes(value);
      try (ReplicaStore s =
          ReplicaStore.open(
              options(dir, params(partitionsLog2, maxLog2).withRatelessLog2(ratelessLog2))
                  .maintainSketches(false)
                  .build())) {
        List<ReplicaRecord> chunk = new ArrayList<>(10_000);
        for (int i = 0; i < records; i++) {
          chunk.add(
              ReplicaRecord.of(key(i), value, HybridClock.version(1_700_000_000_000L + i, 0), 5));
          if (chunk.size() == 10_000) {
            s.putAll(chunk);
            chunk.clear();
          }
        }
        s.putAll(chunk);
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
      deleteTree(dir);
    }
  }

  /** Open = RocksDB open + sketch rebuild; stderr shows the rebuild rate the store measured. */
  @Benchmark
  @BenchmarkMode(Mode.SingleShotTime)
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  @Fork(
      value = 1,
      jvmArgsAppend = {"-Xmx3g"})
  @Warmup(iterations = 2)
  @Measurement(iterations = 5)
  public long rebuildAtOpen(Prepared p) {
    try (ReplicaStore s =
        ReplicaStore.open(
            options(p.dir, params(p.partitionsLog2, p.maxLog2).withRatelessLog2(p.ratelessLog2))
                .rebuildThreads(p.threads)
                .maintainSketches(p.sketches)
                .build())) {
      System.err.printf(
          "rebuild: %d records in %d ms = %.2f M keys/s wall, %.2f M keys/s per CPU second"
              + " (%d threads, sketches %s)%n",
          s.recordCount(),
          s.stats().lastRebuildMillis(),
          s.stats().lastRebuildKeysPerSecond() / 1e6,
          s.stats().lastRebuildKeysPerCpuSecond() / 1e6,
          s.stats().rebuildThreads(),
          p.sketches);
      return s.recordCount();
    }
  }
}
