package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class CodedSymbolsTest {
  private static final HashSpec SPEC = HashSpec.xxh3(42);

  @Test
  void insertThenDeleteLeavesAnEmptyPrefix() {
    CodedSymbols s = new CodedSymbols(SPEC, 10);
    long[] xs = new SplittableRandom(1).longs(2000).toArray();
    for (long x : xs) {
      s.insert(x);
    }
    assertThat(s.isEmpty()).isFalse();
    assertThat(s.count(0)).isEqualTo(2000);
    for (long x : xs) {
      s.delete(x);
    }
    assertThat(s.isEmpty()).isTrue();
  }

  /**
   * The lane-interleaved batch gives exactly the symbols of one update per element: prefixes from 1
   * to 2^14 symbols, batches shorter than the lanes and not a multiple of them, deltas of both
   * signs and even deltas (which leave the XOR sums alone), repeated elements.
   */
  @Test
  void updateAllEqualsOneUpdatePerElement() {
    long seed = 20261202L;
    SplittableRandom r = new SplittableRandom(seed);
    int[] log2s = {0, 1, 2, 5, 9, 14};
    for (int trial = 0; trial < 300; trial++) {
      int log2 = log2s[trial % log2s.length];
      int n = trial < 20 ? trial : r.nextInt(0, 600);
      long[] xs = new long[n + 3];
      long[] cs = new long[n + 3];
      byte[] ds = new byte[n + 3];
      for (int i = 0; i < xs.length; i++) {
        xs[i] = i > 0 && r.nextInt(8) == 0 ? xs[r.nextInt(i)] : r.nextLong();
        cs[i] = SPEC.cellBase(xs[i]);
        ds[i] = (byte) new int[] {1, 1, 1, -1, 2, -2, 3}[r.nextInt(7)];
      }
      CodedSymbols one = new CodedSymbols(SPEC, log2);
      one.update(r.nextLong(), 1); // a prefix that is not empty before the batch
      CodedSymbols batch = one.copy();
      for (int i = 0; i < n; i++) {
        one.update(xs[i], cs[i], ds[i]);
      }
      batch.updateAll(xs, cs, ds, n); // the arrays' three extra entries must not be applied
      assertThat(batch.sameSymbols(one))
          .as("seed %d trial %d: log2 %d, n %d", seed, trial, log2, n)
          .isTrue();
    }
  }

  @Test
  void updateAllRefusesACountBeyondTheArrays() {
    CodedSymbols s = new CodedSymbols(SPEC, 4);
    assertThatThrownBy(() -> s.updateAll(new long[2], new long[2], new byte[1], 2))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> s.updateAll(new long[2], new long[2], new byte[2], -1))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(s.isEmpty()).isTrue();
  }

  /** Every symbol is its definition: the sums over the elements whose sequence contains it. */
  @Test
  void symbolsAreTheSumsOfTheirElements() {
    SplittableRandom r = new SplittableRandom(2);
    int log2 = 9;
    int m = 1 << log2;
    long[] sums = new long[m];
    int[] checks = new int[m];
    int[] counts = new int[m];
    CodedSymbols s = new CodedSymbols(SPEC, log2);
    for (int n = 0; n < 3000; n++) {
      long x = r.nextLong();
      s.insert(x);
      for (int i : SPEC.ratelessIndices(x, m)) {
        sums[i] ^= x;
        checks[i] ^= (int) SPEC.checkHash(x);
        counts[i]++;
      }
    }
    for (int i = 0; i < m; i++) {
      assertThat(s.elementSum(i)).as("symbol %d", i).isEqualTo(sums[i]);
      assertThat(s.checkSum(i)).as("symbol %d", i).isEqualTo(checks[i]);
      assertThat(s.count(i)).as("symbol %d", i).isEqualTo(counts[i]);
    }
  }

  /**
   * The index sequence has the density of the paper, {@code rho(j) = 2/(j+2)}: over {@code n}
   * elements, index {@code j} is hit {@code Binomial(n, rho(j))} times. Every index below 16 and
   * every octave up to 2^16 is within 5 standard deviations, and the mean number of indices below
   * 2^16 is {@code 1 + 2 (H(2^16 + 1) - 1.5) = 21.34} within 5 standard errors.
   */
  @Test
  void indexDensityIsTwoOverJPlusTwo() {
    long seed = 3;
    SplittableRandom r = new SplittableRandom(seed);
    int n = 200_000;
    int m = 1 << 16;
    long[] hits = new long[m];
    double sum = 0;
    double sumSq = 0;
    for (int k = 0; k < n; k++) {
      int[] idx = SPEC.ratelessIndices(r.nextLong(), m);
      sum += idx.length;
      sumSq += (double) idx.length * idx.length;
      for (int i : idx) {
        hits[i]++;
      }
    }
    assertThat(hits[0]).isEqualTo(n);
    for (int j = 1; j < 16; j++) {
      double p = 2.0 / (j + 2);
      double sd = Math.sqrt(n * p * (1 - p));
      assertThat(Math.abs(hits[j] - n * p)).as("seed %d index %d", seed, j).isLessThan(5 * sd);
    }
    for (int lo = 16; lo < m; lo <<= 1) {
      double mean = 0;
      double var = 0;
      long got = 0;
      for (int j = lo; j < 2 * lo; j++) {
        double p = 2.0 / (j + 2);
        mean += n * p;
        var += n * p * (1 - p);
        got += hits[j];
      }
      assertThat(Math.abs(got - mean))
          .as("seed %d octave [%d, %d)", seed, lo, 2 * lo)
          .isLessThan(5 * Math.sqrt(var));
    }
    double harmonic = 0;
    for (int k = 1; k <= m + 1; k++) {
      harmonic += 1.0 / k;
    }
    double want = 1 + 2 * (harmonic - 1.5);
    double mean = sum / n;
    double se = Math.sqrt((sumSq / n - mean * mean) / n);
    assertThat(want).isCloseTo(21.34, org.assertj.core.data.Offset.offset(0.01));
    assertThat(Math.abs(mean - want)).as("seed %d mean %.3f", seed, mean).isLessThan(5 * se);
  }

  /** Linear: S(A) - S(B) = S(A \ B) - S(B \ A), and a group's prefix is the sum of its parts. */
  @Test
  void prefixesAreLinear() {
    for (long seed = 1; seed <= 10; seed++) {
      TestSets t = TestSets.random(seed, 5000, 40, 30);
      CodedSymbols a = CodedSymbols.of(SPEC, 11, t.a);
      CodedSymbols b = CodedSymbols.of(SPEC, 11, t.b);
      CodedSymbols diff = CodedSymbols.of(SPEC, 11, t.onlyA);
      diff.subtract(CodedSymbols.of(SPEC, 11, t.onlyB));
      a.subtract(b);
      assertThat(a.sameSymbols(diff)).as("seed %d", seed).isTrue();

      int partitionsLog2 = 2;
      CodedSymbols[] parts = new CodedSymbols[1 << partitionsLog2];
      for (int p = 0; p < parts.length; p++) {
        parts[p] = new CodedSymbols(SPEC, 11);
      }
      for (long x : t.a) {
        parts[HashSpec.partitionOfElement(x, partitionsLog2)].insert(x);
      }
      CodedSymbols group = parts[0].copy();
      for (int p = 1; p < parts.length; p++) {
        group.add(parts[p]);
      }
      assertThat(group.sameSymbols(CodedSymbols.of(SPEC, 11, t.a))).as("seed %d", seed).isTrue();
      group.subtract(parts[1]);
      group.subtract(parts[2]);
      group.subtract(parts[3]);
      assertThat(group.sameSymbols(parts[0])).as("seed %d", seed).isTrue();
    }
  }

  @Test
  void precomputedCheckHashGivesTheSameSymbols() {
    CodedSymbols a = new CodedSymbols(SPEC, 12);
    CodedSymbols b = new CodedSymbols(SPEC, 12);
    SplittableRandom r = new SplittableRandom(4);
    for (int n = 0; n < 5000; n++) {
      long x = r.nextLong();
      int delta = r.nextInt(4) == 0 ? -1 : 1;
      a.update(x, delta);
      b.update(x, SPEC.checkHash(x), delta);
    }
    assertThat(a.sameSymbols(b)).isTrue();
    assertThat(a.isEmpty()).isFalse();
  }

  @Test
  void copiesOfEvenMultiplicityCancelInTheSumsButCount() {
    CodedSymbols s = new CodedSymbols(SPEC, 6);
    s.update(7L, 2);
    assertThat(s.elementSum(0)).isZero();
    assertThat(s.checkSum(0)).isZero();
    assertThat(s.count(0)).isEqualTo(2);
    s.update(7L, -1);
    assertThat(s.sameSymbols(CodedSymbols.of(SPEC, 6, new long[] {7L}))).isTrue();
  }

  @Test
  void copyIsIndependentAndClearEmpties() {
    CodedSymbols a = CodedSymbols.of(SPEC, 8, new SplittableRandom(5).longs(100).toArray());
    CodedSymbols b = a.copy();
    assertThat(b.sameSymbols(a)).isTrue();
    b.insert(1L);
    assertThat(b.sameSymbols(a)).isFalse();
    b.delete(1L);
    assertThat(b.sameSymbols(a)).isTrue();
    b.clear();
    assertThat(b.isEmpty()).isTrue();
    assertThat(a.isEmpty()).isFalse();
    assertThat(a.memoryBytes()).isEqualTo(16L * 256);
    assertThat(a.size()).isEqualTo(256);
  }

  @Test
  void incompatiblePrefixesAreNotCombined() {
    CodedSymbols a = new CodedSymbols(SPEC, 4);
    assertThatThrownBy(() -> a.add(new CodedSymbols(SPEC, 5)))
        .hasMessageContaining("prefix size mismatch: 16 vs 32");
    assertThatThrownBy(() -> a.subtract(new CodedSymbols(HashSpec.xxh3(43), 4)))
        .hasMessageContaining("hash spec mismatch");
    assertThatThrownBy(() -> new CodedSymbols(SPEC, 25))
        .hasMessageContaining("prefix log2 25 is outside [0, 24]");
    assertThatThrownBy(() -> new CodedSymbols(SPEC, -1)).hasMessageContaining("log2 -1");
  }

  /** The packed layout restated field by field, for every symbol of a range. */
  @Test
  void packedRangeIsTheDocumentedLayout() {
    CodedSymbols s = CodedSymbols.of(SPEC, 10, new SplittableRandom(6).longs(70_000).toArray());
    byte[] packed = PackedSymbols.pack(s, 100, 300);
    assertThat(packed).hasSize(200 * 14);
    assertThat(PackedSymbols.bytes(200)).isEqualTo(2800);
    ByteBuffer b = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 100; i < 300; i++) {
      assertThat(b.getLong()).isEqualTo(s.elementSum(i));
      assertThat(b.getInt()).isEqualTo(s.checkSum(i));
      assertThat(b.getShort()).isEqualTo((short) s.count(i));
    }
    ByteBuffer out = ByteBuffer.allocate(3 * 14 + 5);
    out.position(5);
    PackedSymbols.write(s, 0, 3, out);
    assertThat(out.position()).isEqualTo(47);
    assertThat(Arrays.copyOfRange(out.array(), 5, 47))
        .isEqualTo(Arrays.copyOf(PackedSymbols.pack(s, 0, 1024), 42));
    assertThat(PackedSymbols.pack(s, 7, 7)).isEmpty();
    assertThatThrownBy(() -> PackedSymbols.pack(s, 5, 1025))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("[5, 1025) of a prefix of 1024");
    assertThatThrownBy(() -> PackedSymbols.pack(s, 5, 4))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void packedRangesAreValidatedBeforeAnythingIsRead() throws Exception {
    ByteBuffer ok = ByteBuffer.allocate(28);
    assertThat(PackedSymbols.symbolCount(4, ok, 4, 6)).isEqualTo(2);
    assertThat(ok.position()).isZero();
    assertThatThrownBy(() -> PackedSymbols.symbolCount(5, ok, 4, 64))
        .isInstanceOf(FormatException.class)
        .hasMessage("coded symbols from index 5, expected the next index 4");
    assertThatThrownBy(() -> PackedSymbols.symbolCount(4, ByteBuffer.allocate(0), 4, 64))
        .isInstanceOf(FormatException.class)
        .hasMessage("empty range of coded symbols at index 4");
    assertThatThrownBy(() -> PackedSymbols.symbolCount(4, ByteBuffer.allocate(27), 4, 64))
        .isInstanceOf(FormatException.class)
        .hasMessage("packed coded symbols of 27 bytes: not a multiple of 14 bytes per symbol");
    assertThatThrownBy(() -> PackedSymbols.symbolCount(4, ok, 4, 5))
        .isInstanceOf(FormatException.class)
        .hasMessage("coded symbols [4, 6) exceed the prefix of 5 symbols");
  }
}
