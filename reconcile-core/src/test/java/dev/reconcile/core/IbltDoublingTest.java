package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Incremental doubling: the sender's extension of its doubled table plus the receiver's kept
 * difference of the failed table rebuild exactly the doubled difference ({@link Iblt#unfold}).
 */
class IbltDoublingTest {

  /** Random sets A (remote) and B (local) with {@code common} shared elements. */
  private static Iblt[] tables(
      HashSpec spec, IbltShape shape, CellLayout layout, TestSets s, int sign) {
    Iblt remote = new Iblt(spec, shape, layout);
    Iblt local = new Iblt(spec, shape, layout);
    Arrays.stream(s.a).forEach(x -> remote.update(x, sign));
    Arrays.stream(s.b).forEach(x -> local.update(x, sign));
    return new Iblt[] {remote, local};
  }

  @ParameterizedTest(name = "base={0} layout={1}")
  @CsvSource({"1, WIDE", "3, WIDE", "1, NARROW", "3, NARROW"})
  void unfoldEqualsDirectConstructionCellByCell(int base, String layoutName) throws Exception {
    CellLayout layout = layoutName.equals("WIDE") ? CellLayout.WIDE : CellLayout.NARROW;
    for (int log2 = 0; log2 <= 9; log2++) {
      for (long seed = 0; seed < 3; seed++) {
        long sd = seed * 1000 + log2 * 10L + base;
        HashSpec spec = HashSpec.xxh3(sd);
        TestSets s = TestSets.random(sd, 2000, 40 + (int) seed * 300, 25 + (int) seed * 200);
        IbltShape doubled = new IbltShape(3, base, log2 + 1);
        // deletions too: the sign of every update is -1 in the second half of the seeds
        Iblt[] big = tables(spec, doubled, layout, s, seed == 2 ? -1 : 1);
        Iblt remote2m = big[0];
        Iblt local2m = big[1];
        IbltShape halfShape = doubled.withLog2(log2);
        Iblt half = remote2m.fold(halfShape);
        half.subtract(local2m.fold(halfShape));
        byte[] ext = remote2m.packExtension();
        assertThat(ext).hasSize((int) (halfShape.cells() * layout.cellBytes()));
        assertThat(remote2m.extensionCells()).isEqualTo(halfShape.cells());
        Iblt rebuilt = Iblt.unfold(half, ByteBuffer.wrap(ext), local2m);
        Iblt direct = remote2m.copy();
        direct.subtract(local2m);
        String why = "seed " + sd + " base " + base + " log2 " + log2 + " " + layout;
        assertThat(rebuilt.shape()).as(why).isEqualTo(doubled);
        for (int i = 0; i < direct.cells(); i++) {
          assertThat(layout.normalizeCount(rebuilt.count(i)))
              .as("count of cell %d, %s", i, why)
              .isEqualTo(layout.normalizeCount(direct.count(i)));
          assertThat(rebuilt.keySum(i))
              .as("key sum of cell %d, %s", i, why)
              .isEqualTo(direct.keySum(i));
          assertThat(rebuilt.checkSum(i))
              .as("check sum of cell %d, %s", i, why)
              .isEqualTo(direct.checkSum(i));
        }
        assertThat(rebuilt.sameCells(direct)).as(why).isTrue();
      }
    }
  }

  @ParameterizedTest(name = "base={0}")
  @ValueSource(ints = {1, 3})
  void aFailedTableFollowedByItsExtensionsDecodes(int base) throws Exception {
    SplittableRandom rnd = new SplittableRandom(77 + base);
    HashSpec spec = HashSpec.xxh3(rnd.nextLong());
    TestSets s = TestSets.random(rnd.nextLong(), 5000, 300, 300);
    IbltShape top = new IbltShape(3, base, base == 1 ? 10 : 9);
    Iblt remoteTop = new Iblt(spec, top, CellLayout.WIDE);
    Iblt localTop = new Iblt(spec, top, CellLayout.WIDE);
    Arrays.stream(s.a).forEach(remoteTop::insert);
    Arrays.stream(s.b).forEach(localTop::insert);
    // First table far too small for 600 differences; then only extensions travel.
    IbltShape shape = top.withLog2(4);
    Iblt kept = remoteTop.fold(shape);
    kept.subtract(localTop.fold(shape));
    long cellsSent = shape.cells();
    PeelResult r = kept.copy().peel();
    assertThat(r.complete()).isFalse();
    while (!r.complete()) {
      IbltShape next = kept.shape().doubled();
      byte[] ext = remoteTop.fold(next).packExtension();
      cellsSent += ext.length / CellLayout.WIDE.cellBytes();
      kept = Iblt.unfold(kept, ByteBuffer.wrap(ext), localTop.fold(next));
      r = kept.copy().peel();
    }
    assertThat(cellsSent).as("cells sent add up to the table that decoded").isEqualTo(kept.cells());
    assertThat(sorted(r.onlyHere())).containsExactly(sorted(s.onlyA));
    assertThat(sorted(r.onlyThere())).containsExactly(sorted(s.onlyB));
  }

  @ParameterizedTest(name = "base={0}")
  @ValueSource(ints = {1, 3})
  void hostileOrMismatchedInputIsRefused(int base) {
    HashSpec spec = HashSpec.xxh3(5);
    IbltShape m = new IbltShape(3, base, 3);
    Iblt half = new Iblt(spec, m, CellLayout.WIDE);
    Iblt local = new Iblt(spec, m.doubled(), CellLayout.WIDE);
    new SplittableRandom(6).longs(50).forEach(local::insert);
    byte[] ext = local.packExtension();
    int want = ext.length;
    for (int len : new int[] {0, 1, want - 1, want + 1, 2 * want}) {
      ByteBuffer cut = ByteBuffer.wrap(Arrays.copyOf(ext, len));
      assertThatThrownBy(() -> Iblt.unfold(half, cut, local))
          .as("length %d", len)
          .isInstanceOf(FormatException.class)
          .hasMessageContaining("needs " + want + " bytes, got " + len);
    }
    ByteBuffer ok = ByteBuffer.wrap(ext);
    // not one step up the same ladder
    assertThatThrownBy(() -> Iblt.unfold(half, ok, new Iblt(spec, m, CellLayout.WIDE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("same ladder one step up");
    assertThatThrownBy(() -> Iblt.unfold(half, ok, new Iblt(spec, m.withLog2(5), CellLayout.WIDE)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                Iblt.unfold(
                    half, ok, new Iblt(spec, new IbltShape(3, 4 - base, 4), CellLayout.WIDE)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Iblt.unfold(half, ok, new Iblt(spec, m.doubled(), CellLayout.NARROW)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("same layout");
    assertThatThrownBy(
            () -> Iblt.unfold(half, ok, new Iblt(HashSpec.xxh3(6), m.doubled(), CellLayout.WIDE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hash spec mismatch");
    // a table of log2 0 has no extension
    Iblt smallest = new Iblt(spec, m.withLog2(0), CellLayout.WIDE);
    assertThatThrownBy(smallest::packExtension)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("log2 0");
  }

  @ParameterizedTest(name = "base={0}")
  @ValueSource(ints = {1, 3})
  void randomExtensionBytesNeverDecodeFalsely(int base) throws Exception {
    // A hostile extension gives a garbage difference: the peel must end and report failure.
    SplittableRandom rnd = new SplittableRandom(11 + base);
    HashSpec spec = HashSpec.xxh3(12);
    IbltShape m = new IbltShape(3, base, 5);
    TestSets s = TestSets.random(13, 1000, 10, 10);
    Iblt[] big = tables(spec, m.doubled(), CellLayout.WIDE, s, 1);
    Iblt half = big[0].fold(m);
    half.subtract(big[1].fold(m));
    for (int trial = 0; trial < 200; trial++) {
      byte[] junk = new byte[(int) (m.cells() * CellLayout.WIDE.cellBytes())];
      rnd.nextBytes(junk);
      Iblt t = Iblt.unfold(half, ByteBuffer.wrap(junk), big[1]);
      PeelResult r = t.peel();
      assertThat(r.complete()).as("trial %d", trial).isFalse();
      assertThat(r.recovered()).isLessThanOrEqualTo(t.cells());
    }
  }

  private static long[] sorted(long[] a) {
    long[] c = a.clone();
    Arrays.sort(c);
    return c;
  }
}
