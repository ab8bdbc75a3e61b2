package dev.reconcile.agent.store;

import dev.reconcile.bench.StoreBenchmark;
import dev.reconcile.cli.bench.Medians;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ProtocolException;
import dev.reconcile.core.RecordStore.PartitionScan;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RowBatches;
import dev.reconcile.core.SketchParams;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * What the sending side of a repair pays to read the records of a partition's listed elements, by
 * each of the store's two paths, over a grid of list densities and value sizes: the measurement
 * behind {@link ReplicaStore#scanListed}'s choice (docs/benchmarks.md, section 3, "stop 43").
 *
 * <ul>
 *   <li><b>scan</b>: one filtered range scan of the partition's records ({@link
 *       RecordReader#scanListed}), which reads every row and copies the listed ones as rows ({@link
 *       PartitionScan#nextRows}, batches of 16 000 rows or 1 MiB, as the stream asks);
 *   <li><b>lookups</b>: the digest index walked for the listed elements, then the records read by
 *       key a chunk of 1 000 elements at a time, as the stream asks for them: copied as stored rows
 *       ({@link PartitionScan#nextRows}) when the store sends its looked-up records as rows ({@link
 *       PartitionScan#storedRows}: records of at most {@link ReplicaStore#LOOKED_UP_ROW_BYTES}),
 *       decoded records ({@link PartitionScan#next}) otherwise.
 * </ul>
 *
 * For each value size a fresh store (the agent's sketch parameters, 16 partitions) is loaded with
 * about {@code storeMiB} of records with random values, left as the loads leave it (memtables,
 * level 0 and the levels below); partition 0 is read. For each density a seeded random subset of
 * its elements is listed; each trial times both paths, in alternating order, from opening the scan
 * to its last batch; the medians of the trials are reported. Every trial's records are compared
 * with the truth (the keys of the listed elements, key by key); a mismatch ends the run with an
 * error. Not included: encoding the batches for the wire (nothing more for rows, one message per
 * record for decoded records).
 *
 * <pre>
 *   java -Xmx4g -cp benchmarks/target/benchmarks.jar dev.reconcile.agent.store.ListedReadCost \
 *       [outDir=listed-read] [trials=5] [storeMiB=256] [valueBytes=100,1024,4096,16384,65536] \
 *       [densities=2,4,8,16,32,64,128,256 (a list of 1/x of the partition)]
 * </pre>
 *
 * Writes {@code listed-read.csv} and {@code listed-read.png} (scan time over lookup time by
 * density, a series per value size) into {@code outDir}.
 */
public final class ListedReadCost {
  private static final int ROWS_PER_BATCH = 16_000;
  private static final int LOOKUP_CHUNK = 1_000;
  private static final long BATCH_BYTES = 1 << 20;
  private static final int PARTITION = 0;

  private ListedReadCost() {}

  /** One grid point. */
  record Point(
      int valueBytes,
      long partitionRecords,
      long averageRecordBytes,
      int density,
      int listed,
      double scanMillis,
      double lookupMillis,
      boolean ruleScans,
      int correctTrials,
      int trials) {
    double ratio() {
      return scanMillis / lookupMillis;
    }
  }

  public static void main(String[] args) throws Exception {
    Path out = Path.of(args.length > 0 ? args[0] : "listed-read");
    int trials = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    long storeBytes = (args.length > 2 ? Long.parseLong(args[2]) : 256) << 20;
    int[] valueSizes = ints(args.length > 3 ? args[3] : "100,1024,4096,16384,65536");
    int[] densities = ints(args.length > 4 ? args[4] : "2,4,8,16,32,64,128,256");
    Files.createDirectories(out);
    List<Point> points = new ArrayList<>();
    try (PrintWriter csv =
        new PrintWriter(Files.newBufferedWriter(out.resolve("listed-read.csv")))) {
      csv.println(
          "value_bytes,partition_records,average_record_bytes,density,listed,scan_ms_median,"
              + "lookup_ms_median,scan_over_lookup,scan_ns_per_partition_row,lookup_ns_per_listed,"
              + "rule_scans,correct_trials,trials");
      for (int valueBytes : valueSizes) {
        for (Point p : measure(valueBytes, storeBytes, densities, trials)) {
          points.add(p);
          csv.printf(
              Locale.ROOT,
              "%d,%d,%d,%d,%d,%.3f,%.3f,%.3f,%.1f,%.1f,%b,%d,%d%n",
              p.valueBytes,
              p.partitionRecords,
              p.averageRecordBytes,
              p.density,
              p.listed,
              p.scanMillis,
              p.lookupMillis,
              p.ratio(),
              p.scanMillis * 1e6 / p.partitionRecords,
              p.lookupMillis * 1e6 / p.listed,
              p.ruleScans,
              p.correctTrials,
              p.trials);
          csv.flush();
        }
      }
    }
    plot(points, valueSizes, out.resolve("listed-read.png"));
  }

  private static List<Point> measure(int valueBytes, long storeBytes, int[] densities, int trials)
      throws Exception {
    Path dir = Files.createTempDirectory("listed-read-" + valueBytes);
    SketchParams params = StoreBenchmark.params(4, 15).withRatelessLog2(14);
    List<Point> points = new ArrayList<>();
    try (ReplicaStore store = ReplicaStore.open(StoreBenchmark.options(dir, params).build())) {
      long records = Math.max(1, storeBytes / valueBytes);
      load(store, records, valueBytes);
      HashSpec spec = params.spec();
      // Partition 0's elements and their keys: the truth each trial is compared with.
      Map<Long, byte[]> keyOf = new HashMap<>();
      store.forEachRecord(
          r -> {
            long kh = spec.keyHash(r.key());
            if (HashSpec.partition(kh, params.partitionsLog2()) == PARTITION) {
              keyOf.put(
                  spec.element(
                      kh, r.version(), r.origin(), r.tombstone(), spec.valueHash(r.value())),
                  r.key());
            }
          });
      long[] all = keyOf.keySet().stream().mapToLong(Long::longValue).sorted().toArray();
      long average = store.averageRecordBytes();
      System.out.printf(
          Locale.ROOT,
          "value %d B: %d records loaded, partition %d holds %d, average stored record %d B"
              + " (RocksDB's estimate)%n",
          valueBytes,
          records,
          PARTITION,
          all.length,
          average);
      SplittableRandom rnd = new SplittableRandom(valueBytes * 7919L + records);
      // Warm-up: both paths, untimed, until the JIT has seen them.
      long[] warm = pick(all, Math.max(1, all.length / 8), rnd);
      for (int i = 0; i < 3; i++) {
        read(store, spec, params, warm, true);
        read(store, spec, params, warm, false);
      }
      for (int density : densities) {
        int listed = (int) Math.max(1, Math.round((double) all.length / density));
        long[] elements = pick(all, listed, rnd);
        List<String> truth = new ArrayList<>();
        for (long e : elements) {
          truth.add(hex(keyOf.get(e)));
        }
        truth.sort(null);
        double[] scan = new double[trials];
        double[] lookup = new double[trials];
        int correct = 0;
        for (int t = 0; t < trials; t++) {
          boolean scanFirst = (t & 1) == 0;
          Read first = read(store, spec, params, elements, scanFirst);
          Read second = read(store, spec, params, elements, !scanFirst);
          Read s = scanFirst ? first : second;
          Read l = scanFirst ? second : first;
          scan[t] = s.millis;
          lookup[t] = l.millis;
          if (!s.keys.equals(truth) || !l.keys.equals(truth)) {
            throw new IllegalStateException(
                String.format(
                    Locale.ROOT,
                    "value %d B, 1/%d: scan read %d keys, lookups %d, the truth is %d keys;"
                        + " they differ",
                    valueBytes,
                    density,
                    s.keys.size(),
                    l.keys.size(),
                    truth.size()));
          }
          correct++;
        }
        boolean ruleScans = ReplicaStore.listedByScan(listed, all.length, average);
        Point p =
            new Point(
                valueBytes,
                all.length,
                average,
                density,
                listed,
                Medians.of(scan),
                Medians.of(lookup),
                ruleScans,
                correct,
                trials);
        points.add(p);
        System.out.printf(
            Locale.ROOT,
            "  1/%d (%d listed): scan %.2f ms, lookups %.2f ms, scan/lookups %.2f; the rule %s%n",
            density,
            listed,
            p.scanMillis,
            p.lookupMillis,
            p.ratio(),
            ruleScans ? "scans" : "looks up");
      }
    } finally {
      StoreBenchmark.deleteTree(dir);
    }
    return points;
  }

  private static void load(ReplicaStore store, long records, int valueBytes) {
    SplittableRandom rnd = new SplittableRandom(valueBytes);
    long version = store.clock().now();
    long origin = 42;
    List<ReplicaRecord> batch = new ArrayList<>();
    long bytes = 0;
    for (long i = 0; i < records; i++) {
      byte[] value = new byte[valueBytes];
      rnd.nextBytes(value);
      batch.add(
          ReplicaRecord.of(
              String.format(Locale.ROOT, "key-%012d", i).getBytes(StandardCharsets.US_ASCII),
              value,
              version,
              origin));
      bytes += valueBytes;
      if (batch.size() == 10_000 || bytes >= (64L << 20)) {
        store.putAll(batch);
        batch.clear();
        bytes = 0;
      }
    }
    store.putAll(batch);
  }

  /** One path's read of {@code elements}: its time and the keys it returned, sorted. */
  private record Read(double millis, List<String> keys) {}

  private static Read read(
      ReplicaStore store, HashSpec spec, SketchParams params, long[] elements, boolean byScan)
      throws ProtocolException {
    List<RowBatches.Builder> batches = new ArrayList<>();
    List<List<ReplicaRecord>> chunks = new ArrayList<>();
    long from = System.nanoTime();
    try (PartitionScan scan = store.scanListed(PARTITION, elements.clone(), byScan)) {
      if (byScan || scan.storedRows()) {
        int perBatch = byScan ? ROWS_PER_BATCH : LOOKUP_CHUNK;
        while (true) {
          RowBatches.Builder b = new RowBatches.Builder(spec, (int) BATCH_BYTES);
          if (scan.nextRows(b, perBatch, BATCH_BYTES) == 0) {
            break;
          }
          batches.add(b);
        }
      } else {
        for (List<ReplicaRecord> c = scan.next(LOOKUP_CHUNK, BATCH_BYTES);
            !c.isEmpty();
            c = scan.next(LOOKUP_CHUNK, BATCH_BYTES)) {
          chunks.add(c);
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException("reading the listed records failed: " + e.getMessage(), e);
    }
    double millis = (System.nanoTime() - from) / 1e6;
    List<String> keys = new ArrayList<>();
    for (RowBatches.Builder b : batches) {
      RowBatches.Rows rows =
          RowBatches.read(b.build(PARTITION, 0), Integer.MAX_VALUE, spec, params.partitionsLog2());
      for (int i = 0; i < rows.size(); i++) {
        keys.add(hex(rows.key(i)));
      }
    }
    for (List<ReplicaRecord> c : chunks) {
      for (ReplicaRecord r : c) {
        keys.add(hex(r.key()));
      }
    }
    keys.sort(null);
    return new Read(millis, keys);
  }

  /** {@code k} distinct elements of {@code all}, at random, in ascending order. */
  private static long[] pick(long[] all, int k, SplittableRandom rnd) {
    long[] copy = all.clone();
    for (int i = 0; i < k; i++) { // a partial Fisher-Yates shuffle
      int j = i + rnd.nextInt(copy.length - i);
      long t = copy[i];
      copy[i] = copy[j];
      copy[j] = t;
    }
    long[] out = Arrays.copyOf(copy, k);
    Arrays.sort(out);
    return out;
  }

  private static void plot(List<Point> points, int[] valueSizes, Path file) throws IOException {
    XYChart chart =
        new XYChartBuilder()
            .width(900)
            .height(560)
            .title("Reading a partition's listed records: one filtered scan against lookups")
            .xAxisTitle("listed elements / partition records (log scale)")
            .yAxisTitle("scan time / lookup time (below 1: the scan is faster)")
            .build();
    chart.getStyler().setXAxisLogarithmic(true);
    chart.getStyler().setYAxisLogarithmic(true);
    chart.getStyler().setXAxisDecimalPattern("0.####");
    for (int v : valueSizes) {
      List<Double> xs = new ArrayList<>();
      List<Double> ys = new ArrayList<>();
      for (Point p : points) {
        if (p.valueBytes == v) {
          xs.add(1.0 / p.density);
          ys.add(p.ratio());
        }
      }
      if (!xs.isEmpty()) {
        XYSeries s = chart.addSeries(v + " B values", xs, ys);
        s.setMarker(SeriesMarkers.CIRCLE);
      }
    }
    double lo = Double.MAX_VALUE;
    double hi = 0;
    for (Point p : points) {
      lo = Math.min(lo, 1.0 / p.density);
      hi = Math.max(hi, 1.0 / p.density);
    }
    XYSeries even = chart.addSeries("equal cost", new double[] {lo, hi}, new double[] {1, 1});
    even.setMarker(SeriesMarkers.NONE);
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
  }

  private static int[] ints(String csv) {
    return Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
  }

  private static String hex(byte[] b) {
    return HexFormat.of().formatHex(b);
  }
}
