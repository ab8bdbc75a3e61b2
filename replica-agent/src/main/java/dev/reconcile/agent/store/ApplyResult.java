package dev.reconcile.agent.store;

/**
 * Outcome of {@link ReplicaStore#apply}: {@code applied} records won and were written, {@code
 * stale} lost to the current record (or to another record of the same batch), {@code duplicate}
 * were identical under the conflict rule to the current record (a retried batch counts here).
 */
public record ApplyResult(int applied, int stale, int duplicate) {
  public static final ApplyResult EMPTY = new ApplyResult(0, 0, 0);

  public int total() {
    return applied + stale + duplicate;
  }

  public ApplyResult plus(ApplyResult o) {
    return new ApplyResult(applied + o.applied, stale + o.stale, duplicate + o.duplicate);
  }
}
