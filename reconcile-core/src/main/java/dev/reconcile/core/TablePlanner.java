package dev.reconcile.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which tables to send for a set of unequal partitions, from the estimated difference over them:
 * pure arithmetic on {@link Sizing} and the {@link SketchParams} ladder, no session state.
 *
 * <p>Each group's first table is the one of least expected bytes, retries by incremental doubling
 * included ({@link Sizing#firstShape(long, boolean, double, long)}: averaged over the differences
 * an inexact estimate leaves possible, from the estimator's sizing factor; exact when the estimate
 * is), never below the fingerprints' lower bound on the difference ({@link
 * Sizing#differenceLowerBound}). A failed table then costs only its extension (as many cells
 * again), so the plan no longer pays for a 99.9 % first-try success. For hash counts other than
 * {@link Sizing#HASH_COUNT} (no decode table) it falls back to the 99.9 % table of {@link
 * Sizing#cellsFor} for the estimate times the sizing factor.
 *
 * <p>It uses the fewest groups of partitions whose 99.9 % tables (for the estimate times the sizing
 * factor) leave room for one doubling below the largest table; with several groups each gets its
 * share plus room for the spread of a random split (3 standard deviations of a Poisson share). A
 * group whose table would not fit, or would cost more than its sorted element lists, sends the
 * lists instead.
 */
final class TablePlanner {
  private TablePlanner() {}

  /**
   * One group of the plan.
   *
   * @param shape the first table, or null to send the members' sorted element lists
   * @param estimate the group's share of the estimate
   */
  record Group(int[] partitions, IbltShape shape, long estimate) {}

  /**
   * The plan for {@code partitions} (ascending) whose element counts are {@code localCounts} here
   * and {@code remoteCounts} at the peer.
   */
  static List<Group> plan(
      SketchParams params,
      long estimate,
      boolean exact,
      double sizingFactor,
      int[] partitions,
      long[] localCounts,
      long[] remoteCounts) {
    int n = partitions.length;
    long countBound = 0;
    for (int i = 0; i < n; i++) {
      countBound += Math.abs(localCounts[i] - remoteCounts[i]);
    }
    double factor = exact ? 1.0 : sizingFactor;
    long planned = Math.max(1, Math.max((long) Math.ceil(estimate * factor), countBound));
    long room = params.maxShape().cells() / 2;
    int g = 1;
    while (g < n && Sizing.cellsFor(groupShare(planned, g)) > room) {
      g++;
    }
    List<Group> out = new ArrayList<>(g);
    for (int j = 0; j < g; j++) {
      int size = (n - j + g - 1) / g; // members j, j+g, j+2g, ...
      int[] members = new int[size];
      long bound = 0;
      long listBytes = 0;
      for (int m = 0, i = j; i < n; i += g, m++) {
        members[m] = partitions[i];
        bound += Math.abs(localCounts[i] - remoteCounts[i]);
        listBytes += localCounts[i] * 8;
      }
      IbltShape shape =
          firstShape(
              params,
              g == 1 ? estimate : groupShare(estimate, g),
              exact,
              sizingFactor,
              bound,
              size,
              g == 1 ? planned : groupShare(planned, g));
      if (shape != null && shape.cells() * CellLayout.WIDE.cellBytes() >= listBytes) {
        shape = null; // the lists cost less than the table
      }
      out.add(new Group(members, shape, Math.round(estimate * (double) size / n)));
    }
    return out;
  }

  /**
   * The first table of a group whose estimated share is {@code estimate}, whose {@code members}
   * partitions' counts differ by {@code countDifference} in all, and whose share of the estimate
   * times the sizing factor is {@code planned}; null when no allowed table is large enough.
   */
  static IbltShape firstShape(
      SketchParams params,
      long estimate,
      boolean exact,
      double sizingFactor,
      long countDifference,
      int members,
      long planned) {
    if (params.ibltHashCount() != Sizing.HASH_COUNT) {
      return params.shapeWithAtLeast(Sizing.cellsFor(Math.max(planned, countDifference)));
    }
    long lowerBound = Sizing.differenceLowerBound(countDifference, members);
    IbltShape best = Sizing.firstShape(estimate, exact, sizingFactor, lowerBound);
    return params.allows(best) ? best : params.shapeWithAtLeast(best.cells());
  }

  /** Planned difference of one of {@code g} groups sharing {@code planned}. */
  static long groupShare(long planned, int g) {
    if (g == 1) {
      return planned;
    }
    double share = planned / (double) g;
    return (long) Math.ceil(share + 3 * Math.sqrt(share) + 1);
  }

  /** The table to ask for after {@code failed}: at least twice the cells; null past the largest. */
  static IbltShape nextShape(SketchParams params, IbltShape failed) {
    IbltShape max = params.maxShape();
    if (failed.cells() >= max.cells()) {
      return null;
    }
    IbltShape n = params.shapeWithAtLeast(2 * failed.cells());
    return n == null ? max : n;
  }

  /** The two halves a group is split into when its largest table failed. */
  static int[][] halves(int[] partitions) {
    int half = partitions.length / 2;
    return new int[][] {
      Arrays.copyOfRange(partitions, 0, half),
      Arrays.copyOfRange(partitions, half, partitions.length)
    };
  }
}
