package dev.reconcile.cli.bench;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.agent.store.HybridClock;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.agent.store.StoreOptions;
import dev.reconcile.cli.AgentJvm;
import dev.reconcile.cli.FileTrees;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import dev.reconcile.estimator.EstimatorKinds;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.rocksdb.EnvOptions;
import org.rocksdb.IngestExternalFileOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.SstFileWriter;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * What the receiving side of a catch-up can write at best on this machine, in one warm JVM, no
 * network: the same records a catch-up sends (each partition's rows in order, batches that never
 * straddle a partition), written six ways into an empty folder.
 *
 * <ul>
 *   <li>{@code rocksdb-wal}: plain RocksDB write batches, WAL on and not synced, compressed by
 *       level (as the store writes): the floor of the store's write path;
 *   <li>{@code rocksdb-sst}: one SST file written with {@code SstFileWriter} and ingested: what
 *       building SST files for an empty partition would start from;
 *   <li>{@code store-no-sketches}: {@link ReplicaStore#apply} with no sketches kept (record, digest
 *       index row, conflict rule);
 *   <li>{@code store}: {@link ReplicaStore#apply} with an agent's default sketches (fingerprint,
 *       tables, estimator, coded symbols): the catch-up receiver's work batch by batch;
 *   <li>{@code store-one-batch}: the same, each batch one write batch under the writer lock, as
 *       before apply slices ({@link StoreOptions#applySliceKeys}): what the slices cost;
 *   <li>{@code store-ingest}: the same store, each partition received through {@link
 *       ReplicaStore#load} (table files ingested, {@code PartitionIngest}): the catch-up receiver's
 *       own work since it ingests.
 * </ul>
 *
 * Each mode runs once untimed (the JIT), then {@code trials} timed times, the modes alternated.
 * Every trial is checked: the folder is read back (a full scan) and compared record by record with
 * what was written (raw modes: row and value; store modes: key, value, version, origin, tombstone,
 * and the store's self-check).
 *
 * <p>Everything runs in this JVM: for the receiver's figures it needs the agent's JVM options
 * ({@link AgentJvm#defaultOptions}), and it says so when they are missing.
 */
public final class ApplyBench {
  static final List<String> MODES =
      List.of(
          "rocksdb-wal",
          "rocksdb-sst",
          "store-no-sketches",
          "store",
          "store-one-batch",
          "store-ingest");

  /** One case: {@code records} records of {@code valueBytes}, batches of {@code batchRecords}. */
  public record Config(
      int records, int valueBytes, int batchRecords, int trials, Path work, long seed) {}

  /** Medians of one mode over the trials. */
  public record Summary(
      String mode,
      int records,
      int valueBytes,
      int trials,
      int correctTrials,
      double millisMedian,
      double recordsPerSecondMedian,
      double megabytesPerSecondMedian) {}

  private ApplyBench() {}

  static Csv trialsCsv(Path out) {
    return new Csv(
        out.resolve("apply-trials.csv"),
        "mode",
        "records",
        "value_bytes",
        "trial",
        "ms",
        "records_per_s",
        "mb_per_s",
        "correct");
  }

  /**
   * Runs every case, writing {@code apply-trials.csv}, {@code apply-summary.csv} and {@code
   * apply-ceiling.png} to {@code out}.
   */
  public static List<Summary> runAll(List<Config> cases, Path out, Consumer<String> log)
      throws Exception {
    List<String> missing = new ArrayList<>(AgentJvm.defaultOptions());
    missing.removeAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    if (!missing.isEmpty()) {
      log.accept(
          "apply: this JVM runs without the agent's JVM options "
              + String.join(" ", missing)
              + " (bin/reconcile gives them to agents): the store's figures are those of another"
              + " heap; pass them to java for the receiver's figures");
    }
    List<Summary> all = new ArrayList<>();
    try (Csv csv = trialsCsv(out)) {
      for (Config c : cases) {
        all.addAll(run(c, csv, log));
      }
    }
    try (Csv csv =
        new Csv(
            out.resolve("apply-summary.csv"),
            "mode",
            "records",
            "value_bytes",
            "trials",
            "correct_trials",
            "ms_median",
            "records_per_s_median",
            "mb_per_s_median")) {
      for (Summary s : all) {
        csv.row(
            s.mode(),
            s.records(),
            s.valueBytes(),
            s.trials(),
            s.correctTrials(),
            s.millisMedian(),
            s.recordsPerSecondMedian(),
            s.megabytesPerSecondMedian());
      }
    }
    Plots.apply(all, out.resolve("apply-ceiling.png"));
    return all;
  }

  /** Runs every mode of {@code c}; rows go to {@code csv}. */
  static List<Summary> run(Config c, Csv csv, Consumer<String> log) throws Exception {
    AgentConfig agent =
        AgentConfig.fromMap(Map.of("data", c.work().toString(), "node-id", "apply-bench"));
    EstimatorFactory estimators = EstimatorKinds.defaults();
    SketchParams params = ReplicaAgent.sketchParams(agent, estimators);
    List<ReplicaRecord> records = records(c, params);
    Files.createDirectories(c.work());
    double[][] ms = new double[MODES.size()][c.trials()];
    int[] correct = new int[MODES.size()];
    for (int t = -1; t < c.trials(); t++) {
      for (int k = 0; k < MODES.size(); k++) {
        int m = Math.floorMod(k + t, MODES.size()); // alternate which mode goes first
        String mode = MODES.get(m);
        Path dir = c.work().resolve("apply-" + mode + "-" + (t + 1));
        long t0 = System.nanoTime();
        write(mode, dir, records, c.batchRecords(), params, estimators);
        double millis = (System.nanoTime() - t0) / 1e6;
        boolean ok = verify(mode, dir, records, params, estimators);
        FileTrees.delete(dir);
        if (t < 0) {
          continue; // warm-up
        }
        ms[m][t] = millis;
        correct[m] += ok ? 1 : 0;
        double rps = c.records() / (millis / 1e3);
        double mbps = (double) c.records() * c.valueBytes() / (millis * 1e3);
        csv.row(mode, c.records(), c.valueBytes(), t, millis, rps, mbps, ok);
        log.accept(
            String.format(
                "apply %s %,d x %,d B, trial %d: %.0f ms, %,.0f records/s, %.1f MB/s%s",
                mode,
                c.records(),
                c.valueBytes(),
                t,
                millis,
                rps,
                mbps,
                ok ? ", contents equal" : ", CONTENTS DIFFER"));
      }
    }
    List<Summary> out = new ArrayList<>();
    for (int m = 0; m < MODES.size(); m++) {
      double med = Medians.of(ms[m]);
      out.add(
          new Summary(
              MODES.get(m),
              c.records(),
              c.valueBytes(),
              c.trials(),
              correct[m],
              med,
              c.records() / (med / 1e3),
              (double) c.records() * c.valueBytes() / (med * 1e3)));
    }
    return out;
  }

  /**
   * Seeded records with 16-byte random keys, in the order a catch-up sends them: by partition, then
   * by key (the store's row order).
   */
  static List<ReplicaRecord> records(Config c, SketchParams params) {
    SplittableRandom r = new SplittableRandom(c.seed());
    List<ReplicaRecord> out = new ArrayList<>(c.records());
    for (int i = 0; i < c.records(); i++) {
      byte[] k = new byte[16];
      r.nextBytes(k);
      byte[] v = new byte[c.valueBytes()];
      r.nextBytes(v);
      out.add(ReplicaRecord.of(k, v, HybridClock.version(1_700_000_000_000L + i, 0), 77));
    }
    Comparator<ReplicaRecord> byPartition = Comparator.comparingInt(x -> partition(x, params));
    out.sort(byPartition.thenComparing(ReplicaRecord::key, Arrays::compareUnsigned));
    return out;
  }

  /** The partition the store files {@code rec} under. */
  private static int partition(ReplicaRecord rec, SketchParams params) {
    return HashSpec.partition(params.spec().keyHash(rec.key()), params.partitionsLog2());
  }

  /** The raw modes' row: partition (2 bytes) then key, as the store files a record. */
  private static byte[] row(ReplicaRecord rec, SketchParams params) {
    int p = partition(rec, params);
    byte[] row = new byte[2 + rec.key().length];
    row[0] = (byte) (p >>> 8);
    row[1] = (byte) p;
    System.arraycopy(rec.key(), 0, row, 2, rec.key().length);
    return row;
  }

  static void write(
      String mode,
      Path dir,
      List<ReplicaRecord> records,
      int batchRecords,
      SketchParams params,
      EstimatorFactory estimators)
      throws RocksDBException, IOException {
    switch (mode) {
      case "rocksdb-wal" -> {
        try (Options o = rawOptions();
            RocksDB db = RocksDB.open(o, dir.toString());
            WriteOptions wo = new WriteOptions();
            WriteBatch b = new WriteBatch()) {
          for (List<ReplicaRecord> batch : batches(records, batchRecords, params)) {
            b.clear();
            for (ReplicaRecord rec : batch) {
              b.put(row(rec, params), rec.value());
            }
            db.write(wo, b);
          }
        }
      }
      case "rocksdb-sst" -> {
        Files.createDirectories(dir);
        String file = dir.resolve("load.sst").toString();
        // The file compressed as a partition load compresses its files.
        try (Options o = rawOptions().setCompressionType(ReplicaStore.LOAD_FILE_COMPRESSION);
            EnvOptions eo = new EnvOptions();
            SstFileWriter w = new SstFileWriter(eo, o)) {
          w.open(file);
          for (ReplicaRecord rec : records) {
            w.put(row(rec, params), rec.value());
          }
          w.finish();
        }
        try (Options o = rawOptions();
            RocksDB db = RocksDB.open(o, dir.resolve("db").toString());
            IngestExternalFileOptions io = new IngestExternalFileOptions().setMoveFiles(true)) {
          db.ingestExternalFile(List.of(file), io);
        }
      }
      case "store-ingest" -> {
        try (ReplicaStore s = ReplicaStore.open(storeOptions(mode, dir, params, estimators))) {
          RecordStore.PartitionLoad load = null;
          int loading = -1;
          for (List<ReplicaRecord> batch : batches(records, batchRecords, params)) {
            int p = partition(batch.get(0), params);
            if (load != null && p != loading) {
              load.finish();
              load.close();
              load = null;
            }
            if (load == null) {
              load = s.load(p);
              loading = p;
            }
            load.add(batch);
          }
          if (load != null) {
            load.finish();
            load.close();
          }
        }
      }
      default -> {
        try (ReplicaStore s = ReplicaStore.open(storeOptions(mode, dir, params, estimators))) {
          for (List<ReplicaRecord> batch : batches(records, batchRecords, params)) {
            s.apply(batch);
          }
        }
      }
    }
  }

  private static StoreOptions storeOptions(
      String mode, Path dir, SketchParams params, EstimatorFactory estimators) {
    return StoreOptions.builder(dir, params, estimators)
        .nodeId("apply-bench")
        .maintainSketches(!mode.equals("store-no-sketches"))
        .applySliceKeys(
            mode.equals("store-one-batch")
                ? Integer.MAX_VALUE
                : StoreOptions.DEFAULT_APPLY_SLICE_KEYS)
        .build();
  }

  /** A plain database compressed as the store's records ({@code COMPRESSION_PER_LEVEL}). */
  private static Options rawOptions() {
    return new Options()
        .setCreateIfMissing(true)
        .setMaxBackgroundJobs(2)
        .setBytesPerSync(1 << 20)
        .setCompressionPerLevel(ReplicaStore.COMPRESSION_PER_LEVEL);
  }

  /** Batches of at most {@code n} records, never straddling a partition (as the sender's). */
  private static List<List<ReplicaRecord>> batches(
      List<ReplicaRecord> records, int n, SketchParams params) {
    List<List<ReplicaRecord>> out = new ArrayList<>();
    List<ReplicaRecord> cur = new ArrayList<>();
    int curPartition = -1;
    for (ReplicaRecord rec : records) {
      int p = partition(rec, params);
      if (!cur.isEmpty() && (cur.size() == n || p != curPartition)) {
        out.add(cur);
        cur = new ArrayList<>();
      }
      cur.add(rec);
      curPartition = p;
    }
    if (!cur.isEmpty()) {
      out.add(cur);
    }
    return out;
  }

  /** Reads {@code dir} back and compares it record by record with {@code records}. */
  static boolean verify(
      String mode,
      Path dir,
      List<ReplicaRecord> records,
      SketchParams params,
      EstimatorFactory estimators)
      throws RocksDBException {
    if (mode.startsWith("rocksdb")) {
      Path db = mode.equals("rocksdb-sst") ? dir.resolve("db") : dir;
      try (Options o = rawOptions();
          RocksDB r = RocksDB.openReadOnly(o, db.toString());
          RocksIterator it = r.newIterator()) {
        int i = 0;
        for (it.seekToFirst(); it.isValid(); it.next(), i++) {
          if (i >= records.size()
              || !Arrays.equals(it.key(), row(records.get(i), params))
              || !Arrays.equals(it.value(), records.get(i).value())) {
            return false;
          }
        }
        it.status();
        return i == records.size();
      }
    }
    List<ReplicaRecord> got = new ArrayList<>(records.size());
    try (ReplicaStore s =
        ReplicaStore.open(
            storeOptions(mode, dir, params, estimators).toBuilder().readOnly(true).build())) {
      s.forEachRecord(got::add);
      if (!mode.equals("store-no-sketches") && !s.selfCheck().ok()) {
        return false;
      }
    }
    // forEachRecord lists partition, then key: the order the records were generated in.
    return got.equals(records);
  }
}
