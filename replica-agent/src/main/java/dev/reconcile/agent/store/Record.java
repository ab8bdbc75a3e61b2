package dev.reconcile.agent.store;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * One replicated record: a key, its value, the hybrid-logical-clock {@code version} of the write,
 * the {@code origin} (see {@link NodeIds#origin}) of the replica that made it, and a tombstone
 * flag. A delete is a tombstone with an empty value.
 *
 * <p>The arrays are not copied (records are built on hot paths); callers must not mutate them after
 * handing a record over. Equality and hash code are by content.
 */
@SuppressWarnings("JavaLangClash") // moves to core as ReplicaRecord
public record Record(byte[] key, byte[] value, long version, long origin, boolean tombstone) {
  private static final byte[] EMPTY = new byte[0];

  public Record {
    if (key == null) {
      throw new IllegalArgumentException("record key is null");
    }
    if (value == null) {
      if (!tombstone) {
        throw new IllegalArgumentException("record value is null (only a tombstone may omit it)");
      }
      value = EMPTY;
    }
    if (tombstone && value.length != 0) {
      throw new IllegalArgumentException(
          "tombstone for key " + hex(key, 32) + " carries a " + value.length + "-byte value");
    }
  }

  /** A live record. */
  public static Record of(byte[] key, byte[] value, long version, long origin) {
    return new Record(key, value, version, origin, false);
  }

  /** A tombstone (delete marker). */
  public static Record tombstone(byte[] key, long version, long origin) {
    return new Record(key, EMPTY, version, origin, true);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Record r
        && r.version == version
        && r.origin == origin
        && r.tombstone == tombstone
        && Arrays.equals(r.key, key)
        && Arrays.equals(r.value, value);
  }

  @Override
  public int hashCode() {
    int h = Arrays.hashCode(key);
    h = 31 * h + Arrays.hashCode(value);
    h = 31 * h + Long.hashCode(version);
    h = 31 * h + Long.hashCode(origin);
    return 31 * h + (tombstone ? 1 : 0);
  }

  @Override
  public String toString() {
    return "Record{key="
        + hex(key, 32)
        + (tombstone ? ", tombstone" : ", value=" + value.length + "B " + hex(value, 16))
        + ", version="
        + HybridClock.describe(version)
        + ", origin="
        + String.format("%016x", origin)
        + "}";
  }

  static String hex(byte[] b, int max) {
    String h = HexFormat.of().formatHex(b, 0, Math.min(b.length, max));
    return "0x" + h + (b.length > max ? "...(" + b.length + "B)" : "");
  }
}
