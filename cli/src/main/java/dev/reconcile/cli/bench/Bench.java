package dev.reconcile.cli.bench;

import dev.reconcile.cli.AgentJvm;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The end-to-end benchmark of docs/benchmarks.md behind {@code reconcile bench}: protocol bytes in
 * memory against two baselines ({@link ProtocolBench}), then round latency and repair stream rate
 * between two real agents on loopback ({@link AgentBench}), and the one-shot diff of two files
 * against sort + comm ({@link DiffBench}). CSV files and PNG plots go to one folder.
 */
public final class Bench {
  private Bench() {}

  /**
   * Which experiments to run ("protocol", "latency", "stream", "diff", "catchup") and their sizes.
   */
  public record Config(
      Set<String> experiments,
      ProtocolBench.Config protocol,
      long[] latencyNs,
      long latencyD,
      Map<String, String> latencySets,
      int warmupRounds,
      int warmupSettleRounds,
      int rounds,
      int streamRecords,
      int streamValueBytes,
      int streamLargeRecords,
      int streamLargeValueBytes,
      int streamTrials,
      int streamWritesPerSecond,
      boolean streamRandomKeys,
      Map<String, String> streamSets,
      Path out,
      Path work,
      DiffBench.Config diff,
      long socketN,
      long[] socketDs,
      int socketRounds,
      List<CatchupBench.Config> catchup) {}

  /** Everything measured, for the caller's summary. */
  public record Result(
      List<ProtocolBench.Summary> protocol,
      List<AgentBench.Latency> latency,
      List<StreamBench.StreamRate> stream,
      List<DiffBench.Summary> diff,
      List<CatchupBench.Summary> catchup,
      List<Path> files) {}

  public static Result run(Config c, Consumer<String> log) throws Exception {
    System.setProperty("java.awt.headless", "true");
    if (c.experiments().contains("latency") || c.experiments().contains("stream")) {
      List<String> missing =
          AgentJvm.missingFrom(ManagementFactory.getRuntimeMXBean().getInputArguments());
      if (!missing.isEmpty()) {
        log.accept(
            "warning: the latency and stream experiments run their agents in this JVM, which"
                + " lacks the agent's options "
                + String.join(" ", missing)
                + ": its figures are not an agent's (docs/benchmarks.md, \"How to run\")");
      }
    }
    Files.createDirectories(c.out());
    Files.createDirectories(c.work());
    List<Path> files = new ArrayList<>();
    List<ProtocolBench.Summary> protocol = List.of();
    List<AgentBench.Latency> latency = List.of();
    List<StreamBench.StreamRate> stream = new ArrayList<>();
    if (c.experiments().contains("protocol")) {
      protocol = ProtocolBench.run(c.protocol(), c.out(), log);
      files.add(c.out().resolve("protocol-trials.csv"));
      files.add(c.out().resolve("protocol-summary.csv"));
      int partitions = 1 << c.protocol().partitionsLog2();
      long[] ns = c.protocol().ns();
      for (long n : ns) {
        Path f = c.out().resolve("bytes-per-d-n" + n + ".png");
        Plots.bytesPerD(protocol, n, partitions, f);
        files.add(f);
      }
      Path r = c.out().resolve("ratio-to-8d.png");
      Plots.ratio(protocol, ns, r);
      files.add(r);
    }
    if (c.experiments().contains("latency")) {
      latency =
          AgentBench.latency(
              c.latencyNs(),
              c.latencyD(),
              c.latencySets(),
              c.warmupRounds(),
              c.warmupSettleRounds(),
              c.rounds(),
              c.work(),
              c.out(),
              log);
      files.add(c.out().resolve("latency-rounds.csv"));
      files.add(c.out().resolve("latency-summary.csv"));
      Path f = c.out().resolve("latency-vs-n.png");
      Plots.latency(latency, f);
      files.add(f);
    }
    if (c.experiments().contains("stream")) {
      try (Csv csv = StreamBench.streamCsv(c.out());
          Csv writes =
              c.streamWritesPerSecond() > 0 ? StreamBench.streamWritesCsv(c.out()) : null) {
        int[][] cases = {
          {c.streamRecords(), c.streamValueBytes()},
          {c.streamLargeRecords(), c.streamLargeValueBytes()}
        };
        for (int[] k : cases) {
          stream.add(
              StreamBench.stream(
                  k[0],
                  k[1],
                  c.streamTrials(),
                  c.work(),
                  csv,
                  c.streamWritesPerSecond(),
                  writes,
                  c.streamRandomKeys(),
                  c.streamSets(),
                  log));
        }
      }
      if (c.streamWritesPerSecond() > 0) {
        files.add(c.out().resolve("stream-writes.csv"));
      }
      try (Csv sum =
          new Csv(
              c.out().resolve("stream-summary.csv"),
              "records",
              "value_bytes",
              "trials",
              "records_per_s_median",
              "mb_per_s_median",
              "correct_trials")) {
        for (StreamBench.StreamRate s : stream) {
          sum.row(
              s.records(),
              s.valueBytes(),
              s.trials(),
              s.recordsPerSecondMedian(),
              s.megabytesPerSecondMedian(),
              s.correctTrials());
        }
      }
      files.add(c.out().resolve("stream-trials.csv"));
      files.add(c.out().resolve("stream-summary.csv"));
    }
    if (c.experiments().contains("socket")) {
      SocketBench.run(c.socketN(), c.socketDs(), c.socketRounds(), c.work(), c.out(), log);
      files.add(c.out().resolve("socket-rounds.csv"));
      files.add(c.out().resolve("socket-summary.csv"));
    }
    List<DiffBench.Summary> diff = List.of();
    if (c.experiments().contains("diff")) {
      diff = DiffBench.run(c.diff(), log);
      files.add(c.out().resolve("diff-trials.csv"));
      files.add(c.out().resolve("diff-summary.csv"));
      Path f = c.out().resolve("diff-vs-sort.png");
      Plots.diff(diff, f);
      files.add(f);
    }
    List<CatchupBench.Summary> catchup = new ArrayList<>();
    if (c.experiments().contains("catchup")) {
      try (Csv csv = CatchupBench.trialsCsv(c.out())) {
        for (CatchupBench.Config cc : c.catchup()) {
          catchup.add(CatchupBench.run(cc, csv, log));
        }
      }
      try (Csv sum =
          new Csv(
              c.out().resolve("catchup-summary.csv"),
              "records",
              "value_bytes",
              "source",
              "trials",
              "correct_trials",
              "wall_ms_median",
              "session_ms_median",
              "stream_ms_median",
              "records_per_s_median",
              "mb_per_s_median",
              "stream_records_per_s_median",
              "stream_mb_per_s_median",
              "new_cpu_s_median",
              "source_cpu_s_median")) {
        for (CatchupBench.Summary s : catchup) {
          sum.row(
              s.records(),
              s.valueBytes(),
              s.warmSource() ? "warm" : "cold",
              s.trials(),
              s.correctTrials(),
              s.wallMillisMedian(),
              s.sessionMillisMedian(),
              s.streamMillisMedian(),
              s.recordsPerSecondMedian(),
              s.megabytesPerSecondMedian(),
              s.streamRecordsPerSecondMedian(),
              s.streamMegabytesPerSecondMedian(),
              s.newCpuSecondsMedian(),
              s.sourceCpuSecondsMedian());
        }
      }
      files.add(c.out().resolve("catchup-trials.csv"));
      files.add(c.out().resolve("catchup-summary.csv"));
      Path f = c.out().resolve("catchup-vs-target.png");
      Plots.catchup(catchup, f);
      files.add(f);
    }
    return new Result(protocol, latency, stream, diff, catchup, files);
  }

  /** A plain-text summary of the medians, for the terminal. */
  public static String describe(Result r) {
    StringBuilder b = new StringBuilder();
    if (!r.protocol().isEmpty()) {
      b.append(
          String.format(
              Locale.ROOT,
              "%-10s %-9s %-15s %12s %9s %9s %6s %10s %9s %7s%n",
              "n",
              "d",
              "mode",
              "bytes",
              "bytes/d",
              "/(8d)",
              "RTT",
              "first-try",
              "fallback",
              "target"));
      for (ProtocolBench.Summary s : r.protocol()) {
        b.append(
            String.format(
                Locale.ROOT,
                "%-10d %-9d %-15s %12.0f %9.1f %9.2f %6.0f %10s %9d %7s%n",
                s.n(),
                s.d(),
                s.mode(),
                s.bytesMedian(),
                s.bytesPerD(),
                s.ratioTo8d(),
                s.roundTripsMedian(),
                s.tabledPartitions() == 0 ? "-" : s.firstTry() + "/" + s.tabledPartitions(),
                s.fallbacksAfterFailure(),
                Double.isNaN(s.targetBytes()) ? "" : s.meetsTarget() ? "met" : "MISSED"));
      }
    }
    for (AgentBench.Latency l : r.latency()) {
      b.append(
          String.format(
              Locale.ROOT,
              "latency n=%d d=%d: median %.1f ms wall, %.2f ms session over %d rounds%n",
              l.n(),
              l.d(),
              l.wallMillisMedian(),
              l.sessionMillisMedian(),
              l.rounds()));
    }
    if (r.latency().size() >= 2) {
      AgentBench.Latency lo = r.latency().get(0);
      AgentBench.Latency hi = r.latency().get(r.latency().size() - 1);
      b.append(
          String.format(
              Locale.ROOT,
              "latency ratio n=%d / n=%d: %.2f (target <= 1.5)%n",
              hi.n(),
              lo.n(),
              hi.wallMillisMedian() / lo.wallMillisMedian()));
    }
    for (StreamBench.StreamRate s : r.stream()) {
      b.append(
          String.format(
              Locale.ROOT,
              "stream %d records x %d B: median %.0f records/s, %.1f MB/s, %d/%d correct%n",
              s.records(),
              s.valueBytes(),
              s.recordsPerSecondMedian(),
              s.megabytesPerSecondMedian(),
              s.correctTrials(),
              s.trials()));
    }
    for (DiffBench.Summary s : r.diff()) {
      b.append(
          String.format(
              Locale.ROOT,
              "diff %s (%d lines, %d differing keys): %-13s median %6.0f ms, %.2f x sort+comm,"
                  + " %d/%d correct%s%n",
              s.dataset(),
              s.lines(),
              s.differences(),
              s.command(),
              s.wallMillisMedian(),
              s.ratio(),
              s.correctRuns(),
              s.trials(),
              Double.isNaN(s.maxRssMegabytesMedian())
                  ? ""
                  : String.format(Locale.ROOT, ", max RSS %.0f MB", s.maxRssMegabytesMedian())));
    }
    for (CatchupBench.Summary s : r.catchup()) {
      b.append(
          String.format(
              Locale.ROOT,
              "catchup %d records x %d B (%s): median round %.0f ms (session"
                  + " %.0f ms): %.0f records/s, %.1f MB/s; stream phase %.0f records/s, %.1f MB/s;"
                  + " CPU %.2f s new, %.2f s source; %d/%d trials with equal contents%n",
              s.records(),
              s.valueBytes(),
              s.warmSource()
                  ? "just-started new replica, source in service"
                  : "cold agent processes",
              s.wallMillisMedian(),
              s.sessionMillisMedian(),
              s.recordsPerSecondMedian(),
              s.megabytesPerSecondMedian(),
              s.streamRecordsPerSecondMedian(),
              s.streamMegabytesPerSecondMedian(),
              s.newCpuSecondsMedian(),
              s.sourceCpuSecondsMedian(),
              s.correctTrials(),
              s.trials()));
    }
    for (Path f : r.files()) {
      b.append("wrote ").append(f).append(System.lineSeparator());
    }
    return b.toString();
  }
}
