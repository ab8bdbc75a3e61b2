package dev.reconcile.agent.net;

import com.google.protobuf.ByteString;
import dev.reconcile.core.ProtocolException;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.wire.RecordBatch;
import dev.reconcile.core.wire.RecordProto;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/** Records to and from {@link RecordBatch} frames, with the batch checksum and size caps. */
public final class BatchCodec {
  /** Largest key accepted from a peer. */
  public static final int MAX_KEY_BYTES = 64 * 1024;

  private BatchCodec() {}

  public static RecordProto toProto(ReplicaRecord r) {
    return RecordProto.newBuilder()
        .setKey(ByteString.copyFrom(r.key()))
        .setValue(ByteString.copyFrom(r.value()))
        .setVersion(r.version())
        .setOrigin(r.origin())
        .setTombstone(r.tombstone())
        .build();
  }

  /** CRC32C of the concatenated serialized records. */
  public static int crc(List<RecordProto> records) {
    CRC32C c = new CRC32C();
    for (RecordProto r : records) {
      c.update(r.toByteArray());
    }
    return (int) c.getValue();
  }

  public static RecordBatch batch(int partition, long seq, List<ReplicaRecord> records) {
    List<RecordProto> protos = new ArrayList<>(records.size());
    for (ReplicaRecord r : records) {
      protos.add(toProto(r));
    }
    return RecordBatch.newBuilder()
        .setPartition(partition)
        .setBatchSeq(seq)
        .addAllRecords(protos)
        .setCrc32C(crc(protos))
        .build();
  }

  /**
   * Validates a peer's batch (not empty, checksum, record count, key sizes, tombstones without
   * values) and returns its records; a bad batch is refused whole.
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
    int crc = crc(b.getRecordsList());
    if (crc != b.getCrc32C()) {
      throw new ProtocolException(
          Code.MALFORMED,
          String.format(
              "batch %d checksum mismatch: frame says 0x%08x, records hash to 0x%08x (corrupted in transit)",
              b.getBatchSeq(), b.getCrc32C(), crc));
    }
    List<ReplicaRecord> out = new ArrayList<>(b.getRecordsCount());
    for (RecordProto r : b.getRecordsList()) {
      if (r.getKey().isEmpty() || r.getKey().size() > MAX_KEY_BYTES) {
        throw new ProtocolException(
            Code.MALFORMED,
            "batch "
                + b.getBatchSeq()
                + ": key of "
                + r.getKey().size()
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
              r.getKey().toByteArray(),
              r.getValue().toByteArray(),
              r.getVersion(),
              r.getOrigin(),
              r.getTombstone()));
    }
    return out;
  }
}
