package dev.reconcile.agent;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Percent-encoding of binary keys and values in URLs and bulk-load lines (RFC 3986 unreserved
 * kept).
 */
public final class KeyCodec {
  private KeyCodec() {}

  /** Decodes {@code %HH} escapes to bytes; other characters are taken as UTF-8. */
  public static byte[] decode(String s) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); ) {
      char c = s.charAt(i);
      if (c == '%') {
        if (i + 2 >= s.length()) {
          throw new IllegalArgumentException("truncated percent escape at offset " + i);
        }
        int hi = Character.digit(s.charAt(i + 1), 16);
        int lo = Character.digit(s.charAt(i + 2), 16);
        if (hi < 0 || lo < 0) {
          throw new IllegalArgumentException(
              "bad percent escape '" + s.substring(i, i + 3) + "' at offset " + i);
        }
        out.write(hi << 4 | lo);
        i += 3;
      } else {
        int cp = s.codePointAt(i);
        byte[] b = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
        out.write(b, 0, b.length);
        i += Character.charCount(cp);
      }
    }
    return out.toByteArray();
  }

  /** Encodes every byte outside {@code A-Z a-z 0-9 - . _ ~} as {@code %HH}. */
  public static String encode(byte[] b) {
    StringBuilder sb = new StringBuilder(b.length);
    for (byte x : b) {
      int c = x & 0xFF;
      if ((c >= 'A' && c <= 'Z')
          || (c >= 'a' && c <= 'z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '.'
          || c == '_'
          || c == '~') {
        sb.append((char) c);
      } else {
        sb.append('%')
            .append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
      }
    }
    return sb.toString();
  }
}
