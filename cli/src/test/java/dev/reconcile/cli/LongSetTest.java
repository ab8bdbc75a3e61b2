package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LongSetTest {
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 3, 100, 65_537})
  void membershipMatchesHashSet(int n) {
    long seed = 31L + n;
    SplittableRandom r = new SplittableRandom(seed);
    long[] members = new long[n];
    Set<Long> ref = new HashSet<>();
    for (int i = 0; i < n; i++) {
      members[i] = i % 17 == 0 ? i / 17 : r.nextLong(); // small values and 0 too
      ref.add(members[i]);
    }
    // Without the bitmap (few lookups expected) and with it (many).
    for (LongSet s : new LongSet[] {new LongSet(members), new LongSet(members, 1L << 40)}) {
      for (long x : members) {
        assertThat(s.contains(x)).as("seed %d member %d", seed, x).isTrue();
      }
      for (int i = 0; i < 100_000; i++) {
        long x = i % 3 == 0 ? i : r.nextLong();
        assertThat(s.contains(x)).as("seed %d probe %d", seed, x).isEqualTo(ref.contains(x));
      }
    }
  }
}
