package dev.reconcile.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.reconcile.core.CellLayout;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.Sizing;
import dev.reconcile.core.SketchParams;
import java.io.IOException;
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
 * {@code reconcile estimate LEFT RIGHT}: the estimated difference and what reconciling it would
 * cost, from fingerprints and estimators only (no table is decoded). Per partition it plans what
 * the initiator of a session would: {@code cells = Sizing.cellsFor(ceil(d * sizingFactor))},
 * rounded up to an allowed shape, or the sorted digest list when the table would not fit or cost
 * more.
 */
@Command(
    name = "estimate",
    sortOptions = false,
    mixinStandardHelpOptions = true,
    description = {
      "Estimates the difference between two replicas and the cost of reconciling it, without decoding.",
      "Sides as for diff. Exit status: 0 same (every partition fingerprint equal), 1 different, 2 trouble."
    })
final class EstimateCommand implements Callable<Integer> {
  @ParentCommand ReconcileCommand parent;

  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "LEFT")
  String left;

  @Parameters(index = "1", paramLabel = "RIGHT")
  String right;

  @Option(
      names = "--format",
      defaultValue = "text",
      paramLabel = "FORMAT",
      description = "Output format: text or json (default: ${DEFAULT-VALUE}).")
  Format format;

  @Mixin InputOptions input;

  /** Output format of {@code estimate}. */
  enum Format {
    text,
    json
  }

  /** What the estimators say, summed over partitions. */
  record Plan(
      int partitions,
      int differing,
      long records,
      long estimate,
      long cellsWanted,
      long cells,
      long ibltBytes,
      long estimatorBytes,
      int fallbackPartitions,
      long digestBytes) {
    long totalBytes() {
      return ibltBytes
          + estimatorBytes
          + digestBytes
          + (long) partitions * 2 * Fingerprint.WIRE_BYTES;
    }
  }

  @Override
  public Integer call() {
    return Commands.guarded(spec.commandLine().getErr(), this::estimate);
  }

  private int estimate() throws IOException, FormatException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    SideSpec ls = SideSpec.parse(left);
    SideSpec rs = SideSpec.parse(right);
    EstimatorFactory estimators = parent.estimators();
    SketchParams params = input.params(estimators);
    Progress progress = Progress.forTerminal(err);
    Consumer<String> warn = m -> err.println("reconcile: warning: " + m);
    Plan plan;
    try (Side l = ls.open(input, progress, warn);
        Side r = rs.open(input, progress, warn)) {
      SideBySide<PartitionSketches, PartitionSketches> sk =
          SideBySide.run(
              () -> l.sketches(params, estimators), () -> r.sketches(params, estimators));
      plan = plan(sk.left(), sk.right());
    }
    if (format == Format.json) {
      JsonGenerator g =
          new JsonFactory().createGenerator(out).disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
      g.writeStartObject();
      g.writeStringField("left", left);
      g.writeStringField("right", right);
      g.writeNumberField("left_records", plan.records());
      g.writeNumberField("partitions", plan.partitions());
      g.writeNumberField("differing_partitions", plan.differing());
      g.writeNumberField("estimated_difference", plan.estimate());
      g.writeNumberField("iblt_cells_wanted", plan.cellsWanted());
      g.writeNumberField("iblt_cells", plan.cells());
      g.writeNumberField("iblt_bytes", plan.ibltBytes());
      g.writeNumberField("estimator_bytes", plan.estimatorBytes());
      g.writeNumberField("fallback_partitions", plan.fallbackPartitions());
      g.writeNumberField("digest_bytes", plan.digestBytes());
      g.writeNumberField("total_bytes", plan.totalBytes());
      g.writeEndObject();
      g.flush();
      out.println();
    } else {
      out.printf(
          "estimated difference: %d elements (%d of %d partitions differ)%n",
          plan.estimate(), plan.differing(), plan.partitions());
      out.printf(
          "IBLT: %d cells (%d wanted by the sizing rule before shape rounding), %d bytes%n",
          plan.cells(), plan.cellsWanted(), plan.ibltBytes());
      out.printf("estimators: %d bytes%n", plan.estimatorBytes());
      out.printf(
          "digest-list fallback: %d partitions, %d bytes%n",
          plan.fallbackPartitions(), plan.digestBytes());
      out.printf(
          "total: about %d bytes on the wire before any doubling (excluding handshake and results)%n",
          plan.totalBytes());
    }
    out.flush();
    return plan.differing() == 0 ? ReconcileCommand.SAME : ReconcileCommand.DIFFERENT;
  }

  /** Plans each partition as the session's initiator would, without building any table. */
  static Plan plan(PartitionSketches l, PartitionSketches r) throws FormatException {
    SketchParams params = l.params();
    int differing = 0;
    int fallbacks = 0;
    long records = 0;
    long estimate = 0;
    long wanted = 0;
    long cells = 0;
    long estimatorBytes = 0;
    long digestBytes = 0;
    for (int p = 0; p < params.partitions(); p++) {
      Fingerprint fl = l.fingerprint(p);
      Fingerprint fr = r.fingerprint(p);
      records += fl.count();
      if (fl.equals(fr)) {
        continue;
      }
      differing++;
      DifferenceEstimator el = l.estimator(p);
      DifferenceEstimator er = r.estimator(p);
      long d = el.estimate(er.toProto()).value();
      estimate += d;
      if (fl.count() * 8 <= er.wireBytes()) {
        // The responder asks for the initiator's list outright when it is smaller than an
        // estimator.
        fallbacks++;
        digestBytes += fl.count() * 8;
        continue;
      }
      estimatorBytes += er.wireBytes();
      long planned = Math.max(1, (long) Math.ceil(d * el.sizingFactor()));
      long want = Sizing.cellsFor(planned);
      IbltShape shape = params.shapeWithAtLeast(want);
      if (shape == null || shape.cells() * CellLayout.WIDE.cellBytes() >= fl.count() * 8) {
        fallbacks++;
        digestBytes += fl.count() * 8;
      } else {
        wanted += want;
        cells += shape.cells();
      }
    }
    return new Plan(
        params.partitions(),
        differing,
        records,
        estimate,
        wanted,
        cells,
        cells * CellLayout.WIDE.cellBytes(),
        estimatorBytes,
        fallbacks,
        digestBytes);
  }
}
