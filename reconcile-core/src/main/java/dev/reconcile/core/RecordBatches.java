package dev.reconcile.core;

import com.google.protobuf.ByteOutput;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
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

  /**
   * The batch checksum of {@code records} as batch {@code seq} of {@code partition}.
   *
   * <p>The records are not serialized for it: the checksum takes each record's serialized form
   * piece by piece, as {@code RecordProto.writeTo} would write it (proto3: the fields in number
   * order, each only when it is not its default, then any unknown fields), with the key and value
   * bytes read where they are (a received batch's fields alias its frame). {@code
   * RecordBatchesTest} checks it against the serialized records.
   */
  public static int crc(int partition, long seq, List<RecordProto> records) {
    CRC32C c = new CRC32C();
    byte[] head = new byte[32]; // the largest run of non-bytes fields: 2 * (1 + 8) + 2
    ByteBuffer le = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN);
    le.putInt(0, partition).putLong(4, seq);
    c.update(head, 0, 12);
    ByteOutput sink = new CrcSink(c);
    for (RecordProto r : records) {
      if (!r.getKey().isEmpty()) {
        bytesField(c, sink, head, KEY_TAG, r.getKey());
      }
      if (!r.getValue().isEmpty()) {
        bytesField(c, sink, head, VALUE_TAG, r.getValue());
      }
      int n = 0;
      if (r.getVersion() != 0L) {
        head[n] = VERSION_TAG;
        le.putLong(n + 1, r.getVersion());
        n += 9;
      }
      if (r.getOrigin() != 0L) {
        head[n] = ORIGIN_TAG;
        le.putLong(n + 1, r.getOrigin());
        n += 9;
      }
      if (r.getTombstone()) {
        head[n++] = TOMBSTONE_TAG;
        head[n++] = 1;
      }
      c.update(head, 0, n);
      UnknownFieldSet unknown = r.getUnknownFields();
      if (unknown.getSerializedSize() > 0) {
        c.update(unknown.toByteArray());
      }
    }
    return (int) c.getValue();
  }

  // RecordProto's field tags: (field number << 3) | wire type (2 length-delimited, 1 fixed64, 0
  // varint)
  private static final byte KEY_TAG = (1 << 3) | 2;
  private static final byte VALUE_TAG = (2 << 3) | 2;
  private static final byte VERSION_TAG = (3 << 3) | 1;
  private static final byte ORIGIN_TAG = (4 << 3) | 1;
  private static final byte TOMBSTONE_TAG = 5 << 3;

  /** A bytes field into the checksum: tag, varint length, then the bytes where they lie. */
  private static void bytesField(CRC32C c, ByteOutput sink, byte[] head, byte tag, ByteString b) {
    int n = 0;
    head[n++] = tag;
    int len = b.size();
    while ((len & ~0x7F) != 0) {
      head[n++] = (byte) ((len & 0x7F) | 0x80);
      len >>>= 7;
    }
    head[n++] = (byte) len;
    c.update(head, 0, n);
    try {
      UnsafeByteOperations.unsafeWriteTo(b, sink);
    } catch (IOException e) {
      throw new IllegalStateException("a checksum sink cannot fail", e);
    }
  }

  /** Feeds whatever a {@link ByteString} writes to a CRC, without copying its bytes. */
  private static final class CrcSink extends ByteOutput {
    private final CRC32C c;

    CrcSink(CRC32C c) {
      this.c = c;
    }

    @Override
    public void write(byte value) {
      c.update(value);
    }

    @Override
    public void write(byte[] value, int offset, int length) {
      c.update(value, offset, length);
    }

    @Override
    public void writeLazy(byte[] value, int offset, int length) {
      c.update(value, offset, length);
    }

    @Override
    public void write(ByteBuffer value) {
      c.update(value);
    }

    @Override
    public void writeLazy(ByteBuffer value) {
      c.update(value);
    }
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
