package dev.reconcile.core;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * One record as a row: the layout the agent's store keeps its records in and the one {@code
 * RowBatch} frames carry (docs/wire-format.md, "record rows"), so that a bulk partition goes from
 * one store to the other without being decoded into objects and encoded again. All integers
 * big-endian; the layout is frozen under its format byte.
 *
 * <pre>
 *  offset  size  field
 *  0       1     format            0x01 (this layout); any other value is refused
 *  1       8     version           hybrid logical clock
 *  9       8     origin            writer's node origin
 *  17      1     flags             bit 0 = tombstone; bits 1-7 must be 0
 *  18      8     valueHash         HashSpec.valueHash(value) under the store's pinned spec
 *  26      n     value             n = length - 30 (0 for a tombstone)
 *  26+n    4     crc32c            CRC32C of (record key || bytes 0 .. 26+n)
 * </pre>
 *
 * The CRC covers the record key, so a row moved under another key is caught. {@link #problem}
 * checks a row in place; nothing here allocates per row except {@link #record}.
 */
public final class RecordRow {
  public static final byte FORMAT_V1 = 0x01;
  public static final int HEADER = 26;
  public static final int OVERHEAD = HEADER + 4;
  public static final int TOMBSTONE = 1;

  private RecordRow() {}

  /** The length of the row of a record whose value is {@code valueLength} bytes. */
  public static int length(int valueLength) {
    return OVERHEAD + valueLength;
  }

  /** Encodes a row into {@code out} at {@code off}; {@code length(value.length)} bytes. */
  public static void encode(
      byte[] out,
      int off,
      byte[] key,
      long version,
      long origin,
      boolean tombstone,
      long valueHash,
      byte[] value) {
    out[off] = FORMAT_V1;
    putLong(out, off + 1, version);
    putLong(out, off + 9, origin);
    out[off + 17] = (byte) (tombstone ? TOMBSTONE : 0);
    putLong(out, off + 18, valueHash);
    System.arraycopy(value, 0, out, off + HEADER, value.length);
    int end = off + HEADER + value.length;
    CRC32C c = new CRC32C();
    c.update(key, 0, key.length);
    c.update(out, off, end - off);
    putInt(out, end, (int) c.getValue());
  }

  /**
   * Encodes a row into {@code out} from its position, which must have room for {@link #OVERHEAD}
   * plus the value's bytes; afterwards the row is what lies between its position and limit (the
   * position unchanged).
   */
  public static void encode(
      ByteBuffer out,
      byte[] key,
      long version,
      long origin,
      boolean tombstone,
      long valueHash,
      byte[] value) {
    int start = out.position();
    out.put(FORMAT_V1)
        .putLong(version)
        .putLong(origin)
        .put((byte) (tombstone ? TOMBSTONE : 0))
        .putLong(valueHash)
        .put(value);
    int end = out.position();
    CRC32C c = new CRC32C();
    c.update(key, 0, key.length);
    out.limit(end).position(start);
    c.update(out);
    out.limit(end + 4);
    out.putInt(end, (int) c.getValue());
    out.position(start);
  }

  /**
   * What is wrong with the row at {@code row[off, off + len)} of record key {@code key[keyOff,
   * keyOff + keyLen)}, or null when it is sound: length, format, flags, a tombstone's empty value,
   * the CRC. {@code c} is reset and used for the CRC.
   */
  public static String problem(
      byte[] key, int keyOff, int keyLen, byte[] row, int off, int len, CRC32C c) {
    if (len < OVERHEAD) {
      return "record is " + len + " bytes, shorter than the " + OVERHEAD + "-byte minimum";
    }
    if (row[off] != FORMAT_V1) {
      return String.format(
          "unknown record format 0x%02x (this build reads 0x%02x)", row[off], FORMAT_V1);
    }
    c.reset();
    c.update(key, keyOff, keyLen);
    c.update(row, off, len - 4);
    int stored = getInt(row, off + len - 4);
    int computed = (int) c.getValue();
    if (stored != computed) {
      return String.format("CRC32C mismatch: stored 0x%08x, computed 0x%08x", stored, computed);
    }
    int flags = row[off + 17] & 0xFF;
    if ((flags & ~TOMBSTONE) != 0) {
      return String.format("unknown flag bits 0x%02x", flags);
    }
    if ((flags & TOMBSTONE) != 0 && len != OVERHEAD) {
      return "tombstone carries a " + (len - OVERHEAD) + "-byte value";
    }
    return null;
  }

  public static long version(byte[] row, int off) {
    return getLong(row, off + 1);
  }

  public static long origin(byte[] row, int off) {
    return getLong(row, off + 9);
  }

  public static boolean tombstone(byte[] row, int off) {
    return (row[off + 17] & TOMBSTONE) != 0;
  }

  public static long valueHash(byte[] row, int off) {
    return getLong(row, off + 18);
  }

  /** The record of a sound row (see {@link #problem}); key and value copied. */
  public static ReplicaRecord record(
      byte[] key, int keyOff, int keyLen, byte[] row, int off, int len) {
    byte[] k = new byte[keyLen];
    System.arraycopy(key, keyOff, k, 0, keyLen);
    byte[] v = new byte[len - OVERHEAD];
    System.arraycopy(row, off + HEADER, v, 0, v.length);
    return new ReplicaRecord(k, v, version(row, off), origin(row, off), tombstone(row, off));
  }

  public static void putLong(byte[] b, int off, long v) {
    for (int i = 7; i >= 0; i--) {
      b[off + i] = (byte) v;
      v >>>= 8;
    }
  }

  public static long getLong(byte[] b, int off) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = v << 8 | (b[off + i] & 0xFF);
    }
    return v;
  }

  public static void putInt(byte[] b, int off, int v) {
    b[off] = (byte) (v >>> 24);
    b[off + 1] = (byte) (v >>> 16);
    b[off + 2] = (byte) (v >>> 8);
    b[off + 3] = (byte) v;
  }

  public static int getInt(byte[] b, int off) {
    return (b[off] & 0xFF) << 24
        | (b[off + 1] & 0xFF) << 16
        | (b[off + 2] & 0xFF) << 8
        | (b[off + 3] & 0xFF);
  }
}
