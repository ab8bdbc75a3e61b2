package dev.reconcile.bench;

import dev.reconcile.agent.store.HybridClock;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.agent.store.RocksDbLibrary;
import dev.reconcile.agent.store.StoreOptions;
import dev.reconcile.cli.FileTrees;
import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.ReplicaRecord;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

/**
 * What a crash costs a store's next start, by the bound on its live WAL ({@link
 * StoreOptions.Builder#maxWalBytes}): a writer process applies repair batches (16 records of 64 KiB
 * by default, keys spread over the key order, the WAL on and not synced, as a receiver applies a
 * listed repair stream) and is killed with SIGKILL once the batches it acknowledged reach a given
 * size; then a new process opens the store as an agent would ({@code ReplicaStore.open}: RocksDB's
 * open with the WAL replay, then the sketch rebuild) and checks what it finds.
 *
 * <pre>
 *   java -cp benchmarks/target/benchmarks.jar dev.reconcile.bench.StoreRestart \
 *       [trials=3] [MiB acknowledged before the kill=1024] [bounds in MiB=256,1664] \
 *       [value bytes=65536] [repair-wal=true]
 * </pre>
 *
 * The second default bound, 1 664 MiB, is the one RocksDB chooses itself when none is set (four
 * times the memtables' sum: four column families of two memtables each, 64, 64, 16 and 64 MiB),
 * which the store had before its default of 256 MiB (docs/storage.md, "How much WAL a store
 * keeps").
 *
 * <p>Per trial and bound: the live WAL files left by the kill (their count and bytes), the open's
 * wall time in the new process (the RocksDB library already loaded) and the sketch rebuild's share
 * of it. The correctness column is computed, record by record: every acknowledged record must be
 * there with its value and version, and the records found must be a prefix of those written (the
 * WAL replays whole write batches in order; a batch written but not yet acknowledged when the kill
 * came may be there or not), with the store's record count equal to that prefix.
 *
 * <p>With {@code repair-wal=false} ({@link StoreOptions.Builder#repairWal}) batches of 256 KiB and
 * more skip the WAL until the receiver's stream ends: a kill then loses acknowledged records, which
 * is what that option gives up, and the check reports them as missing.
 *
 * <p>Each trial runs the bounds in turn, the order reversed every other trial. Both processes get
 * an agent's JVM options ({@link ChildJvm}).
 */
public final class StoreRestart {
  private static final int RECORDS_PER_BATCH = 16;
  private static final long ORIGIN = 7;
  private static final long SEED = 0x5eed_2026L;

  /** Written batches past the acknowledged ones that the checker looks for (the writer's lead). */
  private static final int LEAD_BATCHES = 4096;

  private StoreRestart() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("write")) {
      write(
          Path.of(args[1]),
          Long.parseLong(args[2]),
          Integer.parseInt(args[3]),
          Boolean.parseBoolean(args[4]));
      return;
    }
    if (args.length > 0 && args[0].equals("open")) {
      open(
          Path.of(args[1]),
          Long.parseLong(args[2]),
          Integer.parseInt(args[3]),
          Boolean.parseBoolean(args[4]),
          Long.parseLong(args[5]));
      return;
    }
    int trials = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    long ackedBytes = (args.length > 1 ? Long.parseLong(args[1]) : 1024) << 20;
    long[] boundsMib =
        Arrays.stream((args.length > 2 ? args[2] : "256,1664").split(","))
            .mapToLong(Long::parseLong)
            .toArray();
    int valueBytes = args.length > 3 ? Integer.parseInt(args[3]) : 64 << 10;
    boolean repairWal = args.length <= 4 || Boolean.parseBoolean(args[4]);
    long batchBytes = (long) RECORDS_PER_BATCH * valueBytes;
    long batches = Math.max(1, (ackedBytes + batchBytes - 1) / batchBytes);
    System.out.printf(
        "kill after %d acknowledged batches of %d x %d B (%.0f MiB), bounds %s MiB, repair-wal %b,"
            + " %d trials%n",
        batches,
        RECORDS_PER_BATCH,
        valueBytes,
        batches * batchBytes / 1048576.0,
        Arrays.toString(boundsMib),
        repairWal,
        trials);
    List<List<Trial>> byBound = new ArrayList<>();
    for (int b = 0; b < boundsMib.length; b++) {
      byBound.add(new ArrayList<>());
    }
    boolean allCorrect = true;
    for (int t = 0; t < trials; t++) {
      for (int j = 0; j < boundsMib.length; j++) {
        int b = t % 2 == 0 ? j : boundsMib.length - 1 - j;
        Trial r = trial(boundsMib[b] << 20, valueBytes, repairWal, batches);
        byBound.get(b).add(r);
        allCorrect &= r.correct;
        System.out.printf("trial %d, bound %d MiB: %s%n", t, boundsMib[b], r);
      }
    }
    for (int b = 0; b < boundsMib.length; b++) {
      List<Trial> rs = byBound.get(b);
      System.out.printf(
          "median, bound %d MiB: live WAL at the kill %.0f MiB in %.0f files, open %.0f ms"
              + " (sketch rebuild %.0f ms), writer %.1f MB/s; %d/%d trials correct%n",
          boundsMib[b],
          median(rs, r -> r.walBytes / 1048576.0),
          median(rs, r -> r.walFiles),
          median(rs, r -> r.openMillis),
          median(rs, r -> r.rebuildMillis),
          median(rs, r -> r.writerMbPerSecond),
          rs.stream().filter(r -> r.correct).count(),
          rs.size());
    }
    if (!allCorrect) {
      System.exit(1);
    }
  }

  /** One trial's figures, and what its check found. */
  private record Trial(
      long walBytes,
      int walFiles,
      double openMillis,
      double rebuildMillis,
      double writerMbPerSecond,
      long acked,
      long found,
      boolean correct,
      String problem) {
    @Override
    public String toString() {
      return String.format(
          "live WAL %.0f MiB in %d files; open %.0f ms (sketch rebuild %.0f ms); writer %.1f MB/s;"
              + " %d records acknowledged, %d found: %s",
          walBytes / 1048576.0,
          walFiles,
          openMillis,
          rebuildMillis,
          writerMbPerSecond,
          acked,
          found,
          correct ? "correct" : "WRONG: " + problem);
    }
  }

  /** The median of {@code f} over {@code rs} (the upper middle one of an even count). */
  private static double median(List<Trial> rs, ToDoubleFunction<Trial> f) {
    double[] v = rs.stream().mapToDouble(f).sorted().toArray();
    return v.length == 0 ? Double.NaN : v[v.length / 2];
  }

  private static Trial trial(long boundBytes, int valueBytes, boolean repairWal, long batches)
      throws Exception {
    Path dir = Files.createTempDirectory("store-restart");
    try {
      Process w =
          ChildJvm.of(
                  StoreRestart.class,
                  "write",
                  dir.toString(),
                  Long.toString(boundBytes),
                  Integer.toString(valueBytes),
                  Boolean.toString(repairWal))
              .start();
      long acked = 0;
      long start = 0;
      double seconds;
      try (BufferedReader in =
          new BufferedReader(new InputStreamReader(w.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) {
          if (line.equals("open")) {
            start = System.nanoTime();
            continue;
          }
          acked = Long.parseLong(line);
          if (acked >= batches) {
            break;
          }
        }
        seconds = (System.nanoTime() - start) / 1e9;
        w.destroyForcibly(); // SIGKILL: no close, no flush
        w.waitFor();
      }
      if (acked < batches) {
        throw new IOException("the writer ended after " + acked + " batches: see its errors above");
      }
      long[] wal = walFiles(dir);
      Process o =
          ChildJvm.of(
                  StoreRestart.class,
                  "open",
                  dir.toString(),
                  Long.toString(boundBytes),
                  Integer.toString(valueBytes),
                  Boolean.toString(repairWal),
                  Long.toString(acked * RECORDS_PER_BATCH))
              .start();
      String report = new String(o.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (o.waitFor() != 0 || report.isEmpty()) {
        throw new IOException("the opening process failed (exit " + o.exitValue() + ")");
      }
      String[] f = report.split(" ", 5);
      return new Trial(
          wal[1],
          (int) wal[0],
          Double.parseDouble(f[0]),
          Double.parseDouble(f[1]),
          acked * RECORDS_PER_BATCH * (double) valueBytes / 1e6 / seconds,
          acked * RECORDS_PER_BATCH,
          Long.parseLong(f[2]),
          f[3].equals("ok"),
          f.length > 4 ? f[4] : "");
    } finally {
      FileTrees.delete(dir);
    }
  }

  /** The count and bytes of the WAL files ({@code *.log}) in {@code dir}. */
  private static long[] walFiles(Path dir) throws IOException {
    long[] out = new long[2];
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        if (p.getFileName().toString().endsWith(".log")) {
          out[0]++;
          out[1] += Files.size(p);
        }
      }
    }
    return out;
  }

  private static StoreOptions options(Path dir, long boundBytes, boolean repairWal) {
    return StoreBenchmark.options(dir, StoreBenchmark.params(4, 15))
        .maxWalBytes(boundBytes)
        .repairWal(repairWal)
        .build();
  }

  /** Record {@code i}: its key (spread over the key order), version and value. */
  private static ReplicaRecord record(long i, int valueBytes) {
    byte[] value = new byte[valueBytes];
    new SplittableRandom(SEED + i).nextBytes(value);
    return ReplicaRecord.of(StoreBenchmark.key(i), value, version(i), ORIGIN);
  }

  private static long version(long i) {
    return HybridClock.version(1_700_000_000_000L, (int) (i & 0xffff));
  }

  /**
   * The writer: applies batch after batch until killed, printing the count of batches applied after
   * each ("open" first, once the store is open).
   */
  private static void write(Path dir, long boundBytes, int valueBytes, boolean repairWal) {
    PrintStream out = System.out;
    try (ReplicaStore store = ReplicaStore.open(options(dir, boundBytes, repairWal))) {
      out.println("open");
      out.flush();
      for (long b = 0; ; b++) {
        List<ReplicaRecord> batch = new ArrayList<>(RECORDS_PER_BATCH);
        for (int k = 0; k < RECORDS_PER_BATCH; k++) {
          batch.add(record(b * RECORDS_PER_BATCH + k, valueBytes));
        }
        ApplyOutcome o = store.apply(batch);
        if (o.applied() != RECORDS_PER_BATCH) {
          throw new IllegalStateException("batch " + b + ": " + o);
        }
        out.println(b + 1);
        out.flush();
      }
    }
  }

  /**
   * The new process: opens the store, then checks it against what was written and acknowledged.
   * Prints "OPEN_MS REBUILD_MS FOUND ok|wrong [PROBLEM]".
   */
  private static void open(
      Path dir, long boundBytes, int valueBytes, boolean repairWal, long acked) {
    RocksDbLibrary.load();
    long t0 = System.nanoTime();
    try (ReplicaStore store = ReplicaStore.open(options(dir, boundBytes, repairWal))) {
      double openMillis = (System.nanoTime() - t0) / 1e6;
      double rebuildMillis = store.stats().lastRebuildMillis();
      long limit = acked + (long) LEAD_BATCHES * RECORDS_PER_BATCH;
      long found = 0;
      long firstMissing = -1; // past the prefix found: nothing more may be there
      String problem = null;
      for (long i = 0; i < limit && problem == null; i++) {
        Optional<ReplicaRecord> got = store.get(StoreBenchmark.key(i));
        if (got.isEmpty()) {
          if (i < acked) {
            problem = "acknowledged record " + i + " is missing";
          } else if (firstMissing < 0) {
            firstMissing = i;
          }
          continue;
        }
        if (firstMissing >= 0) {
          problem = "record " + i + " is there but record " + firstMissing + " is not";
          break;
        }
        ReplicaRecord want = record(i, valueBytes);
        ReplicaRecord r = got.get();
        if (r.version() != want.version()
            || r.origin() != ORIGIN
            || r.tombstone()
            || !Arrays.equals(r.value(), want.value())) {
          problem = "record " + i + " differs from what was written";
        }
        found++;
      }
      if (problem == null && store.recordCount() != found) {
        problem = "the store counts " + store.recordCount() + " records, " + found + " found";
      }
      System.out.printf(
          "%.1f %.1f %d %s%s%n",
          openMillis,
          rebuildMillis,
          found,
          problem == null ? "ok" : "wrong",
          problem == null ? "" : " " + problem);
    }
  }
}
