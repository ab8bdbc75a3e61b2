package dev.reconcile.agent.store;

import dev.reconcile.core.ReplicaRecord;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Encoding of a record in the {@code records} column family (value of the row keyed by the record
 * key). All integers big-endian.
 *
 * <pre>
 *  offset  size  field
 *  0       1     format            0x01 (this layout); any other value is refused
 *  1       8     version           hybrid logical clock
 *  9       8     origin            writer's NodeIds.origin
 *  17      1     flags             bit 0 = tombstone; bits 1-7 must be 0
 *  18      8     valueHash         HashSpec.valueHash(value) under the store's pinned spec
 *  26      n     value             n = length - 30 (0 for a tombstone)
 *  26+n    4     crc32c            CRC32C of (row key || bytes 0 .. 26+n)
 * </pre>
 *
 * The CRC covers the row key too, so a value moved under another key is caught. Decoding validates
 * format, length, flags and CRC and throws {@link StoreException.Corrupt} with the key and the
 * values found: a corrupt record is never applied over, served, or counted in a sketch.
 */
final class RecordCodec {
  static final byte FORMAT_V1 = 0x01;
  static final int HEADER = 26;
  static final int OVERHEAD = HEADER + 4;
  static final int TOMBSTONE = 1;

  private RecordCodec() {}

  /** A decoded record and its stored value hash. */
  static final class Stored {
    final byte[] key;
    final byte[] value;
    final long version;
    final long origin;
    final boolean tombstone;
    final long valueHash;

    Stored(byte[] key, byte[] value, long version, long origin, boolean tombstone, long valueHash) {
      this.key = key;
      this.value = value;
      this.version = version;
      this.origin = origin;
      this.tombstone = tombstone;
      this.valueHash = valueHash;
    }

    ReplicaRecord toRecord() {
      return new ReplicaRecord(key, value, version, origin, tombstone);
    }
  }

  static byte[] encode(
      byte[] key, long version, long origin, boolean tombstone, long valueHash, byte[] value) {
    byte[] out = new byte[OVERHEAD + value.length];
    out[0] = FORMAT_V1;
    putLong(out, 1, version);
    putLong(out, 9, origin);
    out[17] = (byte) (tombstone ? TOMBSTONE : 0);
    putLong(out, 18, valueHash);
    System.arraycopy(value, 0, out, HEADER, value.length);
    int crc = crc(key, out, out.length - 4);
    putInt(out, out.length - 4, crc);
    return out;
  }

  /**
   * {@link #encode} into {@code out} from its position, which must have room for {@link #OVERHEAD}
   * plus the value's bytes; afterwards the encoded bytes are what remains between its position and
   * limit (the position unchanged).
   */
  static void encode(
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

  static Stored decode(byte[] key, byte[] b) {
    if (b.length < OVERHEAD) {
      throw corrupt(
          key, "record is " + b.length + " bytes, shorter than the " + OVERHEAD + "-byte minimum");
    }
    if (b[0] != FORMAT_V1) {
      throw corrupt(
          key,
          String.format("unknown record format 0x%02x (this build reads 0x%02x)", b[0], FORMAT_V1));
    }
    int stored = getInt(b, b.length - 4);
    int computed = crc(key, b, b.length - 4);
    if (stored != computed) {
      throw corrupt(
          key, String.format("CRC32C mismatch: stored 0x%08x, computed 0x%08x", stored, computed));
    }
    int flags = b[17] & 0xFF;
    if ((flags & ~TOMBSTONE) != 0) {
      throw corrupt(key, String.format("unknown flag bits 0x%02x", flags));
    }
    boolean tomb = (flags & TOMBSTONE) != 0;
    int n = b.length - OVERHEAD;
    if (tomb && n != 0) {
      throw corrupt(key, "tombstone carries a " + n + "-byte value");
    }
    byte[] value = new byte[n];
    System.arraycopy(b, HEADER, value, 0, n);
    return new Stored(key, value, getLong(b, 1), getLong(b, 9), tomb, getLong(b, 18));
  }

  private static StoreException.Corrupt corrupt(byte[] key, String what) {
    return new StoreException.Corrupt(
        "corrupt record for key " + ReplicaRecord.hex(key, 32) + ": " + what);
  }

  static int crc(byte[] key, byte[] b, int len) {
    CRC32C c = new CRC32C();
    c.update(key, 0, key.length);
    c.update(b, 0, len);
    return (int) c.getValue();
  }

  static void putLong(byte[] b, int off, long v) {
    for (int i = 7; i >= 0; i--) {
      b[off + i] = (byte) v;
      v >>>= 8;
    }
  }

  static long getLong(byte[] b, int off) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = v << 8 | (b[off + i] & 0xFF);
    }
    return v;
  }

  static void putInt(byte[] b, int off, int v) {
    b[off] = (byte) (v >>> 24);
    b[off + 1] = (byte) (v >>> 16);
    b[off + 2] = (byte) (v >>> 8);
    b[off + 3] = (byte) v;
  }

  static int getInt(byte[] b, int off) {
    return (b[off] & 0xFF) << 24
        | (b[off + 1] & 0xFF) << 16
        | (b[off + 2] & 0xFF) << 8
        | (b[off + 3] & 0xFF);
  }
}
