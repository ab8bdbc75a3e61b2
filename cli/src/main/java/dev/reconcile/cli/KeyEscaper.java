package dev.reconcile.cli;

/**
 * Escaping of key bytes for the text output, reversible and line-safe:
 *
 * <ul>
 *   <li>{@code \} becomes {@code \\}; TAB, LF, CR become {@code \t}, {@code \n}, {@code \r};
 *   <li>every other byte below 0x20, and 0x7f, becomes {@code \xHH} (two lower-case hex digits);
 *   <li>a well-formed UTF-8 sequence (shortest form, no surrogates, at most U+10FFFF) passes
 *       through, except the C1 controls U+0080..U+009F, whose two bytes are written {@code
 *       \xc2\xHH};
 *   <li>every byte that is not part of a well-formed UTF-8 sequence becomes {@code \xHH}.
 * </ul>
 *
 * The result therefore contains no control character and is valid UTF-8; {@link #unescape} gives
 * the original bytes back.
 */
final class KeyEscaper {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private KeyEscaper() {}

  static String escape(byte[] b, int off, int len) {
    StringBuilder sb = new StringBuilder(len + 8);
    escape(b, off, len, sb);
    return sb.toString();
  }

  static void escape(byte[] b, int off, int len, StringBuilder sb) {
    int end = off + len;
    int i = off;
    while (i < end) {
      int c = b[i] & 0xff;
      if (c < 0x80) {
        switch (c) {
          case '\\' -> sb.append("\\\\");
          case '\t' -> sb.append("\\t");
          case '\n' -> sb.append("\\n");
          case '\r' -> sb.append("\\r");
          default -> {
            if (c < 0x20 || c == 0x7f) {
              hex(sb, c);
            } else {
              sb.append((char) c);
            }
          }
        }
        i++;
        continue;
      }
      int n = utf8Length(b, i, end);
      if (n == 0) {
        hex(sb, c);
        i++;
        continue;
      }
      int cp = decode(b, i, n);
      if (cp >= 0x80 && cp <= 0x9f) {
        for (int k = 0; k < n; k++) {
          hex(sb, b[i + k] & 0xff);
        }
      } else {
        sb.appendCodePoint(cp);
      }
      i += n;
    }
  }

  private static void hex(StringBuilder sb, int c) {
    sb.append('\\').append('x').append(HEX[c >>> 4]).append(HEX[c & 15]);
  }

  /** Length (2..4) of the well-formed UTF-8 sequence starting at {@code i}, or 0. */
  static int utf8Length(byte[] b, int i, int end) {
    int c = b[i] & 0xff;
    int n;
    int lo = 0x80;
    int hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 3;
      if (c == 0xe0) {
        lo = 0xa0; // no overlong forms
      } else if (c == 0xed) {
        hi = 0x9f; // no surrogates
      }
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4;
      if (c == 0xf0) {
        lo = 0x90;
      } else if (c == 0xf4) {
        hi = 0x8f; // at most U+10FFFF
      }
    } else {
      return 0;
    }
    if (i + n > end) {
      return 0;
    }
    int c1 = b[i + 1] & 0xff;
    if (c1 < lo || c1 > hi) {
      return 0;
    }
    for (int k = 2; k < n; k++) {
      int ck = b[i + k] & 0xff;
      if (ck < 0x80 || ck > 0xbf) {
        return 0;
      }
    }
    return n;
  }

  private static int decode(byte[] b, int i, int n) {
    int cp = b[i] & (0xff >>> (n + 1));
    for (int k = 1; k < n; k++) {
      cp = (cp << 6) | (b[i + k] & 0x3f);
    }
    return cp;
  }

  /** Inverse of {@link #escape}; fails on a malformed escape. */
  static byte[] unescape(String s) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(s.length());
    byte[] u = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    for (int i = 0; i < u.length; i++) {
      byte c = u[i];
      if (c != '\\') {
        out.write(c);
        continue;
      }
      if (i + 1 >= u.length) {
        throw new IllegalArgumentException("dangling backslash in " + s);
      }
      char e = (char) u[++i];
      switch (e) {
        case '\\' -> out.write('\\');
        case 't' -> out.write('\t');
        case 'n' -> out.write('\n');
        case 'r' -> out.write('\r');
        case 'x' -> {
          if (i + 2 >= u.length) {
            throw new IllegalArgumentException("short \\x escape in " + s);
          }
          out.write(
              Integer.parseInt(
                  new String(u, i + 1, 2, java.nio.charset.StandardCharsets.US_ASCII), 16));
          i += 2;
        }
        default -> throw new IllegalArgumentException("unknown escape \\" + e + " in " + s);
      }
    }
    return out.toByteArray();
  }
}
