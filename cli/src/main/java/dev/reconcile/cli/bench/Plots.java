package dev.reconcile.cli.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** PNG plots of the benchmark (XChart, headless). */
final class Plots {
  private Plots() {}

  private static final Map<String, String> LABELS =
      Map.of(
          "rateless", "reconcile, rateless (default)",
          "estimator", "reconcile, tug-of-war estimator + IBLT",
          "strata", "reconcile (strata estimator + IBLT)",
          "oracle", "reconcile, d known (IBLT only)",
          "digest-list", "full sorted digest list",
          "merkle-topdown", "Merkle tree, top-down",
          "merkle-full", "Merkle tree, full (Cassandra)");

  /** Protocol bytes per difference vs d (log-log), one series per mode, for one n. */
  static void bytesPerD(List<ProtocolBench.Summary> all, long n, int partitions, Path file) {
    XYChart c =
        chart(
            "Protocol bytes per difference, n = "
                + String.format("%,d", n)
                + " per replica, "
                + partitions
                + " partitions",
            "d (elements differing)",
            "bytes / d");
    c.getStyler().setXAxisLogarithmic(true).setYAxisLogarithmic(true);
    for (String mode : ProtocolBench.MODES) {
      List<ProtocolBench.Summary> s =
          all.stream().filter(x -> x.n() == n && x.mode().equals(mode)).toList();
      if (s.isEmpty()) {
        continue;
      }
      c.addSeries(
          LABELS.get(mode),
          s.stream().mapToDouble(ProtocolBench.Summary::d).toArray(),
          s.stream().mapToDouble(ProtocolBench.Summary::bytesPerD).toArray());
    }
    addFlat(c, all, n, "8 B (d x 8 B)", 8);
    save(c, file);
  }

  /** Protocol bytes over d x 8 B vs d, for the reconcile modes, with the 3x and 6x targets. */
  static void ratio(List<ProtocolBench.Summary> all, long[] ns, Path file) {
    XYChart c = chart("Protocol bytes / (d x 8 B)", "d (elements differing)", "ratio");
    c.getStyler().setXAxisLogarithmic(true).setYAxisLogarithmic(true);
    for (long n : ns) {
      for (String mode : List.of("rateless", "estimator", "strata", "oracle")) {
        List<ProtocolBench.Summary> s =
            all.stream().filter(x -> x.n() == n && x.mode().equals(mode)).toList();
        if (s.isEmpty()) {
          continue;
        }
        c.addSeries(
            LABELS.get(mode) + ", n = " + String.format("%,d", n),
            s.stream().mapToDouble(ProtocolBench.Summary::d).toArray(),
            s.stream().mapToDouble(ProtocolBench.Summary::ratioTo8d).toArray());
      }
    }
    long nMax = ns[ns.length - 1];
    List<ProtocolBench.Summary> strata =
        all.stream().filter(x -> x.n() == nMax && x.mode().equals("estimator")).toList();
    if (!strata.isEmpty()) {
      double[] ds = strata.stream().mapToDouble(ProtocolBench.Summary::d).toArray();
      XYSeries t6 =
          c.addSeries(
              "target: 6 x d x 8 B + estimator",
              ds,
              strata.stream().mapToDouble(s -> s.targetBytes() / (8.0 * s.d())).toArray());
      t6.setMarker(SeriesMarkers.NONE);
      XYSeries t3 =
          c.addSeries(
              "target: 3 x d x 8 B + 1 KiB (rateless)",
              ds,
              strata.stream()
                  .mapToDouble(s -> ProtocolBench.targetBytes(false, s.d(), 0) / (8.0 * s.d()))
                  .toArray());
      t3.setMarker(SeriesMarkers.NONE);
    }
    save(c, file);
  }

  /** Median session latency vs n. */
  static void latency(List<AgentBench.Latency> ls, Path file) {
    XYChart c =
        chart(
            "Round latency excluding the repair stream, d = "
                + (ls.isEmpty() ? "?" : String.format("%,d", ls.get(0).d()))
                + ", loopback",
            "n (records per replica)",
            "median milliseconds");
    c.getStyler().setXAxisLogarithmic(true);
    if (!ls.isEmpty()) {
      double[] x = ls.stream().mapToDouble(AgentBench.Latency::n).toArray();
      c.addSeries(
          "dry-run round, wall clock",
          x,
          ls.stream().mapToDouble(AgentBench.Latency::wallMillisMedian).toArray());
      c.addSeries(
          "session phase (agent report)",
          x,
          ls.stream().mapToDouble(AgentBench.Latency::sessionMillisMedian).toArray());
      XYSeries t =
          c.addSeries("target 10 ms", new double[] {x[0], x[x.length - 1]}, new double[] {10, 10});
      t.setMarker(SeriesMarkers.NONE);
    }
    save(c, file);
  }

  /**
   * Median wall time of each command per dataset (bars), the ratio to sort + comm in the legend of
   * each reconcile command.
   */
  static void diff(List<DiffBench.Summary> all, Path file) {
    CategoryChart c =
        categoryChart(
            "One-shot diff of two files: median wall time (real processes)",
            "dataset (lines per side)",
            "seconds");
    List<String> datasets =
        all.stream()
            .map(s -> s.dataset() + " (" + String.format("%,d", s.lines()) + ")")
            .distinct()
            .toList();
    for (String command : all.stream().map(DiffBench.Summary::command).distinct().toList()) {
      List<Double> ys = new java.util.ArrayList<>();
      StringBuilder name = new StringBuilder(command);
      for (String d : datasets) {
        DiffBench.Summary s =
            all.stream()
                .filter(
                    x ->
                        x.command().equals(command)
                            && d.equals(x.dataset() + " (" + String.format("%,d", x.lines()) + ")"))
                .findFirst()
                .orElse(null);
        ys.add(s == null ? 0.0 : s.wallMillisMedian() / 1000);
        if (s != null && !command.equals(DiffBench.BASELINE)) {
          name.append(String.format(java.util.Locale.ROOT, ", %.2f x", s.ratio()));
        }
      }
      c.addSeries(name.toString(), datasets, ys);
    }
    save(c, file);
  }

  /**
   * Each catch-up case's medians over the targets (1.0 = met): records/s for small values
   * (200 000 for the round, 300 000 for the stream phase), MB/s for large ones (400 and 500).
   */
  static void catchup(List<CatchupBench.Summary> all, Path file) {
    CategoryChart c =
        categoryChart(
            "Catch-up of an empty replica, separate agent processes"
                + (all.stream().allMatch(CatchupBench.Summary::warmSource)
                    ? " (source in service)"
                    : "")
                + ": median / target",
            "records x value size (target: records/s up to 1 KiB, MB/s above)",
            "median / target (1.0 = target met)");
    List<String> cases = all.stream().map(s -> caseLabel(s.records(), s.valueBytes())).toList();
    List<Double> round = new java.util.ArrayList<>();
    List<Double> stream = new java.util.ArrayList<>();
    for (CatchupBench.Summary s : all) {
      round.add(
          overTarget(
              s.valueBytes(),
              s.recordsPerSecondMedian(),
              s.megabytesPerSecondMedian(),
              CatchupBench.ROUND_RECORDS_PER_S_TARGET,
              CatchupBench.ROUND_MB_PER_S_TARGET));
      stream.add(
          overTarget(
              s.valueBytes(),
              s.streamRecordsPerSecondMedian(),
              s.streamMegabytesPerSecondMedian(),
              CatchupBench.STREAM_RECORDS_PER_S_TARGET,
              CatchupBench.STREAM_MB_PER_S_TARGET));
    }
    // The scale always reaches the target, so that the distance to it shows.
    c.getStyler()
        .setYAxisMin(0.0)
        .setYAxisMax(
            Math.max(
                1.0,
                java.util.stream.Stream.concat(round.stream(), stream.stream())
                    .mapToDouble(Double::doubleValue)
                    .max()
                    .orElse(1.0)));
    c.addSeries("whole round (POST /repair)", cases, round);
    c.addSeries("stream phase (round minus session)", cases, stream);
    save(c, file);
  }

  /**
   * The apply ceiling: each mode's median over the catch-up's stream-phase target (records/s for
   * small values, MB/s above 1 KiB), per case.
   */
  static void apply(List<ApplyBench.Summary> all, Path file) {
    CategoryChart c =
        categoryChart(
            "Writing a catch-up's records, one warm JVM, no network: median / stream target",
            "records x value size (target: 300 000 records/s up to 1 KiB, 500 MB/s above)",
            "median / stream-phase target (1.0 = target)");
    // Summaries come case by case, each with every mode once: one mode's are the cases, in order.
    List<String> cases =
        all.stream()
            .filter(s -> s.mode().equals(ApplyBench.MODES.get(0)))
            .map(s -> caseLabel(s.records(), s.valueBytes()))
            .toList();
    double max = 1.0;
    for (String mode : ApplyBench.MODES) {
      List<Double> ys =
          all.stream()
              .filter(s -> s.mode().equals(mode))
              .map(
                  s ->
                      overTarget(
                          s.valueBytes(),
                          s.recordsPerSecondMedian(),
                          s.megabytesPerSecondMedian(),
                          CatchupBench.STREAM_RECORDS_PER_S_TARGET,
                          CatchupBench.STREAM_MB_PER_S_TARGET))
              .toList();
      max = Math.max(max, ys.stream().mapToDouble(Double::doubleValue).max().orElse(1.0));
      c.addSeries(mode, cases, ys);
    }
    c.getStyler().setYAxisMin(0.0).setYAxisMax(max);
    save(c, file);
  }

  /** A catch-up case on a category axis: {@code 200,000 x 100 B}. */
  private static String caseLabel(int records, int valueBytes) {
    return String.format("%,d x %,d B", records, valueBytes);
  }

  /**
   * A rate over its target: records/s for values up to 1 KiB (where the count of records is what
   * costs), MB/s above.
   */
  private static double overTarget(
      int valueBytes, double recordsPerS, double mbPerS, double recordsTarget, double mbTarget) {
    return valueBytes <= 1024 ? recordsPerS / recordsTarget : mbPerS / mbTarget;
  }

  private static void addFlat(
      XYChart c, List<ProtocolBench.Summary> all, long n, String name, double y) {
    double[] ds =
        all.stream()
            .filter(x -> x.n() == n)
            .mapToDouble(ProtocolBench.Summary::d)
            .distinct()
            .sorted()
            .toArray();
    if (ds.length == 0) {
      return;
    }
    double lo = ds[0];
    double hi = ds[ds.length - 1] == lo ? lo * 10 : ds[ds.length - 1];
    XYSeries s = c.addSeries(name, new double[] {lo, hi}, new double[] {y, y});
    s.setMarker(SeriesMarkers.NONE);
  }

  private static XYChart chart(String title, String x, String y) {
    XYChart c =
        new XYChartBuilder()
            .width(900)
            .height(640)
            .title(title)
            .xAxisTitle(x)
            .yAxisTitle(y)
            .build();
    c.getStyler().setLegendPosition(LegendPosition.OutsideS).setMarkerSize(7);
    return c;
  }

  private static CategoryChart categoryChart(String title, String x, String y) {
    CategoryChart c =
        new CategoryChartBuilder()
            .width(900)
            .height(640)
            .title(title)
            .xAxisTitle(x)
            .yAxisTitle(y)
            .build();
    c.getStyler().setLegendPosition(LegendPosition.OutsideS);
    return c;
  }

  private static void save(Chart<?, ?> c, Path file) {
    try {
      BitmapEncoder.saveBitmap(c, file.toString().replaceAll("\\.png$", ""), BitmapFormat.PNG);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
