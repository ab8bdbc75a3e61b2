package dev.reconcile.cli;

import dev.reconcile.cli.bench.ApplyBench;
import dev.reconcile.cli.bench.Bench;
import dev.reconcile.cli.bench.DiffBench;
import dev.reconcile.cli.bench.GossipReport;
import dev.reconcile.cli.bench.GossipSimulation;
import dev.reconcile.cli.bench.ProtocolBench;
import dev.reconcile.cli.replay.ProcessCluster;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code reconcile bench}: the end-to-end benchmark of the architecture's targets (protocol bytes
 * against a digest list and a Merkle tree, round latency vs n, repair stream rate, the one-shot
 * diff against sort + comm). See docs/benchmarks.md.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
      "Measures protocol bytes (in memory, real session, against a full digest list and a Merkle",
      "tree), round latency and repair stream rate (two agents on loopback), and the one-shot",
      "diff of two files against sort + comm (real processes). Writes CSV files and PNG plots",
      "into --out. See docs/benchmarks.md."
    })
final class BenchCommand implements Callable<Integer> {
  private static final Set<String> EXPERIMENTS =
      Set.of("protocol", "latency", "stream", "diff", "gossip", "socket", "catchup", "apply");

  @Spec CommandSpec spec;

  /** The catchup experiment's options. */
  @Mixin CatchupOptions catchup = new CatchupOptions();

  @Option(
      names = "--n",
      split = ",",
      paramLabel = "N",
      description = "elements per replica for the protocol grid (default: ${DEFAULT-VALUE})")
  List<Long> ns = List.of(100_000L, 1_000_000L);

  @Option(
      names = "--d",
      split = ",",
      paramLabel = "D",
      description = "differences for the protocol grid (default: ${DEFAULT-VALUE})")
  List<Long> ds = List.of(1L, 10L, 100L, 1_000L, 10_000L, 100_000L);

  @Option(names = "--trials", description = "trials per grid point (default: ${DEFAULT-VALUE})")
  int trials = 5;

  @Option(
      names = "--out",
      paramLabel = "DIR",
      description = "folder for CSV and PNG files (default: ${DEFAULT-VALUE})")
  Path outDir = Path.of("bench-out");

  @Option(
      names = "--work",
      paramLabel = "DIR",
      description =
          "scratch folder for the agents' RocksDB data, removed afterwards (default: OUT/work)")
  Path work;

  @Option(
      names = "--experiments",
      split = ",",
      description =
          "any of protocol, latency, stream, diff (runs the shaded jar), gossip (the cluster-mode"
              + " simulation), socket (protocol bytes between two agents through a byte-counting"
              + " proxy), catchup (cold agent processes), apply (the catch-up's records written in"
              + " one JVM: RocksDB, SST, store); diff, gossip, socket, catchup and apply are not"
              + " in the default (default: ${DEFAULT-VALUE})")
  List<String> experiments = List.of("protocol", "latency", "stream");

  @Option(
      names = "--gossip-n",
      split = ",",
      paramLabel = "N",
      description = "gossip simulation: replicas (default: ${DEFAULT-VALUE})")
  List<Integer> gossipNs = List.of(10, 100, 1000);

  @Option(
      names = "--gossip-write-intervals",
      description = "gossip simulation: intervals with writes (default: ${DEFAULT-VALUE})")
  int gossipWriteIntervals = 20;

  @Option(
      names = "--gossip-writes",
      description =
          "gossip simulation: writes per interval, at random replicas (default: ${DEFAULT-VALUE})")
  double gossipWrites = 2;

  @Option(
      names = "--gossip-loss",
      description = "gossip simulation: fraction of rounds lost (default: ${DEFAULT-VALUE})")
  double gossipLoss = 0.05;

  @Option(
      names = "--gossip-fanout",
      description = "gossip simulation: cluster-fanout (default: ${DEFAULT-VALUE})")
  int gossipFanout = 2;

  @Option(
      names = "--gossip-every",
      description =
          "gossip simulation: intervals per gossip interval (default: ${DEFAULT-VALUE}, 5m / 30s)")
  int gossipEvery = 10;

  @Option(
      names = "--gossip-max-sessions",
      description = "gossip simulation: max-sessions of every replica (default: ${DEFAULT-VALUE})")
  int gossipMaxSessions = 4;

  @Option(
      names = "--gossip-all-pairs-full-max",
      description =
          "gossip simulation: largest N at which all-pairs runs every session; above it its bytes"
              + " come from sampled sessions (default: ${DEFAULT-VALUE})")
  int gossipAllPairsFullMax = 100;

  @Option(
      names = "--partitions-log2",
      description = "protocol grid: log2 of partitions (default: ${DEFAULT-VALUE}, as the agent)")
  int partitionsLog2 = 4;

  @Option(
      names = "--iblt-max-log2",
      description =
          "protocol grid: log2 of the largest table per partition (default: ${DEFAULT-VALUE}, as the agent)")
  int ibltMaxLog2 = 15;

  @Option(
      names = "--socket-n",
      description = "socket experiment: records per agent (default: ${DEFAULT-VALUE})")
  long socketN = 20_000;

  @Option(
      names = "--socket-d",
      split = ",",
      paramLabel = "D",
      description = "socket experiment: differences (default: ${DEFAULT-VALUE})")
  List<Long> socketDs = List.of(1L, 10L, 100L, 1_000L, 10_000L);

  @Option(
      names = "--socket-rounds",
      description = "socket experiment: dry-run rounds per point (default: ${DEFAULT-VALUE})")
  int socketRounds = 5;

  @Option(
      names = "--rateless-log2",
      description =
          "protocol grid: log2 of the coded symbols maintained per partition in the rateless mode"
              + " (default: ${DEFAULT-VALUE}, as the agent)")
  int ratelessLog2 = 14;

  @Option(
      names = "--merkle-depth",
      description = "Merkle baseline depth (default: ${DEFAULT-VALUE}, as Cassandra)")
  int merkleDepth = 15;

  @Option(names = "--seed", description = "data seed (default: ${DEFAULT-VALUE})")
  long seed = 1;

  @Option(
      names = "--latency-n",
      split = ",",
      paramLabel = "N",
      description = "records per agent for the latency rounds (default: ${DEFAULT-VALUE})")
  List<Long> latencyNs = List.of(100_000L, 1_000_000L);

  @Option(
      names = "--latency-d",
      paramLabel = "D",
      description = "difference for the latency rounds (default: ${DEFAULT-VALUE})")
  long latencyD = 1000;

  @Option(
      names = "--latency-set",
      paramLabel = "KEY=VALUE",
      description =
          "extra agent config for the latency agents (repeatable), e.g. mode=estimator for the"
              + " estimator path")
  List<String> latencySets = List.of();

  @Option(
      names = "--rounds",
      description = "timed dry-run rounds per n (default: ${DEFAULT-VALUE})")
  int rounds = 40;

  @Option(
      names = "--warmup",
      description =
          "warm-up dry-run rounds per n, enough for the JIT to finish compiling the round's code"
              + " (default: ${DEFAULT-VALUE})")
  int warmup = 300;

  @Option(
      names = "--warmup-settle",
      description =
          "after --warmup, more warm-up rounds (at most 3000) until the JIT compiled for at most"
              + " 5 ms over this many rounds; 0: the fixed rounds only (default: ${DEFAULT-VALUE})")
  int warmupSettle = 50;

  @Option(
      names = "--stream-records",
      description = "records per stream trial with small values (default: ${DEFAULT-VALUE})")
  int streamRecords = 200_000;

  @Option(
      names = "--stream-value-bytes",
      description = "small value size (default: ${DEFAULT-VALUE})")
  int streamValueBytes = 100;

  @Option(
      names = "--stream-large-records",
      description = "records per stream trial with large values (default: ${DEFAULT-VALUE})")
  int streamLargeRecords = 4096;

  @Option(
      names = "--stream-large-value-bytes",
      description = "large value size (default: ${DEFAULT-VALUE})")
  int streamLargeValueBytes = 64 << 10;

  @Option(
      names = "--apply-trials",
      description =
          "apply: timed trials per mode and case, after one untimed run (default: ${DEFAULT-VALUE})")
  int applyTrials = 5;

  @Option(
      names = "--stream-trials",
      description = "trials per stream configuration (default: ${DEFAULT-VALUE})")
  int streamTrials = 3;

  @Option(
      names = "--stream-writes-per-second",
      description =
          "stream: a client writes new keys of 100 B to the receiving agent at this rate during an"
              + " idle second before each round and during the round, and the latency of its"
              + " writes goes to stream-writes.csv; 0 for none (default: ${DEFAULT-VALUE})")
  int streamWritesPerSecond = 0;

  @Option(
      names = "--stream-keys",
      description =
          "stream: the keys of each trial's new records: clustered (s<trial>-<i>: a trial's records"
              + " fall together in each partition's key order) or random (16 hex digits, a"
              + " bijective mix of trial and i: spread over the whole key order)"
              + " (default: ${DEFAULT-VALUE})")
  String streamKeys = "clustered";

  @Option(
      names = "--stream-set",
      paramLabel = "KEY=VALUE",
      description = "stream: extra agent config for both agents (repeatable)")
  List<String> streamSets = List.of();

  @Option(
      names = "--diff-lines",
      description = "diff: lines per side of the tsv dataset (default: ${DEFAULT-VALUE})")
  long diffLines = 1_000_000;

  @Option(
      names = "--diff-pypi-lines",
      description =
          "diff: lines per side of the gzipped pypi-gz dataset (default: ${DEFAULT-VALUE})")
  long diffPypiLines = 886_000;

  @Option(
      names = "--diff-datasets",
      split = ",",
      description = "diff: any of tsv, pypi-gz (default: ${DEFAULT-VALUE})")
  List<String> diffDatasets = List.of("tsv", "pypi-gz");

  @Option(
      names = "--diff-fraction",
      description = "diff: fraction of keys that differ (default: ${DEFAULT-VALUE})")
  double diffFraction = 0.01;

  @Option(
      names = "--diff-trials",
      description = "diff: timed runs of each command (default: ${DEFAULT-VALUE})")
  int diffTrials = 5;

  @Option(
      names = "--diff-launcher",
      paramLabel = "PATH",
      description =
          "diff: the launcher script to time beside java -jar (default: bin/reconcile of the"
              + " jar's source tree, if there; 'none' to skip)")
  String diffLauncher;

  @Override
  public Integer call() {
    return Commands.guarded(spec.commandLine().getErr(), this::run);
  }

  private int run() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Set<String> ex = new LinkedHashSet<>(experiments);
    for (String e : ex) {
      if (!EXPERIMENTS.contains(e)) {
        throw new CliException(
            "bench: unknown experiment '"
                + e
                + "' (expected protocol, latency, stream, diff, gossip, socket, catchup or"
                + " apply)");
      }
    }
    long[] n = positive("--n", ns);
    long[] d = positive("--d", ds);
    long[] ln = positive("--latency-n", latencyNs);
    if (trials < 1
        || rounds < 1
        || warmup < 0
        || warmupSettle < 0
        || streamTrials < 1
        || streamRecords < 1
        || streamLargeRecords < 1
        || streamValueBytes < 0
        || streamLargeValueBytes < 0
        || latencyD < 1) {
      throw new CliException(
          "bench: --trials, --rounds, --stream-* counts and --latency-d must be >= 1,"
              + " --warmup and --warmup-settle >= 0");
    }
    if (streamWritesPerSecond < 0 || streamWritesPerSecond > 100_000) {
      throw new CliException("bench: --stream-writes-per-second must be in [0, 100000]");
    }
    if (!streamKeys.equals("clustered") && !streamKeys.equals("random")) {
      throw new CliException(
          "bench: --stream-keys must be clustered or random, not '" + streamKeys + "'");
    }
    if (merkleDepth < 1 || merkleDepth > 24) {
      throw new CliException("bench: --merkle-depth must be in [1, 24]");
    }
    if (Arrays.stream(n).anyMatch(x -> x > 50_000_000L)) {
      throw new CliException("bench: --n above 50 000 000 is not supported in memory");
    }
    long t0 = System.nanoTime();
    // The experiments that run in this JVM on their own, before the agents' ones.
    if (ex.remove("apply")) {
      apply(out, err);
    }
    if (ex.remove("gossip")) {
      gossip(out, err);
    }
    if (ex.isEmpty()) {
      out.printf("bench finished in %s%n", Commands.seconds(System.nanoTime() - t0));
      out.flush();
      return 0;
    }
    Path work = this.work == null ? outDir.resolve("work") : this.work;
    DiffBench.Config diff = ex.contains("diff") ? diffConfig(work) : null;
    if (Files.exists(work) && !isEmptyDir(work)) {
      throw new CliException(
          "bench: scratch folder " + work + " exists and is not empty (remove it or pass --work)");
    }
    Bench.Config c =
        new Bench.Config(
            ex,
            new ProtocolBench.Config(
                n, d, trials, partitionsLog2, ibltMaxLog2, ratelessLog2, merkleDepth, seed),
            ln,
            latencyD,
            keyValues("--latency-set", latencySets),
            warmup,
            warmupSettle,
            rounds,
            streamRecords,
            streamValueBytes,
            streamLargeRecords,
            streamLargeValueBytes,
            streamTrials,
            streamWritesPerSecond,
            streamKeys.equals("random"),
            keyValues("--stream-set", streamSets),
            outDir,
            work,
            diff,
            socketN,
            positive("--socket-d", socketDs),
            socketRounds,
            ex.contains("catchup") ? catchup.configs(work, seed) : List.of());
    Bench.Result r;
    try {
      r =
          Bench.run(
              c,
              line -> {
                err.println("bench: " + line);
                err.flush();
              });
    } finally {
      if (this.work == null && isEmptyDir(work)) {
        Files.deleteIfExists(work);
      }
    }
    out.print(Bench.describe(r));
    out.printf("bench finished in %s%n", Commands.seconds(System.nanoTime() - t0));
    out.flush();
    return 0;
  }

  private DiffBench.Config diffConfig(Path work) {
    if (diffTrials < 1 || diffLines < 1 || diffPypiLines < 1) {
      throw new CliException("bench: --diff-trials and --diff-*lines must be >= 1");
    }
    if (!(diffFraction >= 0 && diffFraction <= 1)) {
      throw new CliException("bench: --diff-fraction must be in [0, 1]");
    }
    List<DiffBench.Dataset> sets = new java.util.ArrayList<>();
    for (String d : new LinkedHashSet<>(diffDatasets)) {
      switch (d) {
        case "tsv" -> sets.add(new DiffBench.Dataset("tsv", diffLines, false));
        case "pypi-gz" -> sets.add(new DiffBench.Dataset("pypi-gz", diffPypiLines, true));
        default ->
            throw new CliException(
                "bench: unknown diff dataset '" + d + "' (expected tsv or pypi-gz)");
      }
    }
    Path jar = ProcessCluster.locateJar();
    if (!Files.isRegularFile(jar)) {
      throw new CliException(
          "bench: the diff experiment runs the shaded jar, and there is none at "
              + jar
              + " (build it: ./mvnw -B -ntp -pl cli -am package -DskipTests)");
    }
    Path launcher = null;
    if (diffLauncher == null) {
      Path root = jar.toAbsolutePath().getParent();
      for (int i = 0; i < 2 && root != null; i++) {
        root = root.getParent();
      }
      Path l = root == null ? null : root.resolve("bin").resolve("reconcile");
      if (l != null && Files.isExecutable(l)) {
        launcher = l;
      }
    } else if (!diffLauncher.equals("none")) {
      launcher = Path.of(diffLauncher);
      if (!Files.isExecutable(launcher)) {
        throw new CliException("bench: --diff-launcher " + launcher + " is not executable");
      }
    }
    return new DiffBench.Config(sets, diffFraction, diffTrials, seed, jar, launcher, work, outDir);
  }

  /**
   * The apply ceiling ({@link ApplyBench}): the catch-up's two cases (--catchup-records x
   * --catchup-value-bytes, --catchup-large-records x --catchup-large-value-bytes) written in this
   * JVM by plain RocksDB, an SST file, and the store: without sketches, with them, and receiving
   * each partition as a load (ingested table files).
   */
  private void apply(PrintWriter out, PrintWriter err) throws Exception {
    if (applyTrials < 1 || catchup.records < 1 || catchup.largeRecords < 0) {
      throw new CliException("bench: --apply-trials and --catchup-records must be >= 1");
    }
    Files.createDirectories(outDir);
    Path work = outDir.resolve("apply-work");
    if (Files.exists(work) && !isEmptyDir(work)) {
      throw new CliException("bench: scratch folder " + work + " exists and is not empty");
    }
    List<ApplyBench.Config> configs = new ArrayList<>();
    int[][] cases = {
      {catchup.records, catchup.valueBytes}, {catchup.largeRecords, catchup.largeValueBytes}
    };
    for (int[] k : cases) {
      if (k[0] > 0) {
        // As many records as the sender's bulk batch holds: 16 000, or 1 MiB of them.
        int batch = (int) Math.max(1, Math.min(16_000, (1L << 20) / (k[1] + 40L)));
        configs.add(new ApplyBench.Config(k[0], k[1], batch, applyTrials, work, seed));
      }
    }
    List<ApplyBench.Summary> all;
    try {
      all =
          ApplyBench.runAll(
              configs,
              outDir,
              line -> {
                err.println("bench: " + line);
                err.flush();
              });
    } finally {
      if (isEmptyDir(work)) {
        Files.deleteIfExists(work);
      }
    }
    for (ApplyBench.Summary s : all) {
      out.printf(
          "apply %s %d records x %d B (one warm JVM, no network): median %.0f ms: %.0f records/s,"
              + " %.1f MB/s; %d/%d trials with equal contents%n",
          s.mode(),
          s.records(),
          s.valueBytes(),
          s.millisMedian(),
          s.recordsPerSecondMedian(),
          s.megabytesPerSecondMedian(),
          s.correctTrials(),
          s.trials());
    }
    out.printf(
        "wrote %s and %s%n",
        outDir.resolve("apply-trials.csv"), outDir.resolve("apply-ceiling.png"));
  }

  private void gossip(PrintWriter out, PrintWriter err) throws java.io.IOException {
    if (gossipNs.isEmpty() || gossipNs.stream().anyMatch(x -> x == null || x < 2 || x > 5000)) {
      throw new CliException("bench: --gossip-n needs replica counts in [2, 5000]");
    }
    if (gossipFanout < 1 || gossipEvery < 1 || gossipMaxSessions < 1 || gossipWriteIntervals < 1) {
      throw new CliException(
          "bench: --gossip-fanout, --gossip-every, --gossip-max-sessions and"
              + " --gossip-write-intervals must be >= 1");
    }
    if (!(gossipLoss >= 0 && gossipLoss < 1) || !(gossipWrites > 0)) {
      throw new CliException("bench: --gossip-loss must be in [0, 1), --gossip-writes > 0");
    }
    Files.createDirectories(outDir);
    GossipSimulation.Config c =
        new GossipSimulation.Config(
            gossipNs.stream().mapToInt(Integer::intValue).distinct().sorted().toArray(),
            gossipWriteIntervals,
            gossipWriteIntervals + 200,
            gossipWrites,
            gossipLoss,
            gossipFanout,
            gossipEvery,
            gossipMaxSessions,
            partitionsLog2,
            Math.min(ibltMaxLog2, 12),
            1000,
            gossipAllPairsFullMax,
            2000,
            true,
            seed);
    List<GossipSimulation.Row> rows =
        new GossipSimulation(c)
            .run(
                line -> {
                  err.println("bench: " + line);
                  err.flush();
                });
    GossipReport.write(rows, c, outDir);
    out.print(GossipReport.describe(rows));
    out.printf("gossip: gossip.csv, gossip-spread.png and gossip-cost.png in %s%n", outDir);
  }

  private static long[] positive(String flag, List<Long> xs) {
    if (xs.isEmpty() || xs.stream().anyMatch(x -> x == null || x < 1)) {
      throw new CliException(
          "bench: " + flag + " needs positive numbers, e.g. " + flag + " 1,10,100");
    }
    return xs.stream().mapToLong(Long::longValue).distinct().sorted().toArray();
  }

  private static boolean isEmptyDir(Path p) throws java.io.IOException {
    if (!Files.isDirectory(p)) {
      return false;
    }
    try (var s = Files.list(p)) {
      return s.findFirst().isEmpty();
    }
  }

  /** {@code KEY=VALUE} arguments of {@code option}, in order. */
  static Map<String, String> keyValues(String option, List<String> args) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String kv : args) {
      int eq = kv.indexOf('=');
      if (eq < 1) {
        throw new CliException("bench: " + option + " " + kv + " is not KEY=VALUE");
      }
      out.put(kv.substring(0, eq), kv.substring(eq + 1));
    }
    return out;
  }
}
