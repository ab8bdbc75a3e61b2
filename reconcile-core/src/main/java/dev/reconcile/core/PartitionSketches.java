package dev.reconcile.core;

/**
 * The local side of a reconciliation: per-partition sketches and element lookups. The agent backs
 * it with RocksDB and sketches kept current on every write; the CLI and tests back it with memory
 * ({@link MemorySketches}).
 */
public interface PartitionSketches {
  SketchParams params();

  Fingerprint fingerprint(int partition);

  /** A copy of the partition's estimator, safe to serialize while writes go on. */
  DifferenceEstimator estimator(int partition);

  /** A new table of {@code shape} for the partition, folded from the maintained one. */
  Iblt iblt(int partition, IbltShape shape);

  /** A table folded for a session, and the partition's fingerprint as of the same instant. */
  record FoldedTable(Iblt table, Fingerprint fingerprint) {}

  /**
   * {@link #iblt} and the partition's fingerprint as of the same instant: the table a decode is
   * made of and the fingerprint it is checked against (TableExchange). A store written concurrently
   * must read both under one lock; the default reads {@link #fingerprint} and then folds, which is
   * exact only while nothing writes (a write in between makes the check fail, and the session then
   * looks the decoded elements up instead).
   */
  default FoldedTable foldWithFingerprint(int partition, IbltShape shape) {
    Fingerprint f = fingerprint(partition);
    return new FoldedTable(iblt(partition, shape), f);
  }

  /**
   * A copy of the partition's maintained coded symbols (the first {@code 2^ratelessLog2} of its
   * rateless stream), or null when this side maintains none: the session then does not offer the
   * rateless mode.
   */
  default CodedSymbols symbols(int partition) {
    return null;
  }

  /**
   * Adds the partition's maintained coded symbols to {@code snapshot} as of one instant, and
   * returns the partition's fingerprint as of that same instant: a stream's snapshot and the
   * fingerprint a decode of it is checked against (RatelessExchange). A store written concurrently
   * must read both under one lock; it may join the partition as a {@link SymbolSnapshot.Member}
   * that adds its symbols as the stream reaches them and all the rest before any write changes
   * them. The default reads {@link #fingerprint} and then adds a {@link #symbols} copy at once,
   * which is exact only while nothing writes (a write in between makes the check fail, and the
   * session then looks the decoded elements up instead).
   */
  default Fingerprint addSymbols(int partition, SymbolSnapshot snapshot) {
    Fingerprint f = fingerprint(partition);
    snapshot.addAll(symbols(partition));
    return f;
  }

  /** True when {@link #symbols} gives every partition's symbols (the rateless mode is offered). */
  default boolean hasSymbols() {
    return false;
  }

  /** True when the partition currently holds {@code element}. */
  boolean contains(int partition, long element);

  /**
   * {@link #contains} for many elements at once ({@code result[i]} for {@code elements[i]});
   * implementations backed by storage answer them with one cursor.
   */
  default boolean[] containsAll(int partition, long[] elements) {
    boolean[] out = new boolean[elements.length];
    for (int i = 0; i < elements.length; i++) {
      out[i] = contains(partition, elements[i]);
    }
    return out;
  }

  /** The partition's elements in unsigned ascending order. */
  ElementCursor sortedElements(int partition);
}
