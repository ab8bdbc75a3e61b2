package dev.reconcile.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.agent.AgentConfig;
import dev.reconcile.agent.ReplicaAgent;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import dev.reconcile.estimator.EstimatorKinds;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The apply bench's correctness column: a read-back that differs in one byte is not equal. */
class ApplyBenchTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(
      strings = {"rocksdb-wal", "rocksdb-sst", "store-no-sketches", "store", "store-one-batch"})
  void theReadBackIsComparedRecordByRecord(String mode) throws Exception {
    SketchParams params =
        ReplicaAgent.sketchParams(
            AgentConfig.fromMap(Map.of("data", dir.toString(), "node-id", "t")),
            EstimatorKinds.defaults());
    ApplyBench.Config c = new ApplyBench.Config(400, 50, 64, 1, dir, 5);
    List<ReplicaRecord> records = ApplyBench.records(c, params);
    Path db = dir.resolve(mode);
    ApplyBench.write(mode, db, records, c.batchRecords(), params, EstimatorKinds.defaults());
    assertThat(ApplyBench.verify(mode, db, records, params, EstimatorKinds.defaults())).isTrue();

    List<ReplicaRecord> changed = new ArrayList<>(records);
    ReplicaRecord r = changed.get(217);
    byte[] v = r.value().clone();
    v[3] ^= 1;
    changed.set(217, ReplicaRecord.of(r.key(), v, r.version(), r.origin()));
    assertThat(ApplyBench.verify(mode, db, changed, params, EstimatorKinds.defaults())).isFalse();
    assertThat(
            ApplyBench.verify(mode, db, records.subList(0, 399), params, EstimatorKinds.defaults()))
        .isFalse();
  }
}
