package dev.reconcile.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which tables to send for a set of unequal partitions, from the estimated difference over them:
 * pure arithmetic on {@link Sizing} and the {@link SketchParams} ladder, no session state.
 *
 * <p>The plan sizes for the estimate with room for the estimator's error (its sizing factor; none
 * when the estimate is exact), never below the difference of the element counts (a lower bound). It
 * uses the fewest groups of partitions whose tables leave room for one doubling below the largest
 * table; with several groups each gets its share plus room for the spread of a random split (3
 * standard deviations of a Poisson share). A group whose table would not fit, or would cost more
 * than its sorted element lists, sends the lists instead.
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
      long d = Math.max(groupShare(planned, g), bound);
      IbltShape shape = params.shapeWithAtLeast(Sizing.cellsFor(d));
      if (shape != null && shape.cells() * CellLayout.WIDE.cellBytes() >= listBytes) {
        shape = null; // the lists cost less than the table
      }
      out.add(new Group(members, shape, Math.round(estimate * (double) size / n)));
    }
    return out;
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
