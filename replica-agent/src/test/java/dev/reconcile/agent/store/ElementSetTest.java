package dev.reconcile.agent.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.HashSpec;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link ElementSet} answers as a {@link HashSet} of the same elements. */
final class ElementSetTest {
  @ParameterizedTest
  @CsvSource({"1, 0", "2, 1", "3, 7", "4, 1000", "5, 20000"})
  void membershipIsExactlyTheListsIncludingZeroRepeatsAndEveryBitPattern(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed);
    // Elements from the whole range, a few clustered on one slot's top bits (long probe runs that
    // wrap past the table's end), 0, and both signs' extremes; some listed twice.
    long[] listed = new long[n + (n > 0 ? 6 : 0)];
    for (int i = 0; i < n; i++) {
      listed[i] = i % 10 == 9 ? (-1L << 52) | r.nextInt(1 << 20) : r.nextLong();
    }
    if (n > 0) {
      listed[n] = 0;
      listed[n + 1] = Long.MIN_VALUE;
      listed[n + 2] = Long.MAX_VALUE;
      listed[n + 3] = -1;
      listed[n + 4] = listed[0];
      listed[n + 5] = listed[n / 2];
    }
    Set<Long> truth = new HashSet<>();
    for (long e : listed) {
      truth.add(e);
    }
    ElementSet set = new ElementSet(listed);
    for (long e : listed) {
      assertThat(set.contains(e)).as("seed %d: listed %x", seed, e).isTrue();
    }
    for (int i = 0; i < 20_000; i++) {
      long e = i % 3 == 0 ? (-1L << 52) | r.nextInt(1 << 20) : r.nextLong();
      assertThat(set.contains(e)).as("seed %d: %x", seed, e).isEqualTo(truth.contains(e));
    }
    for (long e : new long[] {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE}) {
      assertThat(set.contains(e)).as("seed %d: %x", seed, e).isEqualTo(truth.contains(e));
    }
  }

  /**
   * A list is one partition's elements, which share their top bits (the key's partition bits,
   * {@link HashSpec#element}); lookups still cost about one probe: at load 1/2 linear probing
   * expects 1.5 probes for a present element and 2.5 for an absent one (Knuth 6.4). A table indexed
   * by the elements' own top bits fails this by a factor of hundreds.
   */
  @ParameterizedTest
  @CsvSource({"11, 12500, 4", "12, 50000, 4", "13, 3000, 8", "14, 20000, 16"})
  void aPartitionsElementsCostAboutOneProbe(long seed, int n, int partitionsLog2) {
    SplittableRandom r = new SplittableRandom(seed);
    long top = (long) r.nextInt(1 << partitionsLog2) << (64 - partitionsLog2);
    long low = -1L >>> partitionsLog2;
    long[] listed = new long[n];
    for (int i = 0; i < n; i++) {
      listed[i] = top | (r.nextLong() & low);
    }
    ElementSet set = new ElementSet(listed);
    long present = 0;
    for (long e : listed) {
      present += set.probes(e);
    }
    long absent = 0;
    for (int i = 0; i < n; i++) {
      long e = top | (r.nextLong() & low);
      assertThat(set.contains(e)).isFalse();
      absent += set.probes(e);
    }
    assertThat((double) present / n).as("seed %d: present", seed).isLessThan(2.0);
    assertThat((double) absent / n).as("seed %d: absent", seed).isLessThan(4.0);
  }
}
