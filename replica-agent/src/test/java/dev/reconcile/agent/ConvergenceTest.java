package dev.reconcile.agent;

import static dev.reconcile.agent.AgentCluster.assertConverged;
import static dev.reconcile.agent.AgentCluster.contents;
import static dev.reconcile.agent.AgentCluster.repair;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.ExactEstimator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Agents in one JVM on loopback converge after divergent writes. */
class ConvergenceTest {
  @TempDir Path dir;

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static void load(ReplicaAgent a, String prefix, int from, int to) {
    for (int i = from; i < to; i++) {
      a.store().put(b(prefix + i), b("value-" + i));
    }
  }

  /** The same records (same versions) on both replicas. */
  static void loadCommon(ReplicaAgent a, ReplicaAgent b, int n) {
    java.util.List<dev.reconcile.core.ReplicaRecord> rs = new java.util.ArrayList<>();
    long v = a.store().clock().now();
    for (int i = 0; i < n; i++) {
      rs.add(new dev.reconcile.core.ReplicaRecord(b("common" + i), b("v" + i), v, 7, false));
    }
    a.store().putAll(rs);
    b.store().putAll(rs);
  }

  @Test
  void oneSidedLossIsRepaired() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.start("b", Map.of());
      load(a, "k", 0, 5000);
      RoundReport r = repair(a, b);
      assertThat(r.ok).as(String.valueOf(r.error)).isTrue();
      assertThat(r.recordsSent).isEqualTo(5000);
      assertThat(r.stillDiffering).isEmpty();
      assertConverged(a, b);
      // A second round finds nothing: every partition takes the fast path.
      RoundReport again = repair(b, a);
      assertThat(again.ok).isTrue();
      assertThat(again.fastPath).isEqualTo(8);
      assertThat(again.recordsSent + again.recordsReceived).isZero();
    }
  }

  /**
   * Listed records too large for a filtered scan (past {@code ReplicaStore.SCAN_RECORD_BYTES}) are
   * looked up, and travel both ways as row batches, copied as stored, when both agents offer them
   * and the records are small enough ({@code ReplicaStore.LOOKED_UP_ROW_BYTES}: values of 2 KiB);
   * as record batches when one agent does not offer rows or the records are larger (16 KiB). Either
   * way the replicas converge, including a key whose versions differ.
   */
  @ParameterizedTest
  @CsvSource({"2048,true", "2048,false", "16384,true"})
  void lookedUpListedRecordsTravelAsRowsBothWaysUnlessLarge(int valueBytes, boolean rowBatches)
      throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a =
          c.start("a", Map.of("partitions-log2", "1", "row-batches", String.valueOf(rowBatches)));
      ReplicaAgent b = c.start("b", Map.of("partitions-log2", "1"));
      SplittableRandom rnd = new SplittableRandom(8);
      java.util.List<dev.reconcile.core.ReplicaRecord> common = new java.util.ArrayList<>();
      long v = a.store().clock().now();
      for (int i = 0; i < 200; i++) {
        byte[] value = new byte[valueBytes];
        rnd.nextBytes(value);
        common.add(new dev.reconcile.core.ReplicaRecord(b("big" + i), value, v, 7, false));
      }
      a.store().putAll(common);
      b.store().putAll(common);
      for (int i = 0; i < 30; i++) {
        byte[] value = new byte[valueBytes];
        rnd.nextBytes(value);
        a.store().put(b("onlyA" + i), value);
      }
      for (int i = 0; i < 20; i++) {
        byte[] value = new byte[valueBytes];
        rnd.nextBytes(value);
        b.store().put(b("onlyB" + i), value);
      }
      byte[] newer = new byte[valueBytes];
      rnd.nextBytes(newer);
      b.store().put(b("big3"), newer); // b's version of a common key is the newer
      // Reopened, the stores hold their records in table files, whose sizes the choice of a path
      // reads (a memtable counts by its allocation, several MiB for these few records).
      c.stop(a);
      c.stop(b);
      a = c.start("a", Map.of("partitions-log2", "1", "row-batches", String.valueOf(rowBatches)));
      b = c.start("b", Map.of("partitions-log2", "1"));
      RoundReport r = repair(a, b);
      assertThat(r.ok).as(String.valueOf(r.error)).isTrue();
      assertThat(r.bulkPartitions).isZero();
      assertThat(r.recordsSent).isEqualTo(31); // 30 only on a, and a's older big3 (b keeps its own)
      assertThat(r.recordsReceived).isEqualTo(21);
      if (rowBatches && valueBytes <= 4096) {
        assertThat(r.rowBatchesSent).isPositive();
        assertThat(r.rowBatchesReceived).isPositive();
      } else {
        assertThat(r.rowBatchesSent).isZero();
        assertThat(r.rowBatchesReceived).isZero();
      }
      assertConverged(a, b);
      assertThat(a.store().get(b("big3")).orElseThrow().value()).isEqualTo(newer);
      assertThat(a.store().selfCheck().ok()).isTrue();
      assertThat(b.store().selfCheck().ok()).isTrue();
    }
  }

  /**
   * A new replica receives partitions of more than 4 MiB as ingested table files (PartitionIngest),
   * and with {@code bulk-ingest: false} through write batches: the same contents, sketches that
   * agree with the source's (the next round is all fast path) and a store whose index agrees with
   * its records; the partitions come as row batches unless the new replica does not offer them.
   */
  @ParameterizedTest
  @CsvSource({"true,true", "false,true", "true,false"})
  void anEmptyReplicaCatchesUpLargePartitions(boolean ingest, boolean rowBatches) throws Exception {
    Map<String, String> config = Map.of("partitions-log2", "1");
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", config);
      ReplicaAgent b =
          c.start(
              "b",
              Map.of(
                  "partitions-log2",
                  "1",
                  "bulk-ingest",
                  String.valueOf(ingest),
                  "row-batches",
                  String.valueOf(rowBatches)));
      SplittableRandom rnd = new SplittableRandom(42);
      for (int i = 0; i < 400; i++) {
        byte[] value = new byte[32 * 1024]; // 2 partitions of about 6.4 MB each
        rnd.nextBytes(value);
        a.store().put(b("big" + i), value);
      }
      a.store().delete(b("big7")); // a tombstone travels too
      RoundReport r = repair(b, a);
      assertThat(r.ok).as(String.valueOf(r.error)).isTrue();
      assertThat(r.bulkPartitions).isEqualTo(2);
      assertThat(r.recordsReceived).isEqualTo(400);
      if (rowBatches) {
        assertThat(r.rowBatchesReceived).isPositive();
      } else {
        assertThat(r.rowBatchesReceived).isZero();
      }
      assertThat(r.rowBatchesSent).isZero(); // b had nothing a lacks
      assertConverged(a, b);
      assertThat(b.store().stats().ingestedRecords()).isEqualTo(ingest ? 400 : 0);
      assertThat(b.store().selfCheck().ok()).isTrue();
      RoundReport again = repair(a, b);
      assertThat(again.ok).isTrue();
      assertThat(again.fastPath).isEqualTo(2);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"rateless", "estimator"})
  void twoSidedDifferencesConflictsAndDeletes(String mode) throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of("mode", mode));
      ReplicaAgent b = c.start("b", Map.of("mode", mode));
      load(a, "common", 0, 20_000);
      assertThat(repair(a, b).ok).isTrue();
      load(a, "only-a", 0, 150);
      load(b, "only-b", 0, 120);
      SplittableRandom rnd = new SplittableRandom(7);
      // Conflicting versions of the same key (outside the deleted range): a writes, then b. The
      // later write in the conflict order, the larger (version, origin) of the two acknowledged
      // versions, must win on both; b wrote later in real time, so its physical time is never the
      // smaller (within one millisecond the logical counters and then the origins decide).
      Map<Integer, String> expected = new java.util.HashMap<>();
      for (int i = 0; i < 100; i++) {
        int k = 2000 + rnd.nextInt(18_000);
        String va = "from-a-" + i;
        String vb = "from-b-" + i;
        long versionA = a.store().put(b("common" + k), b(va));
        long versionB = b.store().put(b("common" + k), b(vb));
        int order = Long.compareUnsigned(versionB, versionA);
        if (order == 0) {
          order = Long.compareUnsigned(b.store().origin(), a.store().origin());
        }
        assertThat(versionB >>> 16).isGreaterThanOrEqualTo(versionA >>> 16);
        expected.put(k, order > 0 ? vb : va);
      }
      for (int i = 0; i < 50; i++) {
        a.store().delete(b("common" + (1000 + i)));
      }
      RoundReport r = repair(a, b);
      assertThat(r.ok).as(String.valueOf(r.error)).isTrue();
      assertThat(mode.equals("rateless") ? r.ratelessPartitions : r.ibltPartitions).isPositive();
      assertThat(r.stats.estimatorBytes() > 0).isEqualTo(mode.equals("estimator"));
      assertConverged(a, b);
      for (Map.Entry<Integer, String> e : expected.entrySet()) {
        for (ReplicaAgent x : new ReplicaAgent[] {a, b}) {
          assertThat(x.store().get(b("common" + e.getKey())).orElseThrow().value())
              .as("common%d on %s", e.getKey(), x.config().nodeId())
              .isEqualTo(b(e.getValue()));
        }
      }
      assertThat(a.store().get(b("common1000")).orElseThrow().tombstone()).isTrue();
      assertThat(b.store().get(b("only-a3"))).isPresent();
      assertThat(a.store().get(b("only-b3"))).isPresent();
    }
  }

  @Test
  void aDivergenceBeyondTheListCapIsRepairedInStepsNotRefused() throws Exception {
    Map<String, String> capped =
        Map.of("max-listed-elements", "50", "partitions-log2", "0", "iblt-max-log2", "6");
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", capped);
      ReplicaAgent b = c.start("b", capped);
      loadCommon(a, b, 500);
      load(a, "only-a-", 0, 180);
      load(b, "only-b-", 0, 120);
      int rounds = 0;
      RoundReport last;
      do {
        last = repair(a, b);
        rounds++;
        assertThat(last.ok).as("round %d: %s", rounds, last.error).isTrue();
        assertThat(last.missingLocal + last.missingRemote).isLessThanOrEqualTo(50);
      } while (!last.stillDiffering.isEmpty() && rounds < 20);
      assertConverged(a, b);
      assertThat(rounds).isBetween(6, 12); // 300 differences, at most 50 listed per round
    }
  }

  @Test
  void threeAgentsInARingConverge() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.start("b", Map.of());
      ReplicaAgent x = c.start("c", Map.of());
      load(a, "a", 0, 800);
      load(b, "b", 0, 700);
      load(x, "c", 0, 600);
      assertThat(repair(a, b).ok).isTrue();
      assertThat(repair(b, x).ok).isTrue();
      assertThat(repair(x, a).ok).isTrue();
      assertThat(repair(a, b).ok).isTrue();
      assertConverged(a, b, x);
      assertThat(contents(a.store())).hasSize(2100);
    }
  }

  @Test
  void writesContinuingDuringRepairAreSettledByTheNextRound() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of("batch-records", "100", "rate-limit", "2MiB"));
      ReplicaAgent b = c.start("b", Map.of());
      load(a, "k", 0, 20_000);
      AtomicBoolean stop = new AtomicBoolean();
      Thread writer =
          new Thread(
              () -> {
                int i = 0;
                while (!stop.get()) {
                  (i % 2 == 0 ? a : b).store().put(b("live" + (i % 500)), b("v" + i));
                  i++;
                }
              });
      writer.start();
      RoundReport r;
      try {
        r = repair(a, b);
      } finally {
        stop.set(true);
        writer.join();
      }
      assertThat(r.ok).as(String.valueOf(r.error)).isTrue();
      RoundReport r2 = repair(a, b);
      assertThat(r2.ok).isTrue();
      assertConverged(a, b);
    }
  }

  @Test
  void dryRunMovesNothingAndItsReportTimesItsParts() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      ReplicaAgent a = c.start("a", Map.of());
      ReplicaAgent b = c.start("b", Map.of());
      load(a, "k", 0, 300);
      load(b, "j", 0, 200);
      long t0 = System.nanoTime();
      RoundReport r = repair(a, b, true);
      long wallMicros = (System.nanoTime() - t0) / 1_000;
      assertThat(r.ok).isTrue();
      assertThat(r.missingRemote).isEqualTo(300);
      assertThat(r.missingLocal).isEqualTo(200);
      assertThat(r.toJson().getLong("wouldSend")).isEqualTo(300);
      assertThat(r.recordsSent + r.recordsReceived).isZero();
      assertThat(contents(b.store())).hasSize(200);

      // Timings in microseconds: a dry run's initiator waits for the responder's Done after its
      // own, so the round outlasts the session, and the caller's clock outlasts the round.
      assertThat(r.sessionMicros).isPositive();
      assertThat(r.durationMicros).isGreaterThan(r.sessionMicros).isLessThanOrEqualTo(wallMicros);
      assertThat(r.sessionMillis).isEqualTo(r.sessionMicros / 1_000);
      assertThat(r.durationMillis).isEqualTo(r.durationMicros / 1_000);
      assertThat(r.toJson().getLong("sessionMicros")).isEqualTo(r.sessionMicros);
      assertThat(r.toJson().getLong("durationMicros")).isEqualTo(r.durationMicros);
    }
  }

  @Test
  void lowEstimatesDoubleTheTableAgainstRealAgents() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      var low = ExactEstimator.factory(0.01);
      ReplicaAgent a = c.start("a", Map.of("mode", "estimator"), low);
      ReplicaAgent b = c.start("b", Map.of("mode", "estimator"), low);
      // Identical common records, then the same keys written on both sides: those elements differ
      // but the counts stay equal, so the count difference gives no lower bound and the low
      // estimate stands.
      loadCommon(a, b, 20_000);
      load(a, "k", 0, 300);
      load(b, "k", 0, 300);
      RoundReport r = repair(a, b);
      assertThat(r.ok).as(String.valueOf(r.error)).isTrue();
      assertThat(r.stats.doublings()).isPositive();
      assertThat(r.fallbackPartitions).isZero();
      assertConverged(a, b);
    }
  }

  @Test
  void differenceBeyondTheLargestTableFallsBackAgainstRealAgents() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      Map<String, String> small =
          Map.of("iblt-max-log2", "8", "mode", "estimator"); // 768 cells: too few for ~750
      var low = ExactEstimator.factory(0.001);
      ReplicaAgent a = c.start("a", small, low);
      ReplicaAgent b = c.start("b", small, low);
      load(a, "k", 0, 3000);
      load(b, "k", 0, 3000);
      RoundReport r = repair(a, b);
      assertThat(r.ok).as(String.valueOf(r.error)).isTrue();
      assertThat(r.fallbackPartitions).isEqualTo(8);
      assertThat(r.stats.doublings()).isPositive();
      assertConverged(a, b);
    }
  }

  @Test
  void interruptedRoundResumesAndLosesNothing() throws Exception {
    try (AgentCluster c = new AgentCluster(dir)) {
      // Slow stream: ~20 records per 100 ms batch so the responder can be stopped mid-stream.
      ReplicaAgent a =
          c.start("a", Map.of("batch-records", "50", "rate-limit", "32KiB", "idle-timeout", "2s"));
      ReplicaAgent b = c.start("b", Map.of());
      load(a, "k", 0, 4000);
      var round = a.repair(AgentCluster.peerOf(b), false);
      Thread.sleep(1500);
      Path bData = b.config().dataDir();
      int bPort = b.peerPort();
      c.stop(b); // kill the receiver mid-stream
      RoundReport broken = round.toCompletionStage().toCompletableFuture().get();
      assertThat(broken.ok).isFalse();
      int partial = contents(a.store()).size();
      assertThat(partial).isEqualTo(4000);
      // Same address: progress is kept per peer address.
      ReplicaAgent b2 =
          c.start("b", Map.of("data", bData.toString(), "peer-listen", "127.0.0.1:" + bPort));
      int before = contents(b2.store()).size();
      assertThat(before).as("some records arrived before the stop").isBetween(1, 3999);
      RoundReport resumed = repair(a, b2);
      assertThat(resumed.ok).as(String.valueOf(resumed.error)).isTrue();
      assertThat(resumed.resumedFrom).as("partitions finished before the stop").isPositive();
      RoundReport full = repair(a, b2);
      assertThat(full.ok).isTrue();
      assertConverged(a, b2);
      assertThat(contents(b2.store())).hasSize(4000);
    }
  }
}
