package dev.reconcile.cli.replay;

import dev.reconcile.cli.replay.Scenario.Size;
import java.nio.charset.StandardCharsets;

/**
 * Deterministic keys and values of a scenario. Key index {@code i} is {@code k} + 10 decimal digits
 * padded with letters to a length drawn from the key-size distribution, all derived from {@code
 * (seed, i)} by SplitMix64, so every replica and every run sees the same key for the same index.
 * Values are printable letters (so TSV files and logs stay readable) drawn from {@code (seed, i,
 * salt)}.
 */
final class KeyGen {
  private static final byte[] LETTERS =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
          .getBytes(StandardCharsets.US_ASCII);
  private final long seed;
  private final Size keySize;

  KeyGen(long seed, Size keySize) {
    this.seed = seed;
    this.keySize = keySize;
  }

  byte[] key(long i) {
    String base = "k" + String.format("%010d", i);
    long h = mix(seed ^ mix(i));
    int len = Math.max(base.length(), draw(keySize, h));
    byte[] k = new byte[len];
    byte[] b = base.getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(b, 0, k, 0, b.length);
    for (int j = b.length; j < len; j++) {
      h = mix(h);
      k[j] = LETTERS[(int) Long.remainderUnsigned(h, LETTERS.length)];
    }
    return k;
  }

  byte[] value(long i, long salt, Size size) {
    long h = mix(seed ^ mix(i) ^ mix(salt * 0x9E3779B97F4A7C15L + 1));
    int len = draw(size, h);
    byte[] v = new byte[len];
    for (int j = 0; j < len; j++) {
      h = mix(h);
      v[j] = LETTERS[(int) Long.remainderUnsigned(h, LETTERS.length)];
    }
    return v;
  }

  private static int draw(Size s, long h) {
    return s.min() == s.max()
        ? s.min()
        : s.min() + (int) Long.remainderUnsigned(mix(h), s.max() - s.min() + 1L);
  }

  static long mix(long z) {
    z += 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
