package dev.reconcile.agent.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ProtocolException;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RowBatches;
import dev.reconcile.core.fuzz.FuzzLoop;
import dev.reconcile.core.fuzz.Mutator;
import dev.reconcile.core.wire.RowBatch;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fuzzing of {@link RowBatches#read} (a bulk partition's rows from a peer): mutated frame bytes
 * through {@link RowBatch#parseFrom}, field edits, and mutated rows under a recomputed batch
 * checksum (so that the framing and every row's own checks are reached, not only the batch
 * checksum). Documented rejections: {@link InvalidProtocolBufferException} and {@link
 * ProtocolException}. An accepted batch must carry exactly the records that were sent.
 */
class RowBatchesFuzzTest {
  private static final int N = 4000 * Mutator.scale();
  private static final HashSpec SPEC = HashSpec.xxh3(99);
  private static final int LOG2 = 3;
  private static final List<RowBatch> BASES = new ArrayList<>();
  private static final List<List<ReplicaRecord>> ORIGINALS = new ArrayList<>();

  static {
    SplittableRandom r = new SplittableRandom(23);
    for (int size : new int[] {1, 3, 20, 120}) {
      int partition = r.nextInt(1 << LOG2);
      List<ReplicaRecord> recs = new ArrayList<>();
      while (recs.size() < size) {
        byte[] key = Mutator.random(r, 1 + r.nextInt(40));
        if (HashSpec.partition(SPEC.keyHash(key), LOG2) != partition) {
          continue;
        }
        boolean tomb = r.nextInt(5) == 0;
        recs.add(
            new ReplicaRecord(
                key,
                tomb ? new byte[0] : Mutator.random(r, r.nextInt(200)),
                r.nextLong(),
                r.nextLong(),
                tomb));
      }
      RowBatches.Builder b = new RowBatches.Builder(SPEC, 64);
      recs.forEach(b::add);
      BASES.add(b.build(partition, r.nextInt(1000)));
      ORIGINALS.add(recs);
    }
  }

  /** {@code b} with mutated rows and a batch checksum that matches them. */
  private static RowBatch resealed(RowBatch b, SplittableRandom r) {
    byte[] rows = Mutator.mutateBytes(b.getRows().toByteArray(), r);
    CRC32C c = new CRC32C();
    c.update(
        ByteBuffer.allocate(12)
            .order(ByteOrder.LITTLE_ENDIAN)
            .putInt(b.getPartition())
            .putLong(b.getBatchSeq())
            .flip());
    c.update(rows);
    return b.toBuilder().setRows(ByteString.copyFrom(rows)).setCrc32C((int) c.getValue()).build();
  }

  static boolean one(SplittableRandom r) throws Exception {
    int k = r.nextInt(BASES.size());
    RowBatch m;
    int how = r.nextInt(3);
    if (how == 0) {
      try {
        m = RowBatch.parseFrom(Mutator.mutateBytes(BASES.get(k).toByteArray(), r));
      } catch (InvalidProtocolBufferException e) {
        FuzzLoop.clearMessage("RowBatch.parseFrom", e);
        return false;
      }
    } else if (how == 1) {
      m = Mutator.mutateFields(BASES.get(k), r);
    } else {
      m = resealed(BASES.get(k), r);
    }
    List<ReplicaRecord> got;
    try {
      got = RowBatches.read(m, 1000, SPEC, LOG2).records();
    } catch (ProtocolException e) {
      FuzzLoop.clearMessage("RowBatches.read", e);
      return false;
    }
    assertThat(got)
        .as("accepted records differ from those sent (a check escaped)")
        .isEqualTo(ORIGINALS.get(k));
    return true;
  }

  @Test
  void rowDecoderSurvivesMutatedBatches() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(120L * Mutator.scale()),
        () -> FuzzLoop.run("RowBatches.read", 13, N, RowBatchesFuzzTest::one));
  }

  /** Regression seeds (a failing seed from the loop above goes here). */
  @ParameterizedTest
  @ValueSource(longs = {0L})
  void regressions(long seed) {
    FuzzLoop.one("RowBatches.read", seed, RowBatchesFuzzTest::one);
  }
}
