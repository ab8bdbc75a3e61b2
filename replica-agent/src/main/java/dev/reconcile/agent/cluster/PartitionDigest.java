package dev.reconcile.agent.cluster;

import com.dynatrace.hash4j.hashing.HashStream64;
import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import dev.reconcile.core.Fingerprint;
import java.util.Arrays;
import java.util.Base64;
import java.util.function.IntFunction;

/**
 * A compact digest of a replica's partition fingerprints, published to the cluster so that other
 * members can tell, without a round, whether (and roughly where) they differ from it.
 *
 * <p>The P partitions (a power of two) are grouped into {@code B = min(P, 64)} buckets of
 * consecutive partitions: bucket {@code b} covers partitions {@code [b * P / B, (b + 1) * P / B)}.
 * Each bucket holds the low 32 bits of XXH3-64 (seed 0) over the fingerprints (count, sum, sum2;
 * little-endian longs) of its partitions in order. With the default P = 16 every bucket is one
 * partition; the digest is at most 259 bytes whatever P is.
 *
 * <p>Serialized form, version 1, then Base64 (URL alphabet, no padding):
 *
 * <pre>
 * +---------+-----------------+--------------+--------------------------------+
 * | byte 0  | byte 1          | byte 2       | bytes 3 .. 3 + 4B              |
 * | version | log2 partitions | log2 buckets | bucket values, big-endian int32 |
 * +---------+-----------------+--------------+--------------------------------+
 * </pre>
 *
 * <p>The digest is a hint, never a proof: two different buckets collide with probability 2^-32, a
 * digest is up to one repair interval old, and a member of the cluster manager can publish any
 * digest. Peer choice treats equal digests as "probably equal" and still visits such peers by
 * gossip (see {@link PeerChoice}); the round itself compares the full 192-bit fingerprints.
 */
public final class PartitionDigest {
  /** Serialized format version. */
  public static final int VERSION = 1;

  /** Largest number of buckets. */
  public static final int MAX_BUCKETS_LOG2 = 6;

  /** Largest log2 of the partition count a digest may describe (AgentConfig's limit). */
  public static final int MAX_PARTITIONS_LOG2 = 12;

  private static final Hasher64 HASH = Hashing.xxh3_64();

  private final int partitionsLog2;
  private final int[] buckets;

  private PartitionDigest(int partitionsLog2, int[] buckets) {
    this.partitionsLog2 = partitionsLog2;
    this.buckets = buckets;
  }

  /** The digest of {@code 2^partitionsLog2} fingerprints. */
  public static PartitionDigest of(int partitionsLog2, IntFunction<Fingerprint> fingerprint) {
    if (partitionsLog2 < 0 || partitionsLog2 > MAX_PARTITIONS_LOG2) {
      throw new IllegalArgumentException(
          "log2 partitions " + partitionsLog2 + " outside [0, " + MAX_PARTITIONS_LOG2 + "]");
    }
    int bucketsLog2 = Math.min(partitionsLog2, MAX_BUCKETS_LOG2);
    int perBucket = 1 << (partitionsLog2 - bucketsLog2);
    int[] out = new int[1 << bucketsLog2];
    for (int b = 0; b < out.length; b++) {
      HashStream64 h = HASH.hashStream();
      for (int p = b * perBucket; p < (b + 1) * perBucket; p++) {
        Fingerprint f = fingerprint.apply(p);
        h.putLong(f.count()).putLong(f.sum()).putLong(f.sum2());
      }
      out[b] = (int) h.getAsLong();
    }
    return new PartitionDigest(partitionsLog2, out);
  }

  /** Parses {@link #encode}'s form; a clear {@link IllegalArgumentException} on anything else. */
  public static PartitionDigest decode(String s) {
    if (s == null || s.isEmpty()) {
      throw new IllegalArgumentException("empty digest");
    }
    if (s.length() > 400) {
      throw new IllegalArgumentException("digest of " + s.length() + " characters (max 400)");
    }
    byte[] b;
    try {
      b = Base64.getUrlDecoder().decode(s);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("digest is not Base64: " + e.getMessage(), e);
    }
    if (b.length < 3) {
      throw new IllegalArgumentException("digest of " + b.length + " bytes is truncated");
    }
    if (b[0] != VERSION) {
      throw new IllegalArgumentException(
          "digest format version " + (b[0] & 0xff) + " (this agent reads " + VERSION + ")");
    }
    int pLog2 = b[1];
    int bLog2 = b[2];
    if (pLog2 < 0 || pLog2 > MAX_PARTITIONS_LOG2) {
      throw new IllegalArgumentException(
          "digest log2 partitions " + pLog2 + " outside [0, " + MAX_PARTITIONS_LOG2 + "]");
    }
    if (bLog2 != Math.min(pLog2, MAX_BUCKETS_LOG2)) {
      throw new IllegalArgumentException(
          "digest log2 buckets " + bLog2 + " for log2 partitions " + pLog2);
    }
    int n = 1 << bLog2;
    if (b.length != 3 + 4 * n) {
      throw new IllegalArgumentException(
          "digest of " + b.length + " bytes, expected " + (3 + 4 * n) + " for " + n + " buckets");
    }
    int[] buckets = new int[n];
    for (int i = 0; i < n; i++) {
      int o = 3 + 4 * i;
      buckets[i] =
          (b[o] & 0xff) << 24
              | (b[o + 1] & 0xff) << 16
              | (b[o + 2] & 0xff) << 8
              | (b[o + 3] & 0xff);
    }
    return new PartitionDigest(pLog2, buckets);
  }

  public String encode() {
    byte[] b = new byte[3 + 4 * buckets.length];
    b[0] = VERSION;
    b[1] = (byte) partitionsLog2;
    b[2] = (byte) Integer.numberOfTrailingZeros(buckets.length);
    for (int i = 0; i < buckets.length; i++) {
      int o = 3 + 4 * i;
      b[o] = (byte) (buckets[i] >>> 24);
      b[o + 1] = (byte) (buckets[i] >>> 16);
      b[o + 2] = (byte) (buckets[i] >>> 8);
      b[o + 3] = (byte) buckets[i];
    }
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  public int partitions() {
    return 1 << partitionsLog2;
  }

  public int buckets() {
    return buckets.length;
  }

  /** First partition of bucket {@code b}. */
  public int firstPartition(int b) {
    return b * (partitions() / buckets.length);
  }

  /** Partitions in each bucket. */
  public int partitionsPerBucket() {
    return partitions() / buckets.length;
  }

  /**
   * Buckets whose values differ from {@code other}'s, in ascending order; every bucket when the two
   * describe different partition counts.
   */
  public int[] differingBuckets(PartitionDigest other) {
    if (other.partitionsLog2 != partitionsLog2) {
      int[] all = new int[buckets.length];
      Arrays.setAll(all, i -> i);
      return all;
    }
    int n = 0;
    int[] out = new int[buckets.length];
    for (int i = 0; i < buckets.length; i++) {
      if (buckets[i] != other.buckets[i]) {
        out[n++] = i;
      }
    }
    return Arrays.copyOf(out, n);
  }

  /** Partitions that may differ from {@code other}'s (every partition of a differing bucket). */
  public int[] differingPartitions(PartitionDigest other) {
    if (other.partitionsLog2 != partitionsLog2) {
      int[] all = new int[partitions()];
      Arrays.setAll(all, i -> i);
      return all;
    }
    int[] bs = differingBuckets(other);
    int per = partitionsPerBucket();
    int[] out = new int[bs.length * per];
    for (int i = 0; i < bs.length; i++) {
      for (int j = 0; j < per; j++) {
        out[i * per + j] = bs[i] * per + j;
      }
    }
    return out;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PartitionDigest d
        && d.partitionsLog2 == partitionsLog2
        && Arrays.equals(d.buckets, buckets);
  }

  @Override
  public int hashCode() {
    return 31 * partitionsLog2 + Arrays.hashCode(buckets);
  }

  @Override
  public String toString() {
    return encode();
  }
}
