package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import dev.reconcile.core.wire.IbltProto;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Freezes hash id 1 ({@code xxh3-64-seeded/v1}) and the packed IBLT format version 1. The expected
 * values were generated once from the implementation and pasted here; a change to any of them means
 * a peer built from this code no longer interoperates with earlier builds, so it must come with a
 * new hash id or format version, never an edit of these literals.
 */
class HashSpecGoldenTest {
  static final long SEED = 0x0123456789ABCDEFL;
  static final HashSpec SPEC = HashSpec.of(HashSpec.XXH3_64_V1, SEED);
  static final long X = 0x1122334455667788L;

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void recordDerivations() {
    long kh = SPEC.keyHash(utf8("key-1"));
    long vh = SPEC.valueHash(utf8("value-1"));
    assertThat(kh).isEqualTo(0x8c223df8ac920d6fL);
    assertThat(SPEC.keyHash(new byte[0])).isEqualTo(0xcc1ca35a1b089c5cL);
    assertThat(vh).isEqualTo(0xacfbc91e10911d31L);
    assertThat(SPEC.element(kh, 7, 3, false, vh)).isEqualTo(0x8c220eb6c2d9fa1cL);
    assertThat(SPEC.element(kh, 7, 3, true, vh)).isEqualTo(0x8c22993ca987c988L);
    // The element carries its key's partition for every P up to 2^16.
    for (int log2 = 0; log2 <= 16; log2++) {
      assertThat(HashSpec.partitionOfElement(SPEC.element(kh, 7, 3, false, vh), log2))
          .isEqualTo(HashSpec.partition(kh, log2));
    }
    byte[] padded = utf8("__key-1__");
    assertThat(SPEC.keyHash(padded, 2, 5)).isEqualTo(kh);
    assertThat(SPEC.valueHash(utf8("xvalue-1"), 1, 7)).isEqualTo(vh);
  }

  @Test
  void elementDerivations() {
    assertThat(SPEC.cellHash(X, 0)).isEqualTo(0xa8bdbc0677ebbb0cL);
    assertThat(SPEC.cellHash(X, 1)).isEqualTo(0x9300d7045f9cfdd3L);
    assertThat(SPEC.cellHash(X, 2)).isEqualTo(0x75d89e2b7bc9f07eL);
    assertThat(SPEC.cellHash(X, 3)).isEqualTo(0xae3fafba9f61f769L);
    assertThat(SPEC.checkHash(X)).isEqualTo(0x76bfb4363fdbe7a0L);
    assertThat(SPEC.stratumHash(X)).isEqualTo(0x5cdd302174c01b28L);
    assertThat(SPEC.fingerprintHash(X)).isEqualTo(0xb6e247e7121ae97fL);
  }

  @Test
  void partitionsAndSeeds() {
    long kh = 0x8c223df8ac920d6fL;
    assertThat(HashSpec.partition(kh, 0)).isZero();
    assertThat(HashSpec.partition(kh, 4)).isEqualTo(8);
    assertThat(HashSpec.partition(kh, 16)).isEqualTo(35874);
    assertThat(SPEC.seedFingerprint()).isEqualTo(0x56a631d8);
    assertThat(HashSpec.xxh3(0).seedFingerprint()).isEqualTo(0xc60b8c88);
    assertThat(HashSpec.seedFromSecret(utf8("cluster-secret"))).isEqualTo(0xd0bb8183b0595821L);
  }

  /**
   * The class comment of {@link HashSpec} restated from the hash4j primitive: doc and code agree.
   */
  @Test
  void documentedDerivationMatchesTheCode() {
    Hasher64 h = Hashing.xxh3_64(SEED);
    SplittableRandom rnd = new SplittableRandom(5);
    for (int i = 0; i < 1000; i++) {
      long x = rnd.nextLong();
      long c = h.hashLongLongToLong(x, 0x4345_4c4c_0000_0000L); // CELL_SALT "CELL"
      assertThat(SPEC.checkHash(x)).isEqualTo(c);
      for (int j = 0; j < 8; j++) {
        assertThat(SPEC.cellHash(x, j)).isEqualTo(splitMix(c + (j + 1) * 0x9e3779b97f4a7c15L));
      }
      assertThat(SPEC.stratumHash(x)).isEqualTo(h.hashLongLongToLong(x, 0x5354_5241_5441_0000L));
      assertThat(SPEC.fingerprintHash(x))
          .isEqualTo(h.hashLongLongToLong(x, 0x4650_0000_0000_0000L));
    }
  }

  /**
   * {@code ratelessIndices/v1}: the index sequences below 2^24 of several elements under several
   * seeds. Generated once from the implementation; never edit, add a derivation id instead.
   */
  @Test
  void ratelessIndicesAreFrozen() {
    int below = 1 << 24;
    assertThat(SPEC.ratelessIndices(X, below))
        .containsExactly(
            0, 3, 9, 19, 30, 135, 154, 215, 299, 468, 1139, 1154, 9095, 9692, 14120, 14335, 15712,
            18979, 21673, 28294, 34125, 36650, 99281, 121972, 157487, 303138, 487116, 489675,
            1230167, 1483399, 6864904, 7609778, 8199339);
    assertThat(SPEC.ratelessIndices(0L, below))
        .containsExactly(
            0, 5, 16, 57, 62, 87, 98, 117, 121, 435, 644, 1791, 3740, 3900, 3924, 5377, 21391,
            27467, 60013, 141160, 202616, 534618, 905006, 1273694, 1548401, 2224211, 2802395,
            3061696, 5096346, 7074512);
    assertThat(SPEC.ratelessIndices(-1L, below))
        .containsExactly(
            0, 1, 2, 3, 7, 12, 30, 48, 167, 225, 494, 1259, 2502, 3496, 10964, 11985, 12170, 19474,
            26737, 76525, 89418, 111254, 114369, 147279, 193100, 323046, 748951, 2983569, 2989644,
            3456427, 3741788, 6685183, 13612317, 16722794);
    assertThat(HashSpec.xxh3(42).ratelessIndices(X, below))
        .containsExactly(
            0, 7, 8, 12, 28, 33, 61, 215, 225, 258, 304, 327, 659, 757, 1718, 1867, 1906, 3772,
            4064, 4436, 6560, 10340, 12183, 17705, 43470, 46493, 48504, 57882, 101026, 135188,
            175071, 244894, 290148, 381895, 2655667, 2778069, 3979881, 8044135, 14950343);
    assertThat(HashSpec.xxh3(0).ratelessIndices(7L, below))
        .containsExactly(
            0, 2, 3, 7, 14, 127, 131, 210, 214, 334, 458, 825, 1207, 4462, 5669, 5921, 6817, 8456,
            60816, 64967, 118751, 123153, 338914, 517514, 591649, 1284710, 1816738, 3212033,
            3625418, 4588000, 5262260, 7104238, 11305038, 11464607, 13109488);
    assertThat(SPEC.ratelessIndices(X, 300)).containsExactly(0, 3, 9, 19, 30, 135, 154, 215, 299);
    assertThat(SPEC.ratelessIndices(X, 1)).containsExactly(0);
    // the extremes of the uniform: u = 1 steps by one, u = 2^-53 jumps to floor(sqrt(2^54 + 1/4) -
    // 1/2)
    assertThat(HashSpec.nextRatelessIndex(0, -1L)).isEqualTo(1);
    assertThat(HashSpec.nextRatelessIndex(0, 0L)).isEqualTo(134_217_727);
    assertThat(HashSpec.nextRatelessIndex(1000, 0x8000_0000_0000_0000L)).isEqualTo(1415);
    assertThat(HashSpec.nextRatelessIndex(HashSpec.RATELESS_END - 1, -1L))
        .isEqualTo(HashSpec.RATELESS_END);
    assertThat(HashSpec.nextRatelessIndex(1 << 30, 0L)).isEqualTo(HashSpec.RATELESS_END);
  }

  /**
   * The class comment restated: the stream from hash4j and the next index from its integer
   * definition ({@code BigInteger}), against the double-precision fast path, on random inputs of
   * every magnitude and on inputs built to sit exactly on and next to the boundary {@code j(j+1) U
   * = (i+1)(i+2) 2^53}, where a floating-point shortcut would round the wrong way.
   */
  @Test
  void ratelessIndicesMatchTheIntegerDefinition() {
    long seed = 0x5EED_0001L;
    SplittableRandom rnd = new SplittableRandom(seed);
    Hasher64 h = Hashing.xxh3_64(SEED);
    for (int n = 0; n < 2000; n++) {
      long x = rnd.nextLong();
      long s = h.hashLongLongToLong(x, 0x4345_4c4c_0000_0000L) + 0x5241_5445_4c45_5353L;
      int[] want = new int[64];
      int k = 0;
      for (int i = 0; i < 1 << 20; ) {
        want[k++] = i;
        s += 0xbb67_ae85_84ca_a73bL;
        i = referenceNext(i, splitMix(s));
      }
      assertThat(SPEC.ratelessIndices(x, 1 << 20))
          .as("seed %d element %d", seed, n)
          .containsExactly(Arrays.copyOf(want, k));
    }
    for (int n = 0; n < 200_000; n++) {
      int i = (int) Math.min(HashSpec.RATELESS_END - 1L, rnd.nextLong(1L << rnd.nextInt(32)));
      long z = rnd.nextLong();
      assertThat(HashSpec.nextRatelessIndex(i, z))
          .as("seed %d i=%d z=%x", seed, i, z)
          .isEqualTo(referenceNext(i, z));
    }
    int boundaries = 0;
    for (int n = 0; n < 200_000; n++) {
      long i = rnd.nextLong(1L << rnd.nextInt(31));
      long j = i + 1 + rnd.nextLong(1L + (i + 1) * rnd.nextInt(1, 64));
      if (j >= HashSpec.RATELESS_END) {
        continue;
      }
      BigInteger t = BigInteger.valueOf((i + 1) * (i + 2)).shiftLeft(53);
      long exact = t.divide(BigInteger.valueOf(j * (j + 1))).longValueExact(); // largest U for j
      for (long u = exact; u <= exact + 1; u++) {
        if (u < 1 || u > 1L << 53) {
          continue;
        }
        long z = ((u - 1) << 11) | rnd.nextInt(1 << 11);
        assertThat(HashSpec.nextRatelessIndex((int) i, z))
            .as("seed %d i=%d u=%d", seed, i, u)
            .isEqualTo(referenceNext((int) i, z));
        boundaries++;
      }
    }
    assertThat(boundaries).isGreaterThan(100_000);
  }

  /** The largest j with j(j+1) U <= (i+1)(i+2) 2^53, capped at RATELESS_END, in BigInteger. */
  static int referenceNext(int i, long z) {
    BigInteger u = BigInteger.valueOf((z >>> 11) + 1);
    BigInteger t = BigInteger.valueOf(i + 1L).multiply(BigInteger.valueOf(i + 2L)).shiftLeft(53);
    BigInteger q = t.divide(u); // j(j+1) <= q  <=>  2j + 1 <= isqrt(4q + 1)
    BigInteger j = q.shiftLeft(2).add(BigInteger.ONE).sqrt().subtract(BigInteger.ONE).shiftRight(1);
    return j.min(BigInteger.valueOf(HashSpec.RATELESS_END)).intValueExact();
  }

  /**
   * Packing format version 1 of {@link PackedSymbols}: the 8 symbols of a prefix of seed 42 holding
   * 1, 0x1122334455667788, 3 twice (counts 2, sums cancel), and 2 inserted then deleted.
   */
  @Test
  void packedSymbolsAreFrozen() {
    CodedSymbols p = CodedSymbols.of(HashSpec.xxh3(42), 3, new long[] {1L, 2L, X});
    p.delete(2L);
    p.update(3L, 2);
    assertThat(java.util.HexFormat.of().formatHex(PackedSymbols.pack(p, 0, 8)))
        .isEqualTo(
            "89776655443322115f6ce16a0400"
                + "010000000000000051ed5f620300"
                + "010000000000000051ed5f620300"
                + "0000000000000000000000000200"
                + "010000000000000051ed5f620100"
                + "0000000000000000000000000200"
                + "0000000000000000000000000000"
                + "88776655443322110e81be080100");
    // symbol 7 holds X alone: its check is the low 32 bits of checkHash(X), little-endian
    assertThat(p.checkSum(7)).isEqualTo((int) HashSpec.xxh3(42).checkHash(X)).isEqualTo(0x08be810e);
    assertThat(HashSpec.xxh3(42).ratelessIndices(X, 8)).containsExactly(0, 7);
  }

  private static long splitMix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /**
   * {@code golden/iblt-v1.bin}: the {@code reconcile.v1.Iblt} message of hash seed 42, shape 3x16
   * (base 1, log2 4), wide layout, holding 20 elements of {@code SplittableRandom(42)} (every third
   * deleted). It must parse, peel to exactly those elements and re-encode byte for byte.
   */
  @Test
  void goldenPackedIbltDecodesAndReencodesIdentically() throws Exception {
    byte[] golden = resource("/golden/iblt-v1.bin");
    IbltProto m = IbltProto.parseFrom(golden);
    HashSpec spec = HashSpec.xxh3(42);
    assertThat(m.getFormatVersion()).isEqualTo(1);
    assertThat(m.getHashId()).isEqualTo(HashSpec.XXH3_64_V1);
    assertThat(m.getSeedFingerprint()).isEqualTo(spec.seedFingerprint());
    IbltShape shape = Wire.fromProto(m.getShape());
    CellLayout layout = Wire.fromProto(m.getLayout());
    assertThat(shape).isEqualTo(new IbltShape(3, 1, 4));
    assertThat(layout).isEqualTo(CellLayout.WIDE);
    Iblt t = Iblt.readCells(spec, shape, layout, m.getCells().asReadOnlyByteBuffer());
    assertThat(Wire.toProto(t).toByteArray()).isEqualTo(golden);

    Iblt rebuilt = new Iblt(spec, shape, layout);
    SplittableRandom r = new SplittableRandom(42);
    long[] ins = new long[20];
    long[] del = new long[20];
    int ni = 0;
    int nd = 0;
    for (int i = 0; i < 20; i++) {
      long e = r.nextLong();
      if (i % 3 == 2) {
        rebuilt.delete(e);
        del[nd++] = e;
      } else {
        rebuilt.insert(e);
        ins[ni++] = e;
      }
    }
    assertThat(rebuilt.sameCells(t)).isTrue();
    PeelResult p = t.peel();
    assertThat(p.complete()).isTrue();
    assertThat(sorted(p.onlyHere())).containsExactly(sorted(Arrays.copyOf(ins, ni)));
    assertThat(sorted(p.onlyThere())).containsExactly(sorted(Arrays.copyOf(del, nd)));
  }

  @Test
  void goldenCellsRefuseAWrongLength() throws Exception {
    byte[] golden = resource("/golden/iblt-v1.bin");
    IbltProto m = IbltProto.parseFrom(golden);
    byte[] cells = m.getCells().toByteArray();
    ByteBuffer shortBuf = ByteBuffer.wrap(cells, 0, cells.length - 1);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                Iblt.readCells(
                    HashSpec.xxh3(42), new IbltShape(3, 1, 4), CellLayout.WIDE, shortBuf))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("672");
  }

  private static long[] sorted(long[] a) {
    long[] b = a.clone();
    Arrays.sort(b);
    return b;
  }

  private static byte[] resource(String name) throws IOException {
    try (InputStream in = HashSpecGoldenTest.class.getResourceAsStream(name)) {
      assertThat(in).as(name).isNotNull();
      return in.readAllBytes();
    }
  }
}
