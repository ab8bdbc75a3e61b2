package dev.reconcile.core;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * A pinned, keyed hash and every derivation the sketches make from it.
 *
 * <p>A hash spec is part of every serialized sketch, so it is frozen: a derivation is never edited,
 * only a new {@link #id() id} is added beside it (the habit of Guava's {@code
 * BloomFilterStrategies}). Golden vectors in {@code HashSpecGoldenTest} pin the outputs of every
 * id.
 *
 * <h2>Id 1: {@code xxh3-64-seeded/v1}</h2>
 *
 * <p>{@code H} is XXH3-64 with the 64-bit cluster seed (hash4j {@code Hashing.xxh3_64(seed)}).
 *
 * <pre>
 *   keyHash(key)            = H.bytes(key)
 *   valueHash(value)        = H.bytes(value)
 *   e(r)                    = H.longs(H.longs(keyHash, version, origin),
 *                                     (tombstone ? 1 : 0) | ELEMENT_DOMAIN, valueHash)
 *   element(r)              = (keyHash & PARTITION_BITS) | (e(r) & ~PARTITION_BITS)
 *                             PARTITION_BITS = the top 16 bits
 *   cellBase(x)             = H.longs(x, CELL_SALT)              one keyed hash per element
 *   cellHash(x, j)          = mix13(c + (j + 1) * GAMMA)         c = cellBase(x), j = subtable
 *   checkHash(x)            = c                                  c = cellBase(x)
 *   stratumHash(x)          = H.longs(x, STRATUM_SALT)
 *   fingerprintHash(x)      = H.longs(x, FINGERPRINT_SALT)
 *   fingerprintDigest(f)    = H.longs(H.longs(f.count, f.sum, f.sum2), DIGEST_SALT)
 *   sessionDigest(d_1..d_n) = H.longs(...H.longs(H.longs(n, DIGEST_SALT), d_1)..., d_n)
 *   ratelessIndices(x)      = 0, then a SplitMix64-driven sequence seeded by c (see below)
 *   partition(keyHash, P)   = top log2(P) bits of keyHash = top log2(P) bits of the element
 *   seedFingerprint         = first 4 bytes (big-endian int) of
 *                             SHA-256("reconcile/seed-fingerprint/v1" || seed as 8 bytes LE)
 * </pre>
 *
 * <p>An element carries its key's top 16 hash bits, so its partition (for any {@code P <= 2^16})
 * can be read off the element itself: one IBLT can then reconcile a group of partitions at once and
 * each decoded element still names its partition. The other 48 bits are the record hash, so two
 * different records collide with probability 2^-64 for different keys, 2^-48 for versions of the
 * same key (see docs/design.md).
 *
 * <p>The check hash of an element is the keyed hash {@code c} itself; its cell hashes are the
 * SplitMix64 stream [1] seeded with {@code c}: output {@code j + 1} places the element in subtable
 * {@code j}. {@code mix13} is Stafford's variant 13 [2], a 64-bit bijection; {@code GAMMA =
 * 0x9e3779b97f4a7c15}; sums and products are modulo 2^64: {@code mix13(z) = (z' ^ z'>>>31)} with
 * {@code z' = ((z ^ z>>>30) * 0xbf58476d1ce4e5b9 ^ ...>>>27) * 0x94d049bb133111eb}, see {@link
 * #mix13}. An IBLT insert, delete or purity test costs one XXH3 call plus {@code k} mixes of two
 * multiplications each, instead of {@code k + 1} XXH3 calls.
 *
 * <p>Kirsch-Mitzenmacher double hashing ({@code c + j * step}) was tried and rejected: with it two
 * elements share all {@code k} cells with probability about {@code 2/s^2} instead of {@code 1/s^3}
 * ({@code s} cells per subtable), because {@code k} positions then depend on only two residues; at
 * the loads of a reconciliation table that is a constant failure rate (observed: 11 % failures at d
 * = 5 in 3x16 cells). Each SplitMix64 output is a full mix of {@code c}, so the positions of
 * distinct elements behave as independent.
 *
 * <p>[1] G. L. Steele, D. Lea, C. H. Flood, "Fast Splittable Pseudorandom Number Generators",
 * OOPSLA 2014. [2] D. Stafford, "Better Bit Mixing - Improving on MurmurHash3's 64-bit Finalizer",
 * 2011.
 *
 * <p>The seed is a cluster secret: peers compare only the 32-bit seed fingerprint, from which the
 * 64-bit seed cannot be recovered short of a 2^64 search.
 *
 * <h2>Derivation {@code ratelessIndices/v1} (of id 1)</h2>
 *
 * <p>The coded symbols of the rateless mode ({@link CodedSymbols}) need, per element, an increasing
 * sequence of symbol indices in which index {@code j} appears with probability {@code rho(j) = 2 /
 * (j + 2)} (Yang, Gilad, Alizadeh, "Practical Rateless Set Reconciliation", SIGCOMM 2024 [3]). It
 * is drawn from a second SplitMix64 stream seeded by the same {@code c = cellBase(x)}, so an
 * element costs one keyed hash for the IBLTs and the coded symbols together:
 *
 * <pre>
 *   s_0     = c + RATELESS_SALT                    RATELESS_SALT  = 0x524154454c455353 ("RATELESS")
 *   s_k     = s_(k-1) + RATELESS_GAMMA             RATELESS_GAMMA = 0xbb67ae8584caa73b
 *   U_k     = (mix13(s_k) >>> 11) + 1              an integer in [1, 2^53]; u_k = U_k / 2^53 in (0, 1]
 *   idx_0   = 0                                    every element is in symbol 0
 *   idx_k   = the largest j with j (j + 1) U_k  <=  (idx_(k-1) + 1)(idx_(k-1) + 2) 2^53
 *   symbol check = low 32 bits of c                (the IBLT's WIDE check hash)
 * </pre>
 *
 * All sums and products of the stream are modulo 2^64; the inequality is evaluated exactly (128-bit
 * products). The sequence ends at the first {@code idx_k >= RATELESS_END = 2^31 - 1}: indices are
 * {@code int}s, and no prefix ever reaches that far.
 *
 * <p>Why this samples {@code rho}: from index {@code i}, the next index is {@code >= j} exactly
 * when every index {@code i < l < j} is skipped, which has probability {@code prod_(l=i+1)^(j-1) (1
 * - 2/(l+2)) = (i+1)(i+2) / (j(j+1))} (the product telescopes). Inverting that survival function at
 * {@code u} gives {@code next = the largest j with (i+1)(i+2) / (j(j+1)) >= u}, the rule above: one
 * uniform and one square root per index instead of a coin per index. (The form "smallest {@code j}
 * with {@code j(j+1) >= (i+1)(i+2)/u}" is the same inversion shifted by one index: it never picks
 * {@code i + 1}, and decoding then needs 2.34 symbols per difference at d = 4 instead of 1.76.)
 *
 * <p>Computation: {@link #nextRatelessIndex} estimates {@code j} in double precision as {@code
 * floor(sqrt(t + 1/4) - 1/2)} with {@code t = (i+1)(i+2) 2^53 / U}. Below {@code 2^31} the
 * estimate's absolute error is under {@code 10^-5} (six correctly rounded operations of relative
 * error {@code 2^-53} on values below {@code 2^32}), so when the fractional part of the unfloored
 * estimate lies in {@code [2^-12, 1 - 2^-12]} the floor is exact; otherwise, and whenever the
 * estimate reaches {@code RATELESS_END}, the integer inequality decides. The result is therefore
 * defined by integer arithmetic alone and is the same on every JVM; {@code HashSpecGoldenTest} pins
 * it and checks the fast path against a {@code BigInteger} evaluation of the definition.
 *
 * <p>[3] L. Yang, Y. Gilad, M. Alizadeh, "Practical Rateless Set Reconciliation", ACM SIGCOMM 2024.
 */
public final class HashSpec {
  /** {@code xxh3-64-seeded/v1}. Never change what this id computes. */
  public static final int XXH3_64_V1 = 1;

  static final long ELEMENT_DOMAIN = 0x5245_4300_0000_0000L; // "REC"
  static final long CELL_SALT = 0x4345_4c4c_0000_0000L; // "CELL"
  static final long STRATUM_SALT = 0x5354_5241_5441_0000L; // "STRATA"

  /** SplitMix64 increment (odd, 2^64 / golden ratio). */
  static final long GAMMA = 0x9e37_79b9_7f4a_7c15L;

  static final long FINGERPRINT_SALT = 0x4650_0000_0000_0000L; // "FP"
  static final long DIGEST_SALT = 0x4650_4449_4745_5354L; // "FPDIGEST"

  /** Start offset of the rateless index stream ({@code ratelessIndices/v1}). */
  static final long RATELESS_SALT = 0x5241_5445_4c45_5353L; // "RATELESS"

  /** Increment of the rateless index stream: odd, the first word of frac(sqrt(3)) (SHA-256 H1). */
  public static final long RATELESS_GAMMA = 0xbb67_ae85_84ca_a73bL;

  /** Every rateless index sequence ends before this index ({@code 2^31 - 1}). */
  public static final int RATELESS_END = Integer.MAX_VALUE;

  /** Margin of the floating-point fast path of {@link #nextRatelessIndex} ({@code 2^-12}). */
  private static final double RATELESS_MARGIN = 0x1p-12;

  private final int id;
  private final long seed;
  private final int seedFingerprint;
  private final Hasher64 hasher;

  private HashSpec(int id, long seed) {
    this.id = id;
    this.seed = seed;
    this.hasher = Hashing.xxh3_64(seed);
    this.seedFingerprint = fingerprintOf(seed);
  }

  /** The spec for hash id {@code id} and {@code seed}; fails on an unknown id. */
  public static HashSpec of(int id, long seed) {
    if (id != XXH3_64_V1) {
      throw new IllegalArgumentException("unknown hash id " + id + " (this build knows: 1)");
    }
    return new HashSpec(id, seed);
  }

  /** Spec of the current hash id with the given seed. */
  public static HashSpec xxh3(long seed) {
    return new HashSpec(XXH3_64_V1, seed);
  }

  /**
   * Derives the 64-bit seed from a cluster secret of any length (first 8 bytes, little-endian, of
   * SHA-256("reconcile/seed/v1" || secret)).
   */
  public static long seedFromSecret(byte[] secret) {
    byte[] d = sha256("reconcile/seed/v1", secret);
    return ByteBuffer.wrap(d, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }

  public int id() {
    return id;
  }

  public long seed() {
    return seed;
  }

  /** 32-bit fingerprint of the seed, carried on the wire instead of the seed. */
  public int seedFingerprint() {
    return seedFingerprint;
  }

  public long keyHash(byte[] key) {
    return hasher.hashBytesToLong(key);
  }

  public long keyHash(byte[] key, int off, int len) {
    return hasher.hashBytesToLong(key, off, len);
  }

  public long valueHash(byte[] value) {
    return hasher.hashBytesToLong(value);
  }

  public long valueHash(byte[] value, int off, int len) {
    return hasher.hashBytesToLong(value, off, len);
  }

  /** The element (set member) of a record; see the class comment. */
  public long element(long keyHash, long version, long origin, boolean tombstone, long valueHash) {
    long a = hasher.hashLongLongLongToLong(keyHash, version, origin);
    long e = hasher.hashLongLongLongToLong(a, (tombstone ? 1L : 0L) | ELEMENT_DOMAIN, valueHash);
    return (keyHash & PARTITION_BITS) | (e & ~PARTITION_BITS);
  }

  /** The top 16 bits of an element: its key's partition bits. */
  public static final long PARTITION_BITS = 0xFFFF_0000_0000_0000L;

  /** Partition of an element (equal to the partition of its key, see {@link #element}). */
  public static int partitionOfElement(long element, int partitionsLog2) {
    return partition(element, partitionsLog2);
  }

  /** Hash of element {@code x} that places it in hash subtable {@code j}. */
  public long cellHash(long x, int j) {
    return mix13(cellBase(x) + (j + 1) * GAMMA);
  }

  /** Hash of element {@code x} kept in a cell's check sum. */
  public long checkHash(long x) {
    return cellBase(x);
  }

  /** The one keyed hash of {@code x}: its check hash, and the seed of its cell hashes. */
  long cellBase(long x) {
    return hasher.hashLongLongToLong(x, CELL_SALT);
  }

  /** Stafford's mix13 (the SplitMix64 finalizer), a bijection of 64-bit values. */
  public static long mix13(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /**
   * The rateless index sequence of {@code x} below {@code limit} ({@code ratelessIndices/v1}, see
   * the class comment), as a new array. For tests and tools; the hot paths walk the stream with
   * {@link #ratelessStart} and {@link #nextRatelessIndex} without allocating.
   */
  public int[] ratelessIndices(long x, int limit) {
    int[] out = new int[16];
    int n = 0;
    long s = ratelessStart(cellBase(x));
    for (int i = 0; i < limit; i = nextRatelessIndex(i, mix13(s += RATELESS_GAMMA))) {
      if (n == out.length) {
        out = Arrays.copyOf(out, 2 * n);
      }
      out[n++] = i;
    }
    return Arrays.copyOf(out, n);
  }

  /**
   * First state of the rateless index stream of an element whose {@link #checkHash} is {@code c}.
   * Step it as {@code s += RATELESS_GAMMA} and feed {@code mix13(s)} to {@link #nextRatelessIndex}.
   */
  public static long ratelessStart(long c) {
    return c + RATELESS_SALT;
  }

  /**
   * The index that follows index {@code i} (in {@code [0, RATELESS_END)}) in a rateless sequence
   * whose next stream output is {@code z}: the largest {@code j} with {@code j(j+1) U <= (i+1)(i+2)
   * 2^53}, {@code U = (z >>> 11) + 1}; {@link #RATELESS_END} when that is {@code >= RATELESS_END}.
   * Always {@code > i}. Exact; see the class comment.
   */
  public static int nextRatelessIndex(int i, long z) {
    long u = (z >>> 11) + 1; // [1, 2^53]
    double di = i;
    // 2^53 / u does not depend on i: only the multiplications, the root and the floor are on the
    // dependency chain from one index to the next
    double e = Math.sqrt((di + 1.0) * (di + 2.0) * (0x1p53 / u) + 0.25) - 0.5;
    double f = Math.floor(e);
    double frac = e - f;
    if (f < RATELESS_END && frac >= RATELESS_MARGIN && frac <= 1.0 - RATELESS_MARGIN) {
      return (int) f; // f > i: the estimate's error is far below the margin
    }
    return exactNextRatelessIndex(i, u, (long) (i + 1) * (i + 2), f);
  }

  /** The integer evaluation of {@link #nextRatelessIndex} from the estimate {@code f}. */
  private static int exactNextRatelessIndex(int i, long u, long c, double f) {
    long j = f >= RATELESS_END ? RATELESS_END : Math.max(i + 1L, (long) f);
    while (j > i + 1L && !ratelessFits(j, u, c)) {
      j--;
    }
    while (j < RATELESS_END && ratelessFits(j + 1, u, c)) {
      j++;
    }
    return (int) j;
  }

  /**
   * {@code j(j+1) u <= c 2^53}, exactly ({@code j <= 2^31 - 1}, {@code u <= 2^53}, {@code c <
   * 2^63}).
   */
  private static boolean ratelessFits(long j, long u, long c) {
    long a = j * (j + 1);
    long hi = Math.multiplyHigh(a, u);
    long lo = a * u;
    long chi = c >>> 11;
    long clo = c << 53;
    return hi < chi || (hi == chi && Long.compareUnsigned(lo, clo) <= 0);
  }

  /** Hash of element {@code x} whose trailing zeros choose its stratum. */
  public long stratumHash(long x) {
    return hasher.hashLongLongToLong(x, STRATUM_SALT);
  }

  /** Second, independent image of {@code x} summed in partition fingerprints. */
  public long fingerprintHash(long x) {
    return hasher.hashLongLongToLong(x, FINGERPRINT_SALT);
  }

  /**
   * An 8-byte digest of a partition's fingerprint, compared in the handshake instead of the 24
   * bytes of the fingerprint: two different fingerprints share a digest with probability 2^-64.
   */
  public long fingerprintDigest(Fingerprint f) {
    return hasher.hashLongLongToLong(
        hasher.hashLongLongLongToLong(f.count(), f.sum(), f.sum2()), DIGEST_SALT);
  }

  /** One 8-byte digest of several partitions' {@link #fingerprintDigest}s, in order. */
  public long sessionDigest(long[] digests) {
    long h = hasher.hashLongLongToLong(digests.length, DIGEST_SALT);
    for (long d : digests) {
      h = hasher.hashLongLongToLong(h, d);
    }
    return h;
  }

  /** Partition of a key: the top {@code partitionsLog2} bits of its key hash. */
  public static int partition(long keyHash, int partitionsLog2) {
    return partitionsLog2 == 0 ? 0 : (int) (keyHash >>> (64 - partitionsLog2));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof HashSpec h && h.id == id && h.seed == seed;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(seed) * 31 + id;
  }

  @Override
  public String toString() {
    return "HashSpec{id=" + id + ", seedFingerprint=" + hex(seedFingerprint) + "}";
  }

  public static String hex(int v) {
    return String.format("0x%08x", v);
  }

  static int fingerprintOf(long seed) {
    byte[] s = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(seed).array();
    return ByteBuffer.wrap(sha256("reconcile/seed-fingerprint/v1", s)).getInt();
  }

  private static byte[] sha256(String domain, byte[] data) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(domain.getBytes(StandardCharsets.US_ASCII));
      md.update(data);
      return md.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }
}
