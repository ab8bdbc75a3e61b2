package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.UnknownFieldSet;
import com.google.protobuf.UnsafeByteOperations;
import dev.reconcile.core.wire.RecordBatch;
import dev.reconcile.core.wire.RecordProto;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** The batch checksum, which reads the records' fields in place, against its definition. */
class RecordBatchesTest {
  /** The definition: CRC32C of partition (4 B LE), sequence (8 B LE), the serialized records. */
  private static int crcBySerializing(int partition, long seq, List<RecordProto> records) {
    CRC32C c = new CRC32C();
    c.update(
        ByteBuffer.allocate(12)
            .order(ByteOrder.LITTLE_ENDIAN)
            .putInt(partition)
            .putLong(seq)
            .flip());
    for (RecordProto r : records) {
      c.update(r.toByteArray());
    }
    return (int) c.getValue();
  }

  private static final int[] SIZES = {0, 1, 127, 128, 300, 16_383, 16_384, 70_000, 2_097_152};

  private static ByteString bytes(SplittableRandom r, int n) {
    byte[] b = new byte[n];
    r.nextBytes(b);
    if (n > 1 && r.nextBoolean()) { // a rope: ByteString writes it piece by piece
      return ByteString.copyFrom(b, 0, n / 2).concat(ByteString.copyFrom(b, n / 2, n - n / 2));
    }
    return ByteString.copyFrom(b);
  }

  private static RecordProto record(SplittableRandom r) {
    RecordProto.Builder b =
        RecordProto.newBuilder()
            .setKey(bytes(r, SIZES[r.nextInt(5)] + r.nextInt(2)))
            .setValue(bytes(r, SIZES[r.nextInt(SIZES.length)]))
            .setVersion(r.nextInt(3) == 0 ? 0 : r.nextLong())
            .setOrigin(r.nextInt(3) == 0 ? 0 : r.nextLong())
            .setTombstone(r.nextBoolean());
    if (r.nextInt(6) == 0) { // a newer sender's field this version does not know
      b.setUnknownFields(
          UnknownFieldSet.newBuilder()
              .addField(
                  9 + r.nextInt(3),
                  UnknownFieldSet.Field.newBuilder().addVarint(r.nextLong()).build())
              .build());
    }
    return b.build();
  }

  @Test
  void checksumEqualsTheChecksumOfTheSerializedRecords() throws Exception {
    long seed = 7_2026_1202L;
    SplittableRandom r = new SplittableRandom(seed);
    for (int trial = 0; trial < 60; trial++) {
      int partition = r.nextInt(1 << 16);
      long seq = r.nextLong();
      List<RecordProto> records = new ArrayList<>();
      int n = trial == 0 ? 0 : r.nextInt(1, 12);
      for (int i = 0; i < n; i++) {
        records.add(record(r));
      }
      int expected = crcBySerializing(partition, seq, records);
      assertThat(RecordBatches.crc(partition, seq, records))
          .as("seed %d trial %d", seed, trial)
          .isEqualTo(expected);

      // as received: parsed from a frame with aliasing, so the fields are slices of the frame
      byte[] frame =
          RecordBatch.newBuilder()
              .setPartition(partition)
              .setBatchSeq(seq)
              .addAllRecords(records)
              .build()
              .toByteArray();
      // Aliasing needs an input declared immutable, as the agent's FrameChannel.parse declares it.
      CodedInputStream in = UnsafeByteOperations.unsafeWrap(frame).newCodedInput();
      in.enableAliasing(true);
      RecordBatch parsed = RecordBatch.parser().parseFrom(in);
      assertThat(RecordBatches.crc(partition, seq, parsed.getRecordsList()))
          .as("seed %d trial %d, parsed", seed, trial)
          .isEqualTo(expected);
    }
  }

  @Test
  void checksumChangesWithOneFlippedByteOfAValue() {
    SplittableRandom r = new SplittableRandom(3);
    byte[] v = new byte[1000];
    r.nextBytes(v);
    RecordProto a =
        RecordProto.newBuilder()
            .setKey(ByteString.copyFromUtf8("k"))
            .setValue(ByteString.copyFrom(v))
            .build();
    v[517] ^= 0x10;
    RecordProto b = a.toBuilder().setValue(ByteString.copyFrom(v)).build();
    assertThat(RecordBatches.crc(1, 2, List.of(a)))
        .isNotEqualTo(RecordBatches.crc(1, 2, List.of(b)));
  }
}
