package dev.reconcile.estimator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.LocalRound;
import dev.reconcile.core.MemorySketches;
import dev.reconcile.core.PartitionOutcome;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.SessionConfig;
import dev.reconcile.core.SketchParams;
import dev.reconcile.core.TestSets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The core session, driven in memory, with the real strata estimator on both sides. */
class SessionEndToEndTest {
  private static final int PARTITIONS_LOG2 = 2;

  @ParameterizedTest(name = "seed {0}: {1} only at A, {2} only at B")
  @CsvSource({
    "1, 1, 0",
    "2, 0, 1",
    "3, 5, 5",
    "4, 60, 40",
    "5, 300, 200",
    "6, 1000, 1500",
    "7, 2500, 2500",
    "8, 5000, 0",
  })
  void sessionFindsTheExactSymmetricDifference(long seed, int onlyA, int onlyB) {
    StrataEstimatorFactory f = StrataEstimatorFactory.defaults();
    SketchParams params = TestSets.params(seed, PARTITIONS_LOG2, 14, f.params());
    TestSets s = TestSets.random(seed, 200_000, onlyA, onlyB);
    MemorySketches a =
        MemorySketches.of(params, f, TestSets.partitionsOf(s.a, PARTITIONS_LOG2), s.a);
    MemorySketches b =
        MemorySketches.of(params, f, TestSets.partitionsOf(s.b, PARTITIONS_LOG2), s.b);
    ReconcileSession i = ReconcileSession.initiator(SessionConfig.of("c", "a", seed), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    LocalRound.run(i, r);
    String where = "seed " + seed + ", d " + (onlyA + onlyB);
    assertThat(i.failure()).as(where).isEmpty();
    assertThat(r.failure()).as(where).isEmpty();
    assertThat(i.succeeded()).as(where).isTrue();
    assertThat(r.succeeded()).as(where).isTrue();

    assertThat(collect(i.outcomes(), true))
        .as("missing at A, " + where)
        .containsExactly(sorted(s.onlyB));
    assertThat(collect(i.outcomes(), false))
        .as("missing at B, " + where)
        .containsExactly(sorted(s.onlyA));
    assertThat(collect(r.outcomes(), true))
        .as("R missing, " + where)
        .containsExactly(sorted(s.onlyA));
    assertThat(collect(r.outcomes(), false))
        .as("R's peer missing, " + where)
        .containsExactly(sorted(s.onlyB));

    // The estimator path was taken where partitions differ, and its estimate was sane (when an
    // estimator was sent: a small first table is sized from the count difference instead).
    boolean estimated = r.stats().estimatorBytes() > 0;
    for (PartitionOutcome o : i.outcomes()) {
      if (o.path() == PartitionOutcome.Path.IBLT && estimated) {
        assertThat(o.estimate()).as("partition %d, %s", o.partition(), where).isPositive();
        assertThat((double) o.estimate())
            .as("partition %d estimate vs d %d, %s", o.partition(), o.difference(), where)
            .isBetween(0.5 * o.difference(), 2.0 * o.difference());
      }
    }
    assertThat(i.outcomes().stream().anyMatch(o -> o.path() == PartitionOutcome.Path.IBLT))
        .as("some partition reconciled through estimator + IBLT, " + where)
        .isTrue();
  }

  private static long[] collect(List<PartitionOutcome> outcomes, boolean local) {
    return outcomes.stream()
        .flatMapToLong(o -> Arrays.stream(local ? o.missingLocal() : o.missingRemote()))
        .sorted()
        .toArray();
  }

  private static long[] sorted(long[] a) {
    long[] c = a.clone();
    Arrays.sort(c);
    return c;
  }
}
