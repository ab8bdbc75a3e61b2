package dev.reconcile.cli.bench;

import java.nio.file.Path;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The gossip simulation's outputs: gossip.csv, the spread and cost plots, and a text summary. */
public final class GossipReport {
  private GossipReport() {}

  /** Writes gossip.csv and the two plots into {@code out}. */
  public static void write(List<GossipSimulation.Row> rows, GossipSimulation.Config c, Path out) {
    try (Csv csv =
        new Csv(
            out.resolve("gossip.csv"),
            "policy",
            "n",
            "writes",
            "unspread",
            "spread_median",
            "spread_p90",
            "spread_max",
            "rounds_per_replica_interval",
            "bytes_per_replica_interval",
            "refused_per_replica_interval",
            "lost_per_replica_interval",
            "bytes_per_round",
            "intervals",
            "sampled",
            "seconds")) {
      for (GossipSimulation.Row r : rows) {
        csv.row(
            r.policy(),
            r.n(),
            r.writes(),
            r.unspread(),
            r.spreadMedian(),
            r.spreadP90(),
            r.spreadMax(),
            r.roundsPerReplica(),
            r.bytesPerReplica(),
            r.refusedPerReplica(),
            r.lostPerReplica(),
            r.bytesPerRound(),
            r.intervals(),
            r.sampled(),
            r.seconds());
      }
    }
    plotSpread(rows, c, out.resolve("gossip-spread.png"));
    plotCost(rows, c, out.resolve("gossip-cost.png"));
  }

  private static XYChart chart(String title, String x, String y) {
    XYChart c =
        new XYChartBuilder()
            .width(900)
            .height(560)
            .title(title)
            .xAxisTitle(x)
            .yAxisTitle(y)
            .build();
    c.getStyler().setLegendPosition(LegendPosition.InsideNW).setMarkerSize(7);
    c.getStyler().setXAxisLogarithmic(true);
    return c;
  }

  private static double[] xs(List<GossipSimulation.Row> rs) {
    return rs.stream().mapToDouble(GossipSimulation.Row::n).toArray();
  }

  private static void plotSpread(
      List<GossipSimulation.Row> rows, GossipSimulation.Config c, Path file) {
    XYChart ch =
        chart(
            String.format(
                "Intervals until every replica holds a write (fanout %d, %.0f%% rounds lost)",
                c.fanout(), 100 * c.loss()),
            "N (replicas)",
            "intervals");
    List<GossipSimulation.Row> cl =
        rows.stream().filter(r -> r.policy().equals("cluster")).toList();
    List<GossipSimulation.Row> ap =
        rows.stream().filter(r -> r.policy().equals("all-pairs")).toList();
    if (!cl.isEmpty()) {
      ch.addSeries(
          "cluster mode: median",
          xs(cl),
          cl.stream().mapToDouble(GossipSimulation.Row::spreadMedian).toArray());
      ch.addSeries(
          "cluster mode: max",
          xs(cl),
          cl.stream().mapToDouble(GossipSimulation.Row::spreadMax).toArray());
      double[] lg = cl.stream().mapToDouble(r -> Math.log(r.n()) / Math.log(2)).toArray();
      ch.addSeries("log2 N", xs(cl), lg).setMarker(SeriesMarkers.NONE);
    }
    if (!ap.isEmpty()) {
      ch.addSeries(
          "all pairs: max",
          xs(ap),
          ap.stream().mapToDouble(GossipSimulation.Row::spreadMax).toArray());
    }
    save(ch, file);
  }

  private static void plotCost(
      List<GossipSimulation.Row> rows, GossipSimulation.Config c, Path file) {
    XYChart ch =
        chart(
            String.format(
                "Protocol bytes per replica per interval (%.1f writes per interval)",
                c.writesPerInterval()),
            "N (replicas)",
            "bytes (log)");
    ch.getStyler().setYAxisLogarithmic(true);
    for (String p : List.of("cluster", "all-pairs")) {
      List<GossipSimulation.Row> rs = rows.stream().filter(r -> r.policy().equals(p)).toList();
      if (!rs.isEmpty()) {
        ch.addSeries(
            p.equals("cluster") ? "cluster mode" : "all pairs",
            xs(rs),
            rs.stream().mapToDouble(GossipSimulation.Row::bytesPerReplica).toArray());
      }
    }
    save(ch, file);
  }

  private static void save(XYChart c, Path file) {
    try {
      BitmapEncoder.saveBitmap(c, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("cannot write " + file, e);
    }
  }

  /** The table of docs/benchmarks.md. */
  public static String describe(List<GossipSimulation.Row> rows) {
    StringBuilder b = new StringBuilder();
    b.append(
        "| policy | N | writes | spread median | spread p90 | spread max | rounds / replica / interval"
            + " | refused | lost | protocol bytes / replica / interval | bytes / round |\n");
    b.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (GossipSimulation.Row r : rows) {
      b.append(
          String.format(
              "| %s | %,d | %d%s | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %,.0f%s | %,.0f |%n",
              r.policy(),
              r.n(),
              r.writes(),
              r.unspread() > 0 ? " (" + r.unspread() + " not spread)" : "",
              r.spreadMedian(),
              r.spreadP90(),
              r.spreadMax(),
              r.roundsPerReplica(),
              r.refusedPerReplica(),
              r.lostPerReplica(),
              r.bytesPerReplica(),
              r.sampled() ? " (sampled)" : "",
              r.bytesPerRound()));
    }
    return b.toString();
  }
}
