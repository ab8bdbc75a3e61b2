package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ReconcileSessionTest {
  @Test
  void smoke() {
    EstimatorFactory f = ExactEstimator.factory(1.0);
    SketchParams params = TestSets.params(7, 2, 12, f.params());
    TestSets s = TestSets.random(1, 5000, 40, 30);
    MemorySketches a = MemorySketches.of(params, f, TestSets.partitionsOf(s.a, 2), s.a);
    MemorySketches b = MemorySketches.of(params, f, TestSets.partitionsOf(s.b, 2), s.b);
    ReconcileSession i = ReconcileSession.initiator(SessionConfig.of("c", "a", 1), a);
    ReconcileSession r = ReconcileSession.responder(SessionConfig.of("c", "b", 0), b);
    SessionDriver.run(i, r);
    assertThat(i.failure()).isEmpty();
    assertThat(r.failure()).isEmpty();
    assertThat(i.succeeded()).isTrue();
    assertThat(r.succeeded()).isTrue();
    long[] missingAtA = i.outcomes().stream().flatMapToLong(o -> Arrays.stream(o.missingLocal())).sorted().toArray();
    long[] expected = s.onlyB.clone();
    Arrays.sort(expected);
    assertThat(missingAtA).containsExactly(expected);
  }
}
