package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.wire.IbltProto;
import dev.reconcile.core.wire.Refusal.Code;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IbltTest {
  private static final HashSpec SPEC = HashSpec.xxh3(42);

  @Test
  void insertThenDeleteLeavesAnEmptyTable() {
    Iblt t = new Iblt(SPEC, new IbltShape(3, 1, 8), CellLayout.WIDE);
    SplittableRandom r = new SplittableRandom(1);
    long[] xs = r.longs(1000).toArray();
    for (long x : xs) {
      t.insert(x);
    }
    assertThat(t.isEmpty()).isFalse();
    for (long x : xs) {
      t.delete(x);
    }
    assertThat(t.isEmpty()).isTrue();
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 3})
  void subtractThenPeelListsBothSides(int base) {
    for (long seed = 0; seed < 50; seed++) {
      TestSets s = TestSets.random(seed, 5000, 30, 25);
      Iblt a = new Iblt(SPEC, new IbltShape(3, base, 8), CellLayout.WIDE);
      Iblt b = new Iblt(SPEC, new IbltShape(3, base, 8), CellLayout.WIDE);
      Arrays.stream(s.a).forEach(a::insert);
      Arrays.stream(s.b).forEach(b::insert);
      a.subtract(b);
      PeelResult p = a.peel();
      assertThat(p.complete()).as("seed %d base %d", seed, base).isTrue();
      assertThat(a.isEmpty()).as("every cell back to zero, seed %d", seed).isTrue();
      assertThat(sorted(p.onlyHere())).as("seed %d", seed).containsExactly(sorted(s.onlyA));
      assertThat(sorted(p.onlyThere())).as("seed %d", seed).containsExactly(sorted(s.onlyB));
    }
  }

  @Test
  void overloadedTableReportsIncompleteAndIsNotEmpty() {
    TestSets s = TestSets.random(3, 0, 500, 500);
    Iblt a = new Iblt(SPEC, new IbltShape(3, 1, 6), CellLayout.WIDE); // 192 cells for 1000 elements
    Arrays.stream(s.onlyA).forEach(a::insert);
    Arrays.stream(s.onlyB).forEach(a::delete);
    PeelResult p = a.peel();
    assertThat(p.complete()).isFalse();
    assertThat(a.isEmpty()).isFalse();
  }

  @Test
  void singleElementAlwaysDecodesInTheSmallestTable() {
    SplittableRandom r = new SplittableRandom(4);
    for (int i = 0; i < 10_000; i++) {
      long x = r.nextLong();
      Iblt t = new Iblt(SPEC, new IbltShape(3, 1, 0), CellLayout.WIDE);
      t.insert(x);
      PeelResult p = t.peel();
      assertThat(p.complete()).isTrue();
      assertThat(p.onlyHere()).containsExactly(x);
    }
  }

  @Test
  void countsWrapAtTheLayoutWidthButDifferencesSurvive() {
    // 70000 common elements overflow 16-bit counts; the difference still decodes.
    TestSets s = TestSets.random(5, 70_000, 3, 2);
    Iblt a = new Iblt(SPEC, new IbltShape(3, 1, 2), CellLayout.WIDE);
    Iblt b = new Iblt(SPEC, new IbltShape(3, 1, 2), CellLayout.WIDE);
    Arrays.stream(s.a).forEach(a::insert);
    Arrays.stream(s.b).forEach(b::insert);
    Iblt wireA = roundTrip(a);
    wireA.subtract(b);
    PeelResult p = wireA.peel();
    assertThat(p.complete()).isTrue();
    assertThat(sorted(p.onlyHere())).containsExactly(sorted(s.onlyA));
    assertThat(sorted(p.onlyThere())).containsExactly(sorted(s.onlyB));
  }

  @Test
  void narrowLayoutDecodesTruncatedElements() {
    TestSets s = TestSets.random(6, 1000, 5, 5);
    Iblt a = new Iblt(SPEC, new IbltShape(3, 1, 4), CellLayout.NARROW);
    Iblt b = new Iblt(SPEC, new IbltShape(3, 1, 4), CellLayout.NARROW);
    Arrays.stream(s.a).forEach(a::insert);
    Arrays.stream(s.b).forEach(b::insert);
    Iblt wire = roundTrip(a);
    assertThat(wire.wireBytes()).isEqualTo(48 * 7);
    wire.subtract(b);
    PeelResult p = wire.peel();
    assertThat(p.complete()).isTrue();
    assertThat(sorted(p.onlyHere()))
        .containsExactly(sorted(Arrays.stream(s.onlyA).map(x -> x & 0xFFFF_FFFFL).toArray()));
  }

  @Test
  void packedCellsRoundTripExactly() {
    Iblt a = new Iblt(SPEC, new IbltShape(4, 3, 5), CellLayout.WIDE);
    new SplittableRandom(7).longs(300).forEach(a::insert);
    Iblt b = roundTrip(a);
    assertThat(b.sameCells(a)).isTrue();
    assertThat(a.packCells()).hasSize(4 * 96 * 14);
  }

  @Test
  void readCellsRefusesAWrongLength() {
    Iblt a = new Iblt(SPEC, new IbltShape(3, 1, 3), CellLayout.WIDE);
    byte[] cells = a.packCells();
    for (int len : new int[] {0, cells.length - 1, cells.length + 1}) {
      byte[] cut = Arrays.copyOf(cells, len);
      assertThatThrownBy(
              () -> Iblt.readCells(SPEC, a.shape(), CellLayout.WIDE, ByteBuffer.wrap(cut)))
          .isInstanceOf(FormatException.class)
          .hasMessageContaining("need " + cells.length + " bytes, got " + len);
    }
  }

  @Test
  void peelOfRandomBytesTerminatesWithoutSuccess() {
    SplittableRandom r = new SplittableRandom(8);
    IbltShape shape = new IbltShape(3, 1, 8);
    for (int trial = 0; trial < 200; trial++) {
      byte[] junk = new byte[(int) shape.cells() * 14];
      r.nextBytes(junk);
      try {
        Iblt t = Iblt.readCells(SPEC, shape, CellLayout.WIDE, ByteBuffer.wrap(junk));
        assertThat(t.peel().complete()).as("trial %d", trial).isFalse();
      } catch (FormatException e) {
        throw new AssertionError(e);
      }
    }
  }

  @Test
  void hostileTableOfPureLookingCellsStopsAfterCellsExtractions() {
    // Every cell holds +1 of an element that really maps there: peel must stay bounded.
    IbltShape shape = new IbltShape(3, 1, 4);
    Iblt t = new Iblt(SPEC, shape, CellLayout.WIDE);
    SplittableRandom r = new SplittableRandom(9);
    for (int i = 0; i < 10_000; i++) {
      t.update(r.nextLong(), r.nextBoolean() ? 1 : -1);
    }
    PeelResult p = t.peel();
    assertThat(p.recovered()).isLessThanOrEqualTo(t.cells());
    assertThat(p.complete()).isFalse();
  }

  @Test
  void shapesAreValidated() {
    assertThatThrownBy(() -> new IbltShape(1, 1, 4)).hasMessageContaining("hash count 1");
    assertThatThrownBy(() -> new IbltShape(3, 2, 4)).hasMessageContaining("base 2");
    assertThatThrownBy(() -> new IbltShape(3, 1, 27)).hasMessageContaining("log2 27");
    assertThatThrownBy(() -> new CellLayout(3, 8, 4)).hasMessageContaining("count width 3");
  }

  @Test
  void ladderRoundingWastesAtMostHalf() {
    for (long want = 1; want < 200_000; want = want * 5 / 4 + 1) {
      IbltShape s = IbltShape.atLeast(3, want);
      assertThat(s.cells()).as("want %d", want).isGreaterThanOrEqualTo(want);
      if (want > 9) {
        assertThat((double) s.cells() / want)
            .as("want %d got %s", want, s)
            .isLessThanOrEqualTo(1.5 + 0.01);
      }
    }
  }

  @Test
  void incompatibleTablesAreNotCombined() {
    Iblt a = new Iblt(SPEC, new IbltShape(3, 1, 4), CellLayout.WIDE);
    Iblt b = new Iblt(SPEC, new IbltShape(3, 1, 5), CellLayout.WIDE);
    Iblt c = new Iblt(HashSpec.xxh3(43), new IbltShape(3, 1, 4), CellLayout.WIDE);
    assertThatThrownBy(() -> a.subtract(b)).hasMessageContaining("shape/layout mismatch");
    assertThatThrownBy(() -> a.subtract(c)).hasMessageContaining("hash spec mismatch");
    assertThatThrownBy(() -> b.fold(new IbltShape(3, 3, 2))).hasMessageContaining("cannot fold");
  }

  @Test
  void wireReadChecksEveryFieldBeforeAllocating() throws Exception {
    SketchParams params = TestSets.params(42, 0, 10, ExactEstimator.factory(1).params());
    Iblt t = new Iblt(SPEC, new IbltShape(3, 1, 4), CellLayout.WIDE);
    new SplittableRandom(10).longs(20).forEach(t::insert);
    var good = Wire.toProto(t);
    assertThat(Wire.readIblt(good, params, null).sameCells(t)).isTrue();
    expectRefusal(
        good.toBuilder().setFormatVersion(2).build(),
        params,
        Code.VERSION,
        "IBLT format version 2");
    expectRefusal(good.toBuilder().setHashId(7).build(), params, Code.HASH, "hash id 7");
    expectRefusal(
        good.toBuilder().setSeedFingerprint(1).build(),
        params,
        Code.SEED,
        "seed fingerprint 0x00000001");
    expectRefusal(
        good.toBuilder().setShape(Wire.toProto(new IbltShape(3, 1, 20))).build(),
        params,
        Code.LIMIT,
        "not allowed");
    expectRefusal(
        good.toBuilder().setShape(good.getShape().toBuilder().setBase(5)).build(),
        params,
        Code.MALFORMED,
        "base 5");
    expectRefusal(
        good.toBuilder().setLayout(Wire.toProto(CellLayout.NARROW)).build(),
        params,
        Code.MALFORMED,
        "cell layout");
    expectRefusal(
        good.toBuilder().setCells(good.getCells().substring(1)).build(),
        params,
        Code.MALFORMED,
        "bytes, got");
    try {
      Wire.readIblt(good, params, new IbltShape(3, 1, 5));
      throw new AssertionError("expected a refusal");
    } catch (ProtocolException e) {
      assertThat(e.getMessage()).contains("was requested");
    }
  }

  private static void expectRefusal(IbltProto m, SketchParams params, Code code, String text) {
    try {
      Wire.readIblt(m, params, null);
      throw new AssertionError("expected a refusal containing " + text);
    } catch (ProtocolException e) {
      assertThat(e.code()).isEqualTo(code);
      assertThat(e.getMessage()).contains(text);
    }
  }

  private static Iblt roundTrip(Iblt t) {
    try {
      return Iblt.readCells(t.spec(), t.shape(), t.layout(), ByteBuffer.wrap(t.packCells()));
    } catch (FormatException e) {
      throw new AssertionError(e);
    }
  }

  private static long[] sorted(long[] a) {
    long[] c = a.clone();
    Arrays.sort(c);
    return c;
  }
}
