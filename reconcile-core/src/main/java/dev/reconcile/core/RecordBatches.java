package dev.reconcile.core;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.UnsafeByteOperations;
import dev.reconcile.core.wire.RecordBatch;
import dev.reconcile.core.wire.RecordProto;
import dev.reconcile.core.wire.Refusal.Code;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Records to and from {@link RecordBatch} frames: the batch checksum and the caps a received batch
 * must meet before anything of it is used. The checksum (format version 2) is the CRC32C of the
 * batch's partition (4 bytes LE) and sequence number (8 bytes LE), then the concatenated serialized
 * records: a batch relabelled to another partition or position fails it.
 */
public final class RecordBatches {
  /** Largest key accepted from a peer. */
  public static final int MAX_KEY_BYTES = 64 * 1024;

  private RecordBatches() {}

  /** The wire form of a record; the arrays are wrapped, not copied (records are immutable). */
  public static RecordProto toProto(ReplicaRecord r) {
    return RecordProto.newBuilder()
        .setKey(UnsafeByteOperations.unsafeWrap(r.key()))
        .setValue(UnsafeByteOperations.unsafeWrap(r.value()))
        .setVersion(r.version())
        .setOrigin(r.origin())
        .setTombstone(r.tombstone())
        .build();
  }

  /** The batch checksum of {@code records} as batch {@code seq} of {@code partition}. */
  public static int crc(int partition, long seq, List<RecordProto> records) {
    CRC32C c = new CRC32C();
    byte[] buf = new byte[256];
    ByteBuffer.wrap(buf, 0, 12).order(ByteOrder.LITTLE_ENDIAN).putInt(partition).putLong(seq);
    c.update(buf, 0, 12);
    for (RecordProto r : records) {
      int n = r.getSerializedSize();
      if (n > buf.length) {
        buf = new byte[Math.max(n, buf.length * 2)];
      }
      CodedOutputStream out = CodedOutputStream.newInstance(buf, 0, n);
      try {
        r.writeTo(out);
      } catch (IOException e) {
        throw new IllegalStateException("serializing to an array cannot fail", e);
      }
      c.update(buf, 0, n);
    }
    return (int) c.getValue();
  }

  /** A batch of {@code records} of {@code partition}. */
  public static RecordBatch batch(int partition, long seq, List<ReplicaRecord> records) {
    List<RecordProto> protos = new ArrayList<>(records.size());
    for (ReplicaRecord r : records) {
      protos.add(toProto(r));
    }
    return RecordBatch.newBuilder()
        .setPartition(partition)
        .setBatchSeq(seq)
        .addAllRecords(protos)
        .setCrc32C(crc(partition, seq, protos))
        .build();
  }

  /**
   * Validates a peer's batch (not empty, at most {@code maxRecords}, checksum, key sizes,
   * tombstones without values) and returns its records; a bad batch is refused whole.
   */
  public static List<ReplicaRecord> read(RecordBatch b, int maxRecords) throws ProtocolException {
    if (b.getRecordsCount() > maxRecords) {
      throw new ProtocolException(
          Code.LIMIT,
          "batch "
              + b.getBatchSeq()
              + " has "
              + b.getRecordsCount()
              + " records, cap "
              + maxRecords);
    }
    if (b.getRecordsCount() == 0) {
      // Never sent (a sender splits non-empty lists); an empty batch with crc 0 is what a batch
      // truncated in transit to its header looks like, and it would be acknowledged as applied.
      throw new ProtocolException(Code.MALFORMED, "batch " + b.getBatchSeq() + " has no records");
    }
    int crc = crc(b.getPartition(), b.getBatchSeq(), b.getRecordsList());
    if (crc != b.getCrc32C()) {
      throw new ProtocolException(
          Code.MALFORMED,
          String.format(
              "batch %d checksum mismatch: frame says 0x%08x, records hash to 0x%08x (corrupted in"
                  + " transit)",
              b.getBatchSeq(), b.getCrc32C(), crc));
    }
    List<ReplicaRecord> out = new ArrayList<>(b.getRecordsCount());
    for (RecordProto r : b.getRecordsList()) {
      ByteString key = r.getKey();
      if (key.isEmpty() || key.size() > MAX_KEY_BYTES) {
        throw new ProtocolException(
            Code.MALFORMED,
            "batch "
                + b.getBatchSeq()
                + ": key of "
                + key.size()
                + " bytes (1.."
                + MAX_KEY_BYTES
                + ")");
      }
      if (r.getTombstone() && !r.getValue().isEmpty()) {
        throw new ProtocolException(
            Code.MALFORMED, "batch " + b.getBatchSeq() + ": tombstone with a value");
      }
      out.add(
          new ReplicaRecord(
              key.toByteArray(),
              r.getValue().toByteArray(),
              r.getVersion(),
              r.getOrigin(),
              r.getTombstone()));
    }
    return out;
  }
}
