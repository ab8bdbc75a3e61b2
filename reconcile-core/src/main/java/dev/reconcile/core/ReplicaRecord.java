package dev.reconcile.core;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * One replicated record as the protocol moves it: a key, its value, the {@code version} of the
 * write, the {@code origin} of the replica that made it, and a tombstone flag. A delete is a
 * tombstone with an empty value.
 *
 * <p>A version is a 64-bit hybrid logical clock value, compared as an unsigned number:
 *
 * <pre>
 *   version = physicalMillis << 16 | logical        physicalMillis = version >>> 16
 * </pre>
 *
 * The protocol reads only the physical part (to refuse versions from the future, see {@link
 * RepairConfig#maxClockSkewMillis()}); which record wins is the store's conflict rule.
 *
 * <p>The arrays are not copied (records are built on hot paths); callers must not mutate them after
 * handing a record over. Equality and hash code are by content.
 */
public record ReplicaRecord(
    byte[] key, byte[] value, long version, long origin, boolean tombstone) {
  private static final byte[] EMPTY = new byte[0];

  public ReplicaRecord {
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
  public static ReplicaRecord of(byte[] key, byte[] value, long version, long origin) {
    return new ReplicaRecord(key, value, version, origin, false);
  }

  /** A tombstone (delete marker). */
  public static ReplicaRecord tombstone(byte[] key, long version, long origin) {
    return new ReplicaRecord(key, EMPTY, version, origin, true);
  }

  /** The wall-clock milliseconds of a version. */
  public static long physicalMillis(long version) {
    return version >>> 16;
  }

  /** The logical counter of a version. */
  public static int logical(long version) {
    return (int) (version & 0xFFFF);
  }

  /** The version of {@code physicalMillis} and {@code logical}. */
  public static long version(long physicalMillis, int logical) {
    return physicalMillis << 16 | (logical & 0xFFFF);
  }

  /** {@code physical.logical}, e.g. {@code 1712000000000.3}. */
  public static String describeVersion(long version) {
    return physicalMillis(version) + "." + logical(version);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ReplicaRecord r
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
    return "ReplicaRecord{key="
        + hex(key, 32)
        + (tombstone ? ", tombstone" : ", value=" + value.length + "B " + hex(value, 16))
        + ", version="
        + describeVersion(version)
        + ", origin="
        + String.format("%016x", origin)
        + "}";
  }

  /** At most {@code max} bytes of {@code b} in hex, {@code 0x...}, with the length when cut. */
  public static String hex(byte[] b, int max) {
    String h = HexFormat.of().formatHex(b, 0, Math.min(b.length, max));
    return "0x" + h + (b.length > max ? "...(" + b.length + "B)" : "");
  }
}
