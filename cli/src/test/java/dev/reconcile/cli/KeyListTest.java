package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class KeyListTest {
  /** Keys built to stress the chunked sort: shared prefixes, NULs, 0xff, prefixes of each other. */
  private static byte[] key(SplittableRandom r) {
    String[] prefixes = {
      "",
      "user:",
      "abcdefgh",
      "abcdefghijklmnop",
      "\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000"
    };
    byte[] p =
        prefixes[r.nextInt(prefixes.length)].getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    byte[] k = Arrays.copyOf(p, p.length + r.nextInt(0, 20));
    byte[] alphabet = {0, 1, 'a', 'b', (byte) 0x7f, (byte) 0x80, (byte) 0xff};
    for (int i = p.length; i < k.length; i++) {
      k[i] = alphabet[r.nextInt(alphabet.length)];
    }
    return k;
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5})
  void sortsLikeUnsignedComparison(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int n = r.nextInt(0, 20_000);
    List<byte[]> keys = new ArrayList<>();
    KeyList.Builder b = new KeyList.Builder();
    for (int i = 0; i < n; i++) {
      byte[] k = key(r);
      keys.add(k);
      byte[] padded = new byte[k.length + 6];
      System.arraycopy(k, 0, padded, 3, k.length);
      b.add(padded, 3, k.length);
    }
    keys.sort(Arrays::compareUnsigned);
    KeyList l = b.build();
    assertThat(l.size()).isEqualTo(n);
    for (int i = 0; i < n; i++) {
      assertThat(l.key(i)).as("seed %d position %d", seed, i).isEqualTo(keys.get(i));
      if (i > 0) {
        assertThat(l.compare(i - 1, l, i))
            .as("seed %d position %d", seed, i)
            .isLessThanOrEqualTo(0);
      }
    }
  }
}
