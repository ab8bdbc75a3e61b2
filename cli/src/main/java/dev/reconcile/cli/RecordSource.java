package dev.reconcile.cli;

/** Something that can feed records into a {@link RecordTable}: a text file or a plain RocksDB. */
interface RecordSource {
  /**
   * Reads every record into {@code table}; throws {@link CliException} naming the input on trouble.
   */
  void readInto(RecordTable table, Progress progress);
}
