package dev.reconcile.cli;

import dev.reconcile.core.LocalRound;
import dev.reconcile.core.PartitionOutcome;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.SessionConfig;
import dev.reconcile.core.SessionLimits;
import dev.reconcile.core.SessionStats;
import java.util.Arrays;
import java.util.List;

/**
 * Runs the reconciliation protocol between two local sides in memory: an initiator on the left, a
 * responder on the right, frames passed from one to the other until both finish. The same state
 * machine the agent drives over TCP; nothing here lists one side to the other directly.
 */
final class LocalReconciliation {
  private static final String CLUSTER = "reconcile-cli";

  /** No cap on the result size: a local diff may legitimately list every record. */
  private static final SessionLimits LIMITS = new SessionLimits(Integer.MAX_VALUE - 8, 1 << 16);

  private final ReconcileSession initiator;

  private LocalReconciliation(ReconcileSession initiator) {
    this.initiator = initiator;
  }

  static LocalReconciliation run(PartitionSketches left, PartitionSketches right) {
    return new LocalReconciliation(
        LocalRound.compare(new SessionConfig(CLUSTER, "left", 1, null, LIMITS), left, right));
  }

  List<PartitionOutcome> outcomes() {
    return initiator.outcomes();
  }

  /** Elements only the left side holds, ascending (signed order, for binary search). */
  long[] leftOnly() {
    return collect(true);
  }

  /** Elements only the right side holds, ascending (signed order). */
  long[] rightOnly() {
    return collect(false);
  }

  private long[] collect(boolean left) {
    long total = 0;
    for (PartitionOutcome o : outcomes()) {
      total += left ? o.missingRemote().length : o.missingLocal().length;
    }
    long[] all = new long[Math.toIntExact(total)];
    int n = 0;
    for (PartitionOutcome o : outcomes()) {
      long[] a = left ? o.missingRemote() : o.missingLocal();
      System.arraycopy(a, 0, all, n, a.length);
      n += a.length;
    }
    Arrays.sort(all);
    return all;
  }

  /** Stats from the initiator's side: bytes sent plus received are every protocol byte. */
  SessionStats stats() {
    return initiator.stats();
  }
}
