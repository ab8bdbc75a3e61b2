package dev.reconcile.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.EnvOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileWriter;

/**
 * What block compression costs a table file written as a partition load writes one ({@code
 * SstFileWriter}, direct buffers, 10-bit Bloom filter, format version 5, synced at the end): one
 * file of a catch-up's chunk, random (incompressible) values, as the catch-up bench sends. The
 * loads' choice (LZ4, {@code ReplicaStore.LOAD_FILE_COMPRESSION}) against RocksDB's default
 * (Snappy, which the column families used until stop 42) and none.
 *
 * <pre>
 *   ./mvnw -B -ntp -o -pl benchmarks -am package -DskipTests
 *   java -jar benchmarks/target/benchmarks.jar TableFileBenchmark
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5)
@Measurement(iterations = 15)
@Fork(1)
public class TableFileBenchmark {
  /** Rows per file: 32 MB of records either way (200 000 x 100 B is the catch-up bench's case). */
  @Param({"100:200000", "65536:500"})
  public String shape;

  @Param({"SNAPPY_COMPRESSION", "LZ4_COMPRESSION", "NO_COMPRESSION"})
  public String compression;

  private Path dir;
  private byte[][] keys;
  private byte[][] values;
  private ByteBuffer row;
  private ByteBuffer value;
  private BloomFilter bloom;
  private Options options;
  private EnvOptions env;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    RocksDB.loadLibrary();
    int valueBytes = Integer.parseInt(shape.split(":")[0]);
    int rows = Integer.parseInt(shape.split(":")[1]);
    SplittableRandom rnd = new SplittableRandom(7);
    keys = new byte[rows][];
    values = new byte[rows][];
    for (int i = 0; i < rows; i++) {
      keys[i] = String.format("%04x-key-%012d", 1, i).getBytes(StandardCharsets.US_ASCII);
      values[i] = new byte[valueBytes];
      rnd.nextBytes(values[i]);
    }
    row = ByteBuffer.allocateDirect(64);
    value = ByteBuffer.allocateDirect(valueBytes);
    dir = Files.createTempDirectory("table-file-bench");
    bloom = new BloomFilter(10);
    options =
        new Options()
            .setCompressionType(CompressionType.valueOf(compression))
            .setTableFormatConfig(
                new BlockBasedTableConfig().setFormatVersion(5).setFilterPolicy(bloom));
    env = new EnvOptions();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    env.close();
    options.close();
    bloom.close();
    Files.deleteIfExists(dir.resolve("f.sst"));
    Files.deleteIfExists(dir);
  }

  /** One table file of every row, written and synced. */
  @Benchmark
  public long writeFile() throws RocksDBException {
    try (SstFileWriter w = new SstFileWriter(env, options)) {
      w.open(dir.resolve("f.sst").toString());
      for (int i = 0; i < keys.length; i++) {
        row.clear();
        row.put(keys[i]).flip();
        value.clear();
        value.put(values[i]).flip();
        w.put(row, value);
      }
      w.finish();
      return w.fileSize();
    }
  }
}
