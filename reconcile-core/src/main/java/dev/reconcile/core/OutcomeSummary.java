package dev.reconcile.core;

import java.util.List;

/**
 * Counts and totals over a session's {@link PartitionOutcome}s: how many partitions took each path
 * and how large the difference was, estimated and found.
 *
 * @param partial partitions whose lists were cut at the session's cap (repaired in part)
 * @param estimated partitions that had an estimate ({@code estimate} sums theirs)
 * @param missingLocal elements the peer has and this side lacks
 * @param missingRemote elements this side has and the peer lacks
 */
public record OutcomeSummary(
    int partitions,
    int fastPath,
    int iblt,
    int fallback,
    int rateless,
    int bulk,
    int partial,
    int estimated,
    long estimate,
    long missingLocal,
    long missingRemote) {
  public static OutcomeSummary of(List<PartitionOutcome> outcomes) {
    int fast = 0;
    int iblt = 0;
    int fallback = 0;
    int rateless = 0;
    int bulk = 0;
    int partial = 0;
    int estimated = 0;
    long estimate = 0;
    long local = 0;
    long remote = 0;
    for (PartitionOutcome o : outcomes) {
      switch (o.path()) {
        case FAST -> fast++;
        case IBLT -> iblt++;
        case FALLBACK -> fallback++;
        case RATELESS -> rateless++;
        case BULK -> bulk++;
      }
      if (o.partial()) {
        partial++;
      }
      if (o.path() != PartitionOutcome.Path.FAST && o.estimate() >= 0) {
        estimated++;
        estimate += o.estimate();
      }
      local += o.lacksHere();
      remote += o.lacksThere();
    }
    return new OutcomeSummary(
        outcomes.size(),
        fast,
        iblt,
        fallback,
        rateless,
        bulk,
        partial,
        estimated,
        estimate,
        local,
        remote);
  }

  /** Elements that differ, both ways. */
  public long difference() {
    return missingLocal + missingRemote;
  }
}
