package dev.reconcile.agent.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.reconcile.core.ProtocolException;
import dev.reconcile.core.RecordBatches;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.fuzz.FuzzLoop;
import dev.reconcile.core.fuzz.Mutator;
import dev.reconcile.core.wire.RecordBatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fuzzing of {@link RecordBatches#read} (repair records from a peer): mutated bytes through {@link
 * RecordBatch#parseFrom} and field edits. Documented rejections: {@link
 * InvalidProtocolBufferException} and {@link ProtocolException}. An accepted batch must carry
 * exactly the records that were sent: a corruption the checksum lets through is a failure.
 */
class RecordBatchesFuzzTest {
  private static final int N = 4000 * Mutator.scale();
  private static final List<RecordBatch> BASES = new ArrayList<>();
  private static final List<List<ReplicaRecord>> ORIGINALS = new ArrayList<>();

  static {
    SplittableRandom r = new SplittableRandom(17);
    for (int size : new int[] {1, 3, 20, 120}) {
      List<ReplicaRecord> recs = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        boolean tomb = r.nextInt(5) == 0;
        recs.add(
            new ReplicaRecord(
                Mutator.random(r, 1 + r.nextInt(40)),
                tomb ? new byte[0] : Mutator.random(r, r.nextInt(200)),
                r.nextLong(),
                r.nextLong(),
                tomb));
      }
      BASES.add(RecordBatches.batch(r.nextInt(16), r.nextInt(1000), recs));
      ORIGINALS.add(recs);
    }
  }

  private static boolean same(List<ReplicaRecord> a, List<ReplicaRecord> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      ReplicaRecord x = a.get(i);
      ReplicaRecord y = b.get(i);
      if (!java.util.Arrays.equals(x.key(), y.key())
          || !java.util.Arrays.equals(x.value(), y.value())
          || x.version() != y.version()
          || x.origin() != y.origin()
          || x.tombstone() != y.tombstone()) {
        return false;
      }
    }
    return true;
  }

  static boolean one(SplittableRandom r) throws Exception {
    int k = r.nextInt(BASES.size());
    RecordBatch m;
    if (r.nextBoolean()) {
      try {
        m = RecordBatch.parseFrom(Mutator.mutateBytes(BASES.get(k).toByteArray(), r));
      } catch (InvalidProtocolBufferException e) {
        FuzzLoop.clearMessage("RecordBatch.parseFrom", e);
        return false;
      }
    } else {
      m = Mutator.mutateFields(BASES.get(k), r);
    }
    List<ReplicaRecord> got;
    try {
      got = RecordBatches.read(m, 1000);
    } catch (ProtocolException e) {
      FuzzLoop.clearMessage("RecordBatches.read", e);
      return false;
    }
    assertThat(same(got, ORIGINALS.get(k)))
        .as("accepted records differ from those sent (checksum escaped)")
        .isTrue();
    return true;
  }

  @Test
  void batchDecoderSurvivesMutatedBatches() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(120L * Mutator.scale()),
        () -> FuzzLoop.run("RecordBatches.read", 11, N, RecordBatchesFuzzTest::one));
  }

  /** Regression seeds (a failing seed from the loop above goes here). */
  @ParameterizedTest
  @ValueSource(
      longs = {
        0L,
        -3719345503411677794L /* truncated to an empty batch with crc 0: was accepted */
      })
  void regressions(long seed) {
    FuzzLoop.one("RecordBatches.read", seed, RecordBatchesFuzzTest::one);
  }
}
