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

  /** Cell index of {@code x} in each subtable of {@code shape}. */
  private static int[] positions(long x, IbltShape shape) {
    Iblt t = new Iblt(SPEC, shape, CellLayout.WIDE);
    t.insert(x);
    int[] pos = new int[shape.hashCount()];
    for (int i = 0; i < t.cells(); i++) {
      if (t.count(i) != 0) {
        pos[i / shape.subtableCells()] = i;
      }
    }
    return pos;
  }

  /** A WIDE table whose cells are all zero but the given {index, count, key, check} ones. */
  private static Iblt crafted(IbltShape shape, long[]... cells) throws FormatException {
    ByteBuffer b =
        ByteBuffer.allocate((int) shape.cells() * 14).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    for (long[] c : cells) {
      b.putShort((int) c[0] * 14, (short) c[1]);
      b.putLong((int) c[0] * 14 + 2, c[2]);
      b.putInt((int) c[0] * 14 + 10, (int) c[3]);
    }
    return Iblt.readCells(SPEC, shape, CellLayout.WIDE, b);
  }

  @Test
  void pureLookingCellAtAnotherElementsPlaceIsNotExtracted() throws FormatException {
    // Count +1 and a matching check hash, but x does not map to this cell: only the position test
    // (pos_j(keySum) = i) stops the peel. Without it x would be extracted here, again (as -1) from
    // its real cells, and two elements would be listed.
    IbltShape shape = new IbltShape(3, 1, 4);
    long x = 0x1234_5678_9abc_def0L;
    long check = SPEC.checkHash(x) & 0xFFFF_FFFFL;
    int[] real = positions(x, shape);
    int misplaced = real[0] == 0 ? 1 : 0; // same subtable, another cell
    Iblt t = crafted(shape, new long[] {misplaced, 1, x, check});
    PeelResult p = t.peel();
    assertThat(p.recovered()).as("the misplaced cell must not be peeled").isZero();
    assertThat(p.complete()).isFalse();
    // Control: the same cell at x's own place is peeled, so only the position test differed.
    PeelResult control = crafted(shape, new long[] {real[0], 1, x, check}).peel();
    assertThat(control.onlyHere()).contains(x);
  }

  @Test
  void hostileTableThatPeelsForeverStopsAfterCellsExtractions() throws FormatException {
    // Cell a = (+1, x) at x's place in subtable 0, cell b = (+2, 0) at its place in subtable 1.
    // Peeling x (+1) leaves b = (+1, x) and c = (-1, x); peeling c (-1) restores a = (+1, x) and
    // b = (+2, 0): the first state again, for ever. Only the cap of one extraction per cell ends
    // it, so exactly `cells` elements are listed and the decode is reported incomplete.
    IbltShape shape = new IbltShape(3, 1, 4);
    long x = 0x0fed_cba9_8765_4321L;
    long check = SPEC.checkHash(x) & 0xFFFF_FFFFL;
    int[] real = positions(x, shape);
    Iblt t = crafted(shape, new long[] {real[0], 1, x, check}, new long[] {real[1], 2, 0, 0});
    PeelResult p = t.peel();
    assertThat(p.complete()).isFalse();
    assertThat(p.recovered()).as("the extraction cap was reached").isEqualTo(t.cells());
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
