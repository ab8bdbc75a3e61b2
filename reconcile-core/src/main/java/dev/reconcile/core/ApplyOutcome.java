package dev.reconcile.core;

/**
 * What a store did with one batch of repair records ({@link RecordStore#apply}): {@code applied}
 * records won and were written, {@code stale} lost to the current record (or to another record of
 * the same batch), {@code duplicate} were the same write as the current record (a retried batch
 * counts here).
 */
public record ApplyOutcome(int applied, int stale, int duplicate) {
  public static final ApplyOutcome EMPTY = new ApplyOutcome(0, 0, 0);

  public int total() {
    return applied + stale + duplicate;
  }

  public ApplyOutcome plus(ApplyOutcome o) {
    return new ApplyOutcome(applied + o.applied, stale + o.stale, duplicate + o.duplicate);
  }
}
