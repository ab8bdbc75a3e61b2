package dev.reconcile.core;

/**
 * Outcome of {@link Iblt#peel()}. When {@code complete} is false the lists are a partial decode and
 * must not be acted on.
 */
public record PeelResult(boolean complete, long[] onlyHere, long[] onlyThere) {
  public int recovered() {
    return onlyHere.length + onlyThere.length;
  }
}
