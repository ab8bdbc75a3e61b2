package dev.reconcile.core;

/** Memory sketches behind a wrapper, for tests that watch or change one call. */
class DelegatingSketches implements PartitionSketches {
  final MemorySketches inner;

  DelegatingSketches(MemorySketches inner) {
    this.inner = inner;
  }

  @Override
  public SketchParams params() {
    return inner.params();
  }

  @Override
  public Fingerprint fingerprint(int partition) {
    return inner.fingerprint(partition);
  }

  @Override
  public DifferenceEstimator estimator(int partition) {
    return inner.estimator(partition);
  }

  @Override
  public Iblt iblt(int partition, IbltShape shape) {
    return inner.iblt(partition, shape);
  }

  @Override
  public CodedSymbols symbols(int partition) {
    return inner.symbols(partition);
  }

  @Override
  public boolean hasSymbols() {
    return inner.hasSymbols();
  }

  @Override
  public boolean contains(int partition, long element) {
    return inner.contains(partition, element);
  }

  @Override
  public boolean[] containsAll(int partition, long[] elements) {
    return inner.containsAll(partition, elements);
  }

  @Override
  public ElementCursor sortedElements(int partition) {
    return inner.sortedElements(partition);
  }
}
