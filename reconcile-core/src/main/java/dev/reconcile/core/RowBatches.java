package dev.reconcile.core;

import com.google.protobuf.ByteOutput;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import dev.reconcile.core.wire.Refusal.Code;
import dev.reconcile.core.wire.RowBatch;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Records of a bulk partition to and from {@link RowBatch} frames (docs/wire-format.md, "row
 * batches"): the rows of {@link RecordRow}, each preceded by its record key, with no message per
 * record.
 *
 * <pre>
 *   rows  = count x ( varint keyLength | key | varint rowLength | row )
 *   crc32c = CRC32C( partition (4 B LE) | batch_seq (8 B LE) | rows )
 * </pre>
 *
 * A received batch is checked whole before anything of it is used ({@link #read}): the batch
 * checksum, the framing (every length within the bytes, exactly {@code count} rows, nothing after),
 * the caps, and every row (its own CRC, format, flags, a tombstone's empty value, the value hash
 * against the value under the session's hash spec, the key's partition). The checked rows are a
 * view over the frame's bytes ({@link Rows}): offsets in primitive arrays, no record objects.
 */
public final class RowBatches {
  /** The least bytes a row takes in {@code rows}: two one-byte lengths, a key byte, a row. */
  static final int MIN_ROW_BYTES = 1 + 1 + 1 + RecordRow.OVERHEAD;

  private RowBatches() {}

  /** Rows gathered for one batch, in the order they are added. Not thread-safe; use once. */
  public static final class Builder {
    private final HashSpec spec;
    private byte[] buf;
    private int len;
    private int count;
    private long payloadBytes;
    private final int expected;
    private final List<byte[]> tombstoneKeys = new ArrayList<>();
    private long[] tombstoneVersions = new long[0];

    /**
     * {@code spec} hashes the values of records added as objects ({@link #add}); {@code
     * expectedBytes} is about what the batch will hold: the buffer starts at no more than 64 KiB (a
     * small partition does not pay for a full batch) and doubles up to it, then past it.
     */
    public Builder(HashSpec spec, int expectedBytes) {
      this(spec, expectedBytes, 0);
    }

    /**
     * As {@link #Builder(HashSpec, int)}, with the buffer starting at {@code previousBytes} plus an
     * eighth when that is more than 64 KiB (up to {@code expectedBytes}): the bytes of the batch
     * before from the same source. A source whose batches fill to the cap (a partition streamed
     * whole, large records) then fills one buffer instead of copying it through five doublings,
     * which allocated three times and copied twice what the batch held.
     */
    public Builder(HashSpec spec, int expectedBytes, int previousBytes) {
      this.spec = spec;
      this.expected = Math.max(64, expectedBytes);
      long first = Math.max(64 << 10, previousBytes + (long) (previousBytes >>> 3));
      this.buf = new byte[(int) Math.min(expected, first)];
    }

    /** Appends the row {@code row[rowOff, rowOff + rowLen)} of the key {@code key[keyOff, ...)}. */
    public void addRow(byte[] key, int keyOff, int keyLen, byte[] row, int rowOff, int rowLen) {
      ensure(10 + keyLen + 5 + rowLen);
      len = putVarint(buf, len, keyLen);
      System.arraycopy(key, keyOff, buf, len, keyLen);
      len += keyLen;
      len = putVarint(buf, len, rowLen);
      System.arraycopy(row, rowOff, buf, len, rowLen);
      len += rowLen;
      if (rowLen >= RecordRow.OVERHEAD && RecordRow.tombstone(row, rowOff)) {
        noteTombstone(
            Arrays.copyOfRange(key, keyOff, keyOff + keyLen), RecordRow.version(row, rowOff));
      }
      count++;
      payloadBytes += keyLen + (rowLen - RecordRow.OVERHEAD);
    }

    /** Appends a record, encoding its row. */
    public void add(ReplicaRecord r) {
      byte[] key = r.key();
      byte[] value = r.value();
      int rowLen = RecordRow.length(value.length);
      ensure(10 + key.length + 5 + rowLen);
      len = putVarint(buf, len, key.length);
      System.arraycopy(key, 0, buf, len, key.length);
      len += key.length;
      len = putVarint(buf, len, rowLen);
      RecordRow.encode(
          buf, len, key, r.version(), r.origin(), r.tombstone(), spec.valueHash(value), value);
      len += rowLen;
      if (r.tombstone()) {
        noteTombstone(key, r.version());
      }
      count++;
      payloadBytes += key.length + value.length;
    }

    private void noteTombstone(byte[] key, long version) {
      int t = tombstoneKeys.size();
      if (t == tombstoneVersions.length) {
        tombstoneVersions = Arrays.copyOf(tombstoneVersions, Math.max(8, t * 2));
      }
      tombstoneVersions[t] = version;
      tombstoneKeys.add(key);
    }

    /**
     * Tombstones among the rows added so far (kept apart as they are added, so that a reader of the
     * batch need not walk its rows for them).
     */
    public int tombstones() {
      return tombstoneKeys.size();
    }

    /** The key of tombstone {@code i} (see {@link #tombstones}). */
    public byte[] tombstoneKey(int i) {
      return tombstoneKeys.get(i);
    }

    /** The version of tombstone {@code i}. */
    public long tombstoneVersion(int i) {
      return tombstoneVersions[i];
    }

    /** Rows added. */
    public int count() {
      return count;
    }

    /** Bytes of the rows so far as they go on the wire: keys, rows and their lengths. */
    public int bytes() {
      return len;
    }

    /** Key and value bytes added. */
    public long payloadBytes() {
      return payloadBytes;
    }

    /** The buffer's size now (tests). */
    int capacity() {
      return buf.length;
    }

    /** The rows added as batch {@code seq} of {@code partition}; the builder is spent. */
    public RowBatch build(int partition, long seq) {
      CRC32C c = new CRC32C();
      c.update(header(partition, seq));
      c.update(buf, 0, len);
      RowBatch b =
          RowBatch.newBuilder()
              .setPartition(partition)
              .setBatchSeq(seq)
              .setCount(count)
              .setRows(UnsafeByteOperations.unsafeWrap(buf, 0, len))
              .setCrc32C((int) c.getValue())
              .build();
      buf = null;
      return b;
    }

    private void ensure(int more) {
      if (buf.length - len < more) {
        long doubled = 2L * buf.length;
        long next = buf.length < expected ? Math.min(doubled, expected) : doubled;
        buf = Arrays.copyOf(buf, (int) Math.min(Integer.MAX_VALUE - 8, Math.max(next, len + more)));
      }
    }
  }

  /**
   * The checked rows of a received batch: a view over the frame's bytes. Row {@code i}'s key is
   * {@code array()[keyOffset(i), keyOffset(i) + keyLength(i))}, its row (see {@link RecordRow})
   * {@code array()[rowOffset(i), rowOffset(i) + rowLength(i))}.
   */
  public static final class Rows {
    private final byte[] a;
    private final int[] keyOff;
    private final int[] keyLen;
    private final int[] rowOff;
    private final int[] rowLen;
    private final long[] keyHash;
    private final int n;
    private final long maxVersion;

    private Rows(
        byte[] a,
        int[] keyOff,
        int[] keyLen,
        int[] rowOff,
        int[] rowLen,
        long[] keyHash,
        int n,
        long maxVersion) {
      this.a = a;
      this.keyOff = keyOff;
      this.keyLen = keyLen;
      this.rowOff = rowOff;
      this.rowLen = rowLen;
      this.keyHash = keyHash;
      this.n = n;
      this.maxVersion = maxVersion;
    }

    public int size() {
      return n;
    }

    /** The bytes the offsets point into; not to be written. */
    public byte[] array() {
      return a;
    }

    public int keyOffset(int i) {
      return keyOff[i];
    }

    public int keyLength(int i) {
      return keyLen[i];
    }

    public int rowOffset(int i) {
      return rowOff[i];
    }

    public int rowLength(int i) {
      return rowLen[i];
    }

    /** {@code HashSpec.keyHash} of row {@code i}'s key under the session's spec. */
    public long keyHash(int i) {
      return keyHash[i];
    }

    public long version(int i) {
      return RecordRow.version(a, rowOff[i]);
    }

    /**
     * The largest version of the rows (unsigned), so that a check against a bound can skip the rows
     * when it passes; 0 when there are none.
     */
    public long maxVersion() {
      return maxVersion;
    }

    public boolean tombstone(int i) {
      return RecordRow.tombstone(a, rowOff[i]);
    }

    /** Row {@code i}'s key, copied. */
    public byte[] key(int i) {
      return Arrays.copyOfRange(a, keyOff[i], keyOff[i] + keyLen[i]);
    }

    /** Row {@code i} as a record (key and value copied). */
    public ReplicaRecord record(int i) {
      return RecordRow.record(a, keyOff[i], keyLen[i], a, rowOff[i], rowLen[i]);
    }

    /** Every row as a record: for stores that take records, not rows. */
    public List<ReplicaRecord> records() {
      List<ReplicaRecord> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        out.add(record(i));
      }
      return out;
    }

    /** The rows not flagged in {@code drop} (as long as {@link #size}), in order. */
    public Rows without(boolean[] drop) {
      int[] ko = new int[n];
      int[] kl = new int[n];
      int[] ro = new int[n];
      int[] rl = new int[n];
      long[] kh = new long[n];
      int m = 0;
      long max = 0;
      for (int i = 0; i < n; i++) {
        if (!drop[i]) {
          max = Long.compareUnsigned(version(i), max) > 0 ? version(i) : max;
          ko[m] = keyOff[i];
          kl[m] = keyLen[i];
          ro[m] = rowOff[i];
          rl[m] = rowLen[i];
          kh[m] = keyHash[i];
          m++;
        }
      }
      return new Rows(a, ko, kl, ro, rl, kh, m, max);
    }
  }

  /**
   * Checks a peer's batch (see the class comment) and returns its rows; a bad batch is refused
   * whole. At most {@code maxRecords} rows; keys of 1 to {@link RecordBatches#MAX_KEY_BYTES} bytes;
   * every key of partition {@code b.getPartition()} of {@code partitionsLog2} under {@code spec}.
   */
  public static Rows read(RowBatch b, int maxRecords, HashSpec spec, int partitionsLog2)
      throws ProtocolException {
    long seq = b.getBatchSeq();
    int count = b.getCount();
    ByteString rows = b.getRows();
    if (count == 0 || Integer.compareUnsigned(count, maxRecords) > 0) {
      throw new ProtocolException(
          count == 0 ? Code.MALFORMED : Code.LIMIT,
          "row batch "
              + seq
              + " claims "
              + Integer.toUnsignedString(count)
              + " rows (1.."
              + maxRecords
              + ")");
    }
    if ((long) count * MIN_ROW_BYTES > rows.size()) {
      throw new ProtocolException(
          Code.MALFORMED,
          "row batch "
              + seq
              + " claims "
              + count
              + " rows in "
              + rows.size()
              + " bytes (each takes at least "
              + MIN_ROW_BYTES
              + ")");
    }
    Slice s = Slice.of(rows);
    CRC32C c = new CRC32C();
    c.update(header(b.getPartition(), seq));
    c.update(s.array, s.offset, s.length);
    if ((int) c.getValue() != b.getCrc32C()) {
      throw new ProtocolException(
          Code.MALFORMED,
          String.format(
              "row batch %d checksum mismatch: frame says 0x%08x, rows hash to 0x%08x (corrupted in"
                  + " transit)",
              seq, b.getCrc32C(), (int) c.getValue()));
    }
    Reader r = new Reader(s.array, s.offset + s.length, count, spec, partitionsLog2, b, c);
    int at = s.offset;
    for (int i = 0; i < count; i++) {
      at = r.row(i, at);
    }
    if (at != r.end) {
      throw new ProtocolException(
          Code.MALFORMED,
          "row batch " + seq + ": " + (r.end - at) + " bytes after its " + count + " rows");
    }
    return new Rows(r.a, r.keyOff, r.keyLen, r.rowOff, r.rowLen, r.keyHash, count, r.maxVersion);
  }

  /**
   * The checks of one row at a time ({@link #row}): a method per row rather than one loop, so that
   * a just-started process compiles it after a few thousand rows instead of running the loop
   * interpreted or in C1 until an on-stack replacement late in the round (benchmarks.md, 3a).
   */
  private static final class Reader {
    final byte[] a;
    final int end;
    final int[] keyOff;
    final int[] keyLen;
    final int[] rowOff;
    final int[] rowLen;
    final long[] keyHash;
    private final HashSpec spec;
    private final int partitionsLog2;
    private final int partition;
    private final long seq;
    private final CRC32C c;
    long maxVersion;

    Reader(byte[] a, int end, int count, HashSpec spec, int partitionsLog2, RowBatch b, CRC32C c) {
      this.a = a;
      this.end = end;
      this.keyOff = new int[count];
      this.keyLen = new int[count];
      this.rowOff = new int[count];
      this.rowLen = new int[count];
      this.keyHash = new long[count];
      this.spec = spec;
      this.partitionsLog2 = partitionsLog2;
      this.partition = b.getPartition();
      this.seq = b.getBatchSeq();
      this.c = c;
    }

    /** Checks row {@code i}, which starts at {@code at}; returns where the next one starts. */
    int row(int i, int at) throws ProtocolException {
      long kl = readVarint(a, at, end);
      if (kl < 0) {
        throw framing(seq, i, "its key length runs past the rows");
      }
      at = skipVarint(a, at);
      if (kl < 1 || kl > RecordBatches.MAX_KEY_BYTES) {
        throw framing(seq, i, "key of " + kl + " bytes (1.." + RecordBatches.MAX_KEY_BYTES + ")");
      }
      if (kl > end - at) {
        throw framing(seq, i, "key of " + kl + " bytes runs past the rows");
      }
      int ko = at;
      at += (int) kl;
      long rl = readVarint(a, at, end);
      if (rl < 0) {
        throw framing(seq, i, "its row length runs past the rows");
      }
      at = skipVarint(a, at);
      if (rl > end - at) {
        throw framing(seq, i, "row of " + rl + " bytes runs past the rows");
      }
      int ro = at;
      String problem = RecordRow.problem(a, ko, (int) kl, a, ro, (int) rl, c);
      if (problem != null) {
        throw framing(seq, i, problem);
      }
      long vh = spec.valueHash(a, ro + RecordRow.HEADER, (int) rl - RecordRow.OVERHEAD);
      if (vh != RecordRow.valueHash(a, ro)) {
        throw framing(
            seq,
            i,
            String.format(
                "value hash 0x%016x, the value hashes to 0x%016x (another hash spec?)",
                RecordRow.valueHash(a, ro), vh));
      }
      long kh = spec.keyHash(a, ko, (int) kl);
      int q = HashSpec.partition(kh, partitionsLog2);
      if (q != partition) {
        throw new ProtocolException(
            Code.MALFORMED,
            "row batch "
                + seq
                + " of partition "
                + partition
                + " holds a record of partition "
                + q);
      }
      keyOff[i] = ko;
      keyLen[i] = (int) kl;
      rowOff[i] = ro;
      rowLen[i] = (int) rl;
      keyHash[i] = kh;
      long v = RecordRow.version(a, ro);
      if (Long.compareUnsigned(v, maxVersion) > 0) {
        maxVersion = v;
      }
      return ro + (int) rl;
    }
  }

  private static ProtocolException framing(long seq, int i, String what) {
    return new ProtocolException(Code.MALFORMED, "row batch " + seq + ", row " + i + ": " + what);
  }

  private static ByteBuffer header(int partition, long seq) {
    ByteBuffer h = ByteBuffer.allocate(12).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    h.putInt(partition).putLong(seq).flip();
    return h;
  }

  static int putVarint(byte[] b, int at, int v) {
    while ((v & ~0x7F) != 0) {
      b[at++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    b[at++] = (byte) v;
    return at;
  }

  /** An unsigned varint of at most 5 bytes at {@code at}, or -1 when it runs past {@code end}. */
  static long readVarint(byte[] b, int at, int end) {
    long v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (at >= end) {
        return -1;
      }
      int x = b[at++];
      v |= (long) (x & 0x7F) << shift;
      if (x >= 0) {
        return v;
      }
    }
    return Long.MAX_VALUE; // over 5 bytes: longer than anything a frame holds
  }

  /** The position after the varint at {@code at} (of at most 5 bytes, see {@link #readVarint}). */
  static int skipVarint(byte[] b, int at) {
    for (int i = 0; i < 4 && b[at] < 0; i++) {
      at++;
    }
    return at + 1;
  }

  /** A {@link ByteString}'s bytes as an array range, without a copy where it has one array. */
  private static final class Slice extends ByteOutput {
    byte[] array;
    int offset;
    int length;
    int parts;

    static Slice of(ByteString b) {
      Slice s = new Slice();
      try {
        UnsafeByteOperations.unsafeWriteTo(b, s);
      } catch (IOException e) {
        throw new IllegalStateException("an in-memory sink cannot fail", e);
      }
      if (s.parts != 1) {
        s.array = b.toByteArray();
        s.offset = 0;
        s.length = s.array.length;
      }
      return s;
    }

    @Override
    public void write(byte value) {
      parts = 2;
    }

    @Override
    public void write(byte[] value, int offset, int length) {
      writeLazy(value, offset, length);
    }

    @Override
    public void writeLazy(byte[] value, int offset, int length) {
      parts++;
      array = value;
      this.offset = offset;
      this.length = length;
    }

    @Override
    public void write(ByteBuffer value) {
      parts = 2;
    }

    @Override
    public void writeLazy(ByteBuffer value) {
      parts = 2;
    }
  }
}
