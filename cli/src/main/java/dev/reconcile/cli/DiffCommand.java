package dev.reconcile.cli;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.OutcomeSummary;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.SessionStats;
import dev.reconcile.core.SketchParams;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code reconcile diff LEFT RIGHT}: the keys that differ between two replicas, found with the
 * reconciliation protocol (initiator on LEFT, responder on RIGHT) and mapped back to keys.
 */
@Command(
    name = "diff",
    sortOptions = false,
    mixinStandardHelpOptions = true,
    description = {
      "Lists the keys that differ between two replicas, found with the reconciliation protocol.",
      "A side is file:PATH (lines KEY or KEY<TAB>VALUE, .gz read transparently) or rocksdb:PATH"
          + " (a plain key-value RocksDB, opened read-only).",
      "Output, sorted by key: '< KEY' only on the left, '> KEY' only on the right,"
          + " '! KEY' on both with different values. A summary goes to stderr.",
      "Exit status: 0 same, 1 different, 2 trouble."
    })
final class DiffCommand implements Callable<Integer> {
  @ParentCommand ReconcileCommand parent;

  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "LEFT", description = "Left side (initiator).")
  String left;

  @Parameters(index = "1", paramLabel = "RIGHT", description = "Right side (responder).")
  String right;

  @Option(
      names = "--format",
      defaultValue = "text",
      paramLabel = "FORMAT",
      description = "Output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  DiffWriter.Format format;

  @Option(
      names = {"-q", "--quiet"},
      description = "No summary on stderr.")
  boolean quiet;

  @Mixin InputOptions input;

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    return Commands.guarded(err, this::diff);
  }

  private int diff() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    long t0 = System.nanoTime();
    SideSpec ls = SideSpec.parse(left);
    SideSpec rs = SideSpec.parse(right);
    EstimatorFactory estimators = parent.estimators();
    SketchParams params = input.params(estimators);
    Progress progress = Progress.forTerminal(err);
    Consumer<String> warn = m -> err.println("reconcile: warning: " + m);
    try (Side l = ls.open(input, progress, warn);
        Side r = rs.open(input, progress, warn)) {
      SideBySide<PartitionSketches, PartitionSketches> sk =
          SideBySide.run(
              () -> l.sketches(params, estimators), () -> r.sketches(params, estimators));
      long t2 = System.nanoTime();
      LocalReconciliation rec = LocalReconciliation.run(sk.left(), sk.right());
      long t3 = System.nanoTime();
      long[] leftOnly = rec.leftOnly();
      long[] rightOnly = rec.rightOnly();
      SideBySide<KeyList, KeyList> keys =
          SideBySide.run(() -> l.keysOf(leftOnly), () -> r.keysOf(rightOnly));
      DiffWriter w = DiffWriter.of(format, out, left, right);
      long[] counts = merge(keys.left(), keys.right(), w);
      w.finish(counts[0], counts[1], counts[2]);
      if (out.checkError()) {
        throw new CliException("standard output: write error");
      }
      long t4 = System.nanoTime();
      if (!quiet) {
        summary(err, l, r, rec, counts, sk, new long[] {t0, t2, t3, t4});
      }
      return counts[0] + counts[1] + counts[2] == 0
          ? ReconcileCommand.SAME
          : ReconcileCommand.DIFFERENT;
    }
  }

  /** Merges two sorted key lists; a key on both sides is '!'. Returns counts of <, >, !. */
  static long[] merge(KeyList lk, KeyList rk, DiffWriter w) {
    long[] c = new long[3];
    int i = 0;
    int j = 0;
    while (i < lk.size() || j < rk.size()) {
      int cmp = i == lk.size() ? 1 : j == rk.size() ? -1 : lk.compare(i, rk, j);
      if (cmp < 0) {
        w.entry(DiffWriter.LEFT, lk, i++);
        c[0]++;
      } else if (cmp > 0) {
        w.entry(DiffWriter.RIGHT, rk, j++);
        c[1]++;
      } else {
        w.entry(DiffWriter.BOTH, lk, i++);
        j++;
        c[2]++;
      }
    }
    return c;
  }

  private static void summary(
      PrintWriter err,
      Side l,
      Side r,
      LocalReconciliation rec,
      long[] c,
      SideBySide<PartitionSketches, PartitionSketches> sk,
      long[] t) {
    OutcomeSummary o = OutcomeSummary.of(rec.outcomes());
    SessionStats s = rec.stats();
    long cells = s.ibltCells();
    err.println("reconcile: " + l.describe());
    err.println("reconcile: " + r.describe());
    err.printf(
        "reconcile: keys: %d only left (<), %d only right (>), %d changed (!)%n", c[0], c[1], c[2]);
    err.printf(
        "reconcile: elements: d = %d actual, %s estimated; partitions: %d equal (fast path), %d IBLT,"
            + " %d fallback%n",
        o.difference(),
        o.estimated() == 0 ? "none" : Long.toString(o.estimate()),
        o.fastPath(),
        o.iblt(),
        o.fallback());
    err.printf(
        "reconcile: IBLT: %d cells in the decoding tables, %d doublings, %d failed decodes,"
            + " %d digest-list fallbacks%n",
        cells, s.doublings(), s.decodeFailures(), s.fallbacks());
    err.printf(
        "reconcile: protocol: %d bytes (handshake %d, fingerprints %d, estimators %d, IBLT %d,"
            + " digests %d, results %d), %d frames, %d round trips%n",
        s.protocolBytes(),
        s.handshakeBytes(),
        s.fingerprintBytes(),
        s.estimatorBytes(),
        s.ibltBytes(),
        s.digestBytes(),
        s.resultBytes(),
        s.framesSent() + s.framesReceived(),
        s.roundTrips());
    err.printf(
        "reconcile: time: left %s, right %s (read and sketch, at once), reconcile %s, keys and"
            + " output %s, total %s%n",
        Commands.seconds(sk.leftNanos()),
        Commands.seconds(sk.rightNanos()),
        Commands.seconds(t[2] - t[1]),
        Commands.seconds(t[3] - t[2]),
        Commands.seconds(t[3] - t[0]));
    err.flush();
  }
}
