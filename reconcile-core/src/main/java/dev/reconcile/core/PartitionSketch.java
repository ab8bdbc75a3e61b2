package dev.reconcile.core;

import java.util.ArrayList;
import java.util.List;

/**
 * Everything maintained for one partition on the write path: the {@link Fingerprint}, the {@link
 * DifferenceEstimator}, the {@link IbltLadder} and, with {@link SketchParams#rateless()}, the
 * prefix of coded symbols ({@link CodedSymbols}). All are linear, so an overwrite is {@code
 * remove(old); add(new)} and the state does not depend on the order of operations; the element's
 * one keyed cell hash is computed once per update and shared by the tables and the symbols. Not
 * thread-safe.
 */
public final class PartitionSketch {
  private final HashSpec spec;
  private final Fingerprint.Accumulator fingerprint;
  private final DifferenceEstimator estimator;
  private final IbltLadder tables;
  private final CodedSymbols symbols; // null without a rateless prefix

  public PartitionSketch(SketchParams params, EstimatorFactory estimators) {
    this.spec = params.spec();
    this.fingerprint = new Fingerprint.Accumulator(spec);
    this.estimator = estimators.create(spec);
    this.tables = new IbltLadder(params);
    this.symbols = params.rateless() ? new CodedSymbols(spec, params.ratelessLog2()) : null;
  }

  private PartitionSketch(
      HashSpec spec,
      Fingerprint.Accumulator fingerprint,
      DifferenceEstimator estimator,
      IbltLadder tables,
      CodedSymbols symbols) {
    this.spec = spec;
    this.fingerprint = fingerprint;
    this.estimator = estimator;
    this.tables = tables;
    this.symbols = symbols;
  }

  public void add(long element) {
    update(element, 1);
  }

  public void remove(long element) {
    update(element, -1);
  }

  /**
   * {@link #add} of {@code elements[0..n)}, the coded symbols' part at once ({@link
   * #updateSymbolsAll}).
   */
  public void addAll(long[] elements, int n) {
    long[] cs = new long[n];
    byte[] ds = new byte[n];
    for (int i = 0; i < n; i++) {
      cs[i] = updateDeferringSymbols(elements[i], 1);
      ds[i] = 1;
    }
    updateSymbolsAll(elements, cs, ds, n);
  }

  private void update(long element, int delta) {
    long c = updateDeferringSymbols(element, delta);
    if (symbols != null) {
      symbols.update(element, c, delta);
    }
    tables.updateSmall(element, c, delta);
  }

  /**
   * Adds ({@code delta = 1}) or removes ({@code -1}) {@code element} in everything but the coded
   * symbols and the small tables ({@link IbltLadder}), and returns its check hash: the caller owes
   * {@link #updateSymbolsAll} the same update (in any order with others: both are linear) before it
   * reads the symbols or folds a table.
   */
  public long updateDeferringSymbols(long element, int delta) {
    if (delta > 0) {
      fingerprint.add(element);
      estimator.add(element);
    } else {
      fingerprint.remove(element);
      estimator.remove(element);
    }
    long c = spec.cellBase(element);
    tables.updateLarge(element, c, delta);
    return c;
  }

  /**
   * The deferred part of {@code n} updates (the coded symbols and the small tables): {@code
   * elements[i]} with delta {@code deltas[i]} and check hash {@code cs[i]} from {@link
   * #updateDeferringSymbols}, applied at once ({@link CodedSymbols#updateAll}: several walks side
   * by side).
   */
  public void updateSymbolsAll(long[] elements, long[] cs, byte[] deltas, int n) {
    if (symbols != null) {
      symbols.updateAll(elements, cs, deltas, n);
    }
    tables.updateSmallAll(elements, cs, deltas, n);
  }

  /** True when the sketch keeps a prefix of coded symbols. */
  public boolean hasSymbols() {
    return symbols != null;
  }

  /** Replaces {@code old} (when {@code hadOld}) by {@code neu}. */
  public void replace(boolean hadOld, long old, long neu) {
    if (hadOld) {
      remove(old);
    }
    add(neu);
  }

  public Fingerprint fingerprint() {
    return fingerprint.snapshot();
  }

  /** A copy of the estimator, safe to serialise while writes go on. */
  public DifferenceEstimator estimatorCopy() {
    return estimator.copy();
  }

  /** A new table of {@code shape} folded from the maintained table of its ladder. */
  public Iblt fold(IbltShape shape) {
    return tables.fold(shape);
  }

  /** Adds the coded symbols to {@code sum} (same spec and size); nothing without a prefix. */
  public void addSymbolsTo(CodedSymbols sum) {
    if (symbols != null) {
      sum.add(symbols);
    }
  }

  /**
   * Adds the coded symbols {@code [from, to)} to {@code snapshot} ({@link
   * SymbolSnapshot#addRange}); nothing without a rateless prefix.
   */
  public void addSymbolsTo(SymbolSnapshot snapshot, int from, int to) {
    if (symbols != null && from < to) {
      snapshot.addRange(symbols, from, to);
    }
  }

  /** A copy of the coded symbols, or null without a rateless prefix. */
  public CodedSymbols symbolsCopy() {
    return symbols == null ? null : symbols.copy();
  }

  /** A deep copy (for a consistency check against a rebuild). */
  public PartitionSketch copy() {
    Fingerprint.Accumulator f = new Fingerprint.Accumulator(spec);
    f.set(fingerprint.snapshot());
    return new PartitionSketch(
        spec, f, estimator.copy(), tables.copy(), symbols == null ? null : symbols.copy());
  }

  /**
   * What differs between this state and {@code rebuilt} (estimators compared by their wire form),
   * one phrase per sketch; empty when they are equal.
   */
  public List<String> differencesFrom(PartitionSketch rebuilt) {
    List<String> diffs = new ArrayList<>();
    Fingerprint mine = fingerprint.snapshot();
    Fingerprint theirs = rebuilt.fingerprint.snapshot();
    if (!mine.equals(theirs)) {
      diffs.add("fingerprint " + mine + " != rebuilt " + theirs);
    }
    if (!estimator.toProto().equals(rebuilt.estimator.toProto())) {
      diffs.add("estimator wire bytes differ");
    }
    if (!tables.sameCells(rebuilt.tables)) {
      diffs.add("maintained IBLTs " + tables.shapes() + " differ");
    }
    if (symbols != null && !symbols.sameSymbols(rebuilt.symbols)) {
      diffs.add("coded symbols (" + symbols.size() + ") differ");
    }
    return diffs;
  }

  /** Bytes of memory the maintained tables and symbols take (the estimator adds its cells). */
  public long tableBytes() {
    return tables.memoryBytes() + (symbols == null ? 0 : symbols.memoryBytes());
  }
}
