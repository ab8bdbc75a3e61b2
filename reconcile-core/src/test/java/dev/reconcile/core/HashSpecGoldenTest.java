package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import dev.reconcile.core.wire.IbltProto;
import java.io.IOException;
import java.io.InputStream;
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
