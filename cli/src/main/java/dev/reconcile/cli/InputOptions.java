package dev.reconcile.cli;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.SketchParams;
import picocli.CommandLine.Option;

/** Options shared by the commands that compare two local sides ({@code diff}, {@code estimate}). */
final class InputOptions {
  @Option(
      names = "--seed",
      defaultValue = "0",
      paramLabel = "N",
      description = "Hash seed, the same on both sides (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--partitions-log2",
      defaultValue = "4",
      paramLabel = "B",
      description =
          "Split the keys into 2^B partitions by key hash (0..16, default: ${DEFAULT-VALUE}).")
  int partitionsLog2;

  @Option(
      names = "--iblt-max-log2",
      defaultValue = "16",
      paramLabel = "B",
      description =
          "Largest IBLT per partition: 3 x 2^B cells (2..22, default: ${DEFAULT-VALUE}); beyond it a"
              + " partition falls back to exchanging its sorted digest list.")
  int ibltMaxLog2;

  @Option(
      names = "--strip-trailing-cr",
      description = "file: sides: drop one CR at the end of each line (CRLF files).")
  boolean stripTrailingCr;

  SketchParams params(EstimatorFactory estimators) {
    try {
      return new SketchParams(
          HashSpec.xxh3(seed), partitionsLog2, 3, ibltMaxLog2, estimators.params());
    } catch (IllegalArgumentException e) {
      throw new CliException(e.getMessage());
    }
  }
}
