package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IbltLadderTest {
  /**
   * Every foldable shape of both ladders equals a core table built by direct insertion: with the
   * largest tables no larger than the small ones (2^7) and larger (2^13, where shapes up to 2^10
   * and 3 x 2^9 are folded from the small tables and the others from the large ones).
   */
  @ParameterizedTest
  @CsvSource({"1, 7", "2, 7", "3, 7", "4, 13", "5, 13"})
  void foldsEqualDirectlyBuiltCoreTables(long seed, int maxLog2) {
    SketchParams params = TestSets.params(42, 0, maxLog2, ExactEstimator.factory(1).params());
    IbltLadder m = new IbltLadder(params);
    SplittableRandom r = new SplittableRandom(seed);
    List<Long> live = new ArrayList<>();
    // 80 000 inserts into a 3 x 128 table: cell counts far beyond the 16-bit wire width
    for (int i = 0; i < 80_000; i++) {
      if (!live.isEmpty() && r.nextInt(4) == 0) {
        long x = live.remove(r.nextInt(live.size()));
        m.delete(x);
      } else {
        long x = r.nextLong();
        live.add(x);
        m.insert(x);
      }
    }
    List<IbltShape> shapes = new ArrayList<>();
    for (int log2 = 0; log2 <= params.maxShape().log2(); log2++) {
      shapes.add(new IbltShape(3, 1, log2));
    }
    for (int log2 = 0; log2 <= params.maxShapeBase3().log2(); log2++) {
      shapes.add(new IbltShape(3, 3, log2));
    }
    for (IbltShape shape : shapes) {
      Iblt direct = new Iblt(params.spec(), shape, CellLayout.WIDE);
      for (long x : live) {
        direct.insert(x);
      }
      assertThat(m.fold(shape).sameCells(direct)).as("seed %d shape %s", seed, shape).isTrue();
    }
    IbltLadder copy = m.copy();
    assertThat(copy.sameCells(m)).isTrue();
    copy.insert(42);
    assertThat(copy.sameCells(m)).isFalse();
    assertThatThrownBy(() -> m.fold(new IbltShape(3, 1, maxLog2 + 1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @ParameterizedTest
  @ValueSource(longs = {5, 6})
  void foldedDifferenceOfTwoReplicasPeels(long seed) {
    SketchParams params = TestSets.params(42, 0, 10, ExactEstimator.factory(1).params());
    IbltLadder a = new IbltLadder(params);
    IbltLadder b = new IbltLadder(params);
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 5000; i++) {
      long x = r.nextLong();
      a.insert(x);
      b.insert(x);
    }
    long onlyA = r.nextLong();
    long onlyB = r.nextLong();
    a.insert(onlyA);
    b.insert(onlyB);
    IbltShape small = new IbltShape(3, 3, 2);
    Iblt d = a.fold(small);
    d.subtract(b.fold(small));
    PeelResult p = d.peel();
    assertThat(p.complete()).as("seed %d", seed).isTrue();
    assertThat(p.onlyHere()).containsExactly(onlyA);
    assertThat(p.onlyThere()).containsExactly(onlyB);
  }
}
