package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The planner alone: estimate to table shapes, against {@link Sizing}, with no session. */
class TablePlannerTest {
  private static final SketchParams PARAMS =
      TestSets.params(7, 4, 12, ExactEstimator.factory(1).params());

  private static long[] counts(int n, long c) {
    long[] a = new long[n];
    Arrays.fill(a, c);
    return a;
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 3, 10, 40, 100, 500, 1000})
  void oneGroupGetsTheFirstTableOfLeastExpectedBytes(long d) {
    int[] ps = {2, 5, 9};
    List<TablePlanner.Group> plan =
        TablePlanner.plan(PARAMS, d, false, 1.35, ps, counts(3, 100_000), counts(3, 100_000));
    assertThat(plan).hasSize(1);
    assertThat(plan.get(0).partitions()).containsExactly(2, 5, 9);
    // Equal counts in 3 unequal partitions: d >= 2 per partition.
    IbltShape best = Sizing.firstShape(d, false, 1.35, Sizing.differenceLowerBound(0, 3));
    assertThat(plan.get(0).shape()).isEqualTo(best);
    assertThat(plan.get(0).estimate()).isEqualTo(d);
    // Cheaper in expected bytes than the 99.9 % table the planner used to send, at the estimate.
    IbltShape old = PARAMS.shapeWithAtLeast(Sizing.cellsFor((long) Math.ceil(d * 1.35)));
    if (d >= 3) {
      assertThat(best.cells()).isLessThan(old.cells());
      assertThat(Sizing.expectedBytes(d, best, 14, Sizing.DEFAULT_ROUND_TRIP_BYTES))
          .isLessThan(Sizing.expectedBytes(d, old, 14, Sizing.DEFAULT_ROUND_TRIP_BYTES));
    }
  }

  @Test
  void anExactEstimateIsNotInflated() {
    int[] ps = {0};
    TablePlanner.Group exact =
        TablePlanner.plan(PARAMS, 100, true, 1.35, ps, counts(1, 9000), counts(1, 9000)).get(0);
    TablePlanner.Group inexact =
        TablePlanner.plan(PARAMS, 100, false, 1.35, ps, counts(1, 9000), counts(1, 9000)).get(0);
    assertThat(exact.shape()).isEqualTo(Sizing.firstShape(100));
    assertThat(exact.shape().cells()).isLessThanOrEqualTo(inexact.shape().cells());
  }

  @Test
  void theCountDifferenceIsALowerBound() {
    int[] ps = {1, 2};
    // The estimate says 5, but the counts already differ by 300 + 200.
    TablePlanner.Group g =
        TablePlanner.plan(
                PARAMS, 5, true, 1.0, ps, new long[] {10_300, 10_000}, new long[] {10_000, 10_200})
            .get(0);
    assertThat(g.shape()).isEqualTo(Sizing.firstShape(500));
    assertThat(g.shape().cells()).isGreaterThanOrEqualTo(500);
  }

  @Test
  void aLargeDifferenceIsSplitIntoGroupsThatLeaveRoomForOneDoubling() {
    int[] ps = new int[16];
    for (int i = 0; i < 16; i++) {
      ps[i] = i;
    }
    long d = 20_000; // far beyond half of the largest table (3 x 4096 cells)
    List<TablePlanner.Group> plan =
        TablePlanner.plan(PARAMS, d, true, 1.0, ps, counts(16, 1_000_000), counts(16, 1_000_000));
    int g = plan.size();
    assertThat(g).isGreaterThan(1);
    long room = PARAMS.maxShape().cells() / 2;
    assertThat(Sizing.cellsFor(TablePlanner.groupShare(d, g))).isLessThanOrEqualTo(room);
    assertThat(Sizing.cellsFor(TablePlanner.groupShare(d, g - 1))).isGreaterThan(room);
    // Round-robin members, ascending within a group, every partition exactly once.
    int[] seen = new int[16];
    for (int j = 0; j < g; j++) {
      int[] members = plan.get(j).partitions();
      assertThat(members).isSorted();
      for (int p : members) {
        assertThat(p % g).isEqualTo(j);
        seen[p]++;
      }
      assertThat(plan.get(j).shape()).isEqualTo(Sizing.firstShape(TablePlanner.groupShare(d, g)));
    }
    assertThat(seen).containsOnly(1);
  }

  @Test
  void smallPartitionsSendTheirListsInstead() {
    int[] ps = {3};
    // 20 elements here: 160 bytes of list, less than any table for d = 10.
    TablePlanner.Group g =
        TablePlanner.plan(PARAMS, 10, true, 1.0, ps, counts(1, 20), counts(1, 25)).get(0);
    assertThat(g.shape()).isNull();
  }

  @Test
  void aDifferenceBeyondTheLargestTableSendsTheLists() {
    int[] ps = {3};
    TablePlanner.Group g =
        TablePlanner.plan(PARAMS, 50_000, true, 1.0, ps, counts(1, 1 << 30), counts(1, 1 << 30))
            .get(0);
    assertThat(g.shape()).isNull();
  }

  @Test
  void doublingClimbsTheLadderAndStopsAtTheLargest() {
    IbltShape s = PARAMS.shapeWithAtLeast(Sizing.cellsFor(10));
    int steps = 0;
    while (true) {
      IbltShape next = TablePlanner.nextShape(PARAMS, s);
      if (next == null) {
        break;
      }
      assertThat(next.cells())
          .isGreaterThanOrEqualTo(Math.min(2 * s.cells(), PARAMS.maxShape().cells()));
      assertThat(PARAMS.allows(next)).isTrue();
      s = next;
      steps++;
    }
    assertThat(s).isEqualTo(PARAMS.maxShape());
    assertThat(steps).isPositive();
    assertThat(TablePlanner.halves(new int[] {1, 4, 6, 7, 9}))
        .isDeepEqualTo(new int[][] {{1, 4}, {6, 7, 9}});
  }
}
