package dev.reconcile.cli;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.SketchParams;
import java.util.function.Consumer;

/** A side whose records are read into memory ({@link RecordTable}) and sketched there. */
final class RecordSide implements Side {
  private final String label;
  private final RecordSource source;
  private final Progress progress;
  private final Consumer<String> warn;
  private RecordTable table;

  RecordSide(String label, RecordSource source, Progress progress, Consumer<String> warn) {
    this.label = label;
    this.source = source;
    this.progress = progress;
    this.warn = warn;
  }

  @Override
  public String label() {
    return label;
  }

  @Override
  public PartitionSketches sketches(SketchParams params, EstimatorFactory estimators) {
    table = new RecordTable(params.spec());
    try {
      source.readInto(table, progress);
    } finally {
      progress.finished(label);
    }
    table.dedupe(label, warn);
    return table.sketches(params, estimators);
  }

  @Override
  public KeyList keysOf(long[] sortedElements) {
    return table.keysOf(sortedElements);
  }

  @Override
  public String describe() {
    if (table == null) {
      return label + ": not read";
    }
    StringBuilder sb = new StringBuilder();
    sb.append(label).append(": ").append(table.size()).append(" keys");
    if (table.duplicateLines() > 0) {
      sb.append(", ").append(table.duplicateLines()).append(" records dropped for a repeated key");
    }
    if (table.conflictingKeys() > 0) {
      sb.append(", ")
          .append(table.conflictingKeys())
          .append(" keys with several values (last wins)");
    }
    return sb.append(", ").append(table.bytes()).append(" bytes of keys and values").toString();
  }

  @Override
  public void close() {
    table = null;
  }
}
