package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KeyEscaperTest {
  private static String esc(byte... b) {
    return KeyEscaper.escape(b, 0, b.length);
  }

  private static String esc(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    return KeyEscaper.escape(b, 0, b.length);
  }

  @Test
  void asciiControlAndBackslash() {
    assertThat(esc("plain key-1")).isEqualTo("plain key-1");
    assertThat(esc("a\\b")).isEqualTo("a\\\\b");
    assertThat(esc("a\tb\nc\rd")).isEqualTo("a\\tb\\nc\\rd");
    assertThat(esc((byte) 0, (byte) 0x1b, (byte) 0x7f)).isEqualTo("\\x00\\x1b\\x7f");
  }

  @Test
  void utf8PassesThroughInvalidBytesEscaped() {
    assertThat(esc("café ☃ 𝄞")).isEqualTo("café ☃ 𝄞");
    assertThat(esc((byte) 0xff, (byte) 'a')).isEqualTo("\\xffa");
    assertThat(esc((byte) 0xc3)).isEqualTo("\\xc3"); // truncated sequence
    assertThat(esc((byte) 0xc0, (byte) 0x80)).isEqualTo("\\xc0\\x80"); // overlong NUL
    assertThat(esc((byte) 0xed, (byte) 0xa0, (byte) 0x80))
        .isEqualTo("\\xed\\xa0\\x80"); // surrogate
    assertThat(esc((byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80))
        .isEqualTo("\\xf4\\x90\\x80\\x80");
    assertThat(esc((byte) 0xc2, (byte) 0x85)).isEqualTo("\\xc2\\x85"); // C1 control NEL
  }

  @Test
  void roundTripsRandomBytesAndIsControlFree() {
    long seed = 20260101L;
    SplittableRandom r = new SplittableRandom(seed);
    byte[] alphabet = {
      0,
      9,
      10,
      13,
      27,
      92,
      120,
      127,
      (byte) 0x80,
      (byte) 0xbf,
      (byte) 0xc2,
      (byte) 0xc3,
      (byte) 0xa9,
      (byte) 0xe2,
      (byte) 0x98,
      (byte) 0x83,
      (byte) 0xf0,
      (byte) 0x9d,
      (byte) 0xff,
      'a',
      ' '
    };
    for (int t = 0; t < 20_000; t++) {
      byte[] b = new byte[r.nextInt(12)];
      for (int i = 0; i < b.length; i++) {
        b[i] = r.nextInt(3) == 0 ? (byte) r.nextInt(256) : alphabet[r.nextInt(alphabet.length)];
      }
      String e = KeyEscaper.escape(b, 0, b.length);
      assertThat(KeyEscaper.unescape(e)).as("seed %d trial %d", seed, t).isEqualTo(b);
      assertThat(e.chars().noneMatch(c -> c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f)))
          .as("seed %d trial %d: %s", seed, t, e)
          .isTrue();
      // Valid UTF-8: decoding and re-encoding is the identity.
      byte[] u = e.getBytes(StandardCharsets.UTF_8);
      assertThat(new String(u, StandardCharsets.UTF_8)).isEqualTo(e);
    }
  }
}
