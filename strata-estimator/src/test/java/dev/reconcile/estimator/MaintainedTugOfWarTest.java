package dev.reconcile.estimator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.Estimate;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.PartitionSketch;
import dev.reconcile.core.SketchParams;
import dev.reconcile.core.TestSets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The production estimator (kind 2) maintained as the agent maintains it: one {@link
 * PartitionSketch} per partition updated on every insert, replace and delete. It must equal the
 * estimator rebuilt from the final set (linear, deletions included) and estimate the difference of
 * two maintained replicas.
 */
class MaintainedTugOfWarTest {
  private static final EstimatorFactory F = EstimatorKinds.defaults();

  @Test
  void theProductionDefaultIsTheTugOfWarEstimator() {
    assertThat(F.params().getKind()).isEqualTo(TugOfWarEstimator.KIND);
  }

  @Test
  void maintainedUnderInsertsReplacesAndDeletesEqualsRebuilt() {
    long seed = 41;
    SketchParams params = TestSets.params(seed, 0, 12, F.params());
    SplittableRandom rnd = new SplittableRandom(seed);
    PartitionSketch maintained = new PartitionSketch(params, F);
    LinkedHashSet<Long> live = new LinkedHashSet<>();
    for (int i = 0; i < 20_000; i++) {
      long x = rnd.nextLong();
      maintained.add(x);
      live.add(x);
    }
    List<Long> order = new ArrayList<>(live);
    for (int i = 0; i < 5_000; i++) { // updates: the element of a key changes
      long old = order.get(i);
      long neu = rnd.nextLong();
      maintained.replace(true, old, neu);
      live.remove(old);
      live.add(neu);
    }
    for (int i = 5_000; i < 8_000; i++) { // deletes
      long old = order.get(i);
      maintained.remove(old);
      live.remove(old);
    }
    PartitionSketch rebuilt = new PartitionSketch(params, F);
    for (long x : live) {
      rebuilt.add(x);
    }
    assertThat(maintained.differencesFrom(rebuilt)).as("seed " + seed).isEmpty();
  }

  @Test
  void twoMaintainedReplicasEstimateTheirDifference() throws FormatException {
    long seed = 42;
    SketchParams params = TestSets.params(seed, 0, 12, F.params());
    SplittableRandom rnd = new SplittableRandom(seed);
    PartitionSketch a = new PartitionSketch(params, F);
    PartitionSketch b = new PartitionSketch(params, F);
    long[] common = rnd.longs(30_000).toArray();
    for (long x : common) {
      a.add(x);
      b.add(x);
    }
    // B loses 300 of the common elements, A gets 200 updates, both add 100 of their own: d = 900.
    for (int i = 0; i < 300; i++) {
      b.remove(common[i]);
    }
    for (int i = 300; i < 500; i++) {
      a.replace(true, common[i], rnd.nextLong());
    }
    for (int i = 0; i < 100; i++) {
      a.add(rnd.nextLong());
      b.add(rnd.nextLong());
    }
    long d = 300 + 2 * 200 + 2 * 100;
    Estimate e = a.estimatorCopy().estimate(b.estimatorCopy().toProto());
    // Relative standard deviation sqrt(2 / 2016) = 3.2 %: 6 of them either side.
    assertThat((double) e.value()).as("seed " + seed).isBetween(d * 0.81, d * 1.19);
    assertThat(Math.ceil(e.value() * a.estimatorCopy().sizingFactor()))
        .as("seed " + seed)
        .isGreaterThanOrEqualTo(d * 0.95);
  }
}
