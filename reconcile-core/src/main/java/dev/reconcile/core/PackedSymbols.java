package dev.reconcile.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The wire form of a range {@code [from, to)} of coded symbols ({@link CodedSymbols}): packing
 * format version 1.
 *
 * <h2>Byte layout</h2>
 *
 * Symbols back to back, {@link #SYMBOL_BYTES} = 14 bytes each, little-endian, no header and no
 * per-symbol framing; the range's {@code from}, the hash spec (id, seed fingerprint), the index
 * derivation ({@code ratelessIndices/v1}) and this format version travel in the message that
 * carries the bytes.
 *
 * <pre>
 *   offset  14k + 0        14k + 8        14k + 12       14(k+1)
 *           +--------------+--------------+--------------+
 *           | elementSum   | checkSum     | count        |      symbol from + k
 *           | 8 B, LE      | 4 B, LE      | 2 B, LE      |
 *           +--------------+--------------+--------------+
 *   elementSum = XOR of the symbol's elements (all 64 bits)
 *   checkSum   = XOR of the low 32 bits of checkHash(element)
 *   count      = the sender's count modulo 2^16 (two's complement low 16 bits)
 * </pre>
 *
 * <h2>Why 16 bits of count</h2>
 *
 * The sender's absolute counts grow with its set size, so the count is sent modulo {@code 2^16} and
 * the receiver subtracts modulo {@code 2^16}: the difference symbol then holds the true count
 * difference modulo {@code 2^16}, and removing a recovered element subtracts exactly one. Modular
 * counts are therefore never wrong, only ambiguous, and the ambiguity is harmless to correctness:
 * purity is decided by the 32-bit check hash and the element's own index sequence, and completion
 * by the 96 bits of element and check sum of symbol 0 ({@link RatelessDecoder}). The width matters
 * for two other things, which is why it is 16 and not smaller:
 *
 * <ul>
 *   <li>Candidate cost: an impure symbol whose count is {@code +-1} modulo {@code 2^b} costs a
 *       keyed hash to reject. With {@code b = 16} that needs more than 32,767 differences in one
 *       symbol (only the first few symbols of a difference above 10^5); with {@code b = 2} half of
 *       all symbol updates during a peel would be such candidates.
 *   <li>The pacing estimate ({@link RatelessPacing}) reads the count differences of the received
 *       symbols, whose spread is {@code sqrt(d rho(i))}: 16 bits keep it unambiguous for {@code d}
 *       up to about 10^8, 8 bits only to about 5,000.
 * </ul>
 *
 * One byte of count would save 7 % of the symbol bytes (13 instead of 14).
 */
public final class PackedSymbols {
  /** Version of this packing, carried by the message that holds the bytes. */
  public static final int FORMAT_VERSION = 1;

  /** Bytes per packed symbol: 8 (element sum) + 4 (check sum) + 2 (count). */
  public static final int SYMBOL_BYTES = 14;

  private PackedSymbols() {}

  /** Bytes of {@code symbols} packed symbols. */
  public static long bytes(long symbols) {
    return symbols * SYMBOL_BYTES;
  }

  /** Writes symbols {@code [from, to)} of {@code s} at {@code out}'s position (little-endian). */
  public static void write(CodedSymbols s, int from, int to, ByteBuffer out) {
    checkRange(s, from, to);
    ByteBuffer b = out.order(ByteOrder.LITTLE_ENDIAN);
    long[] w = s.words();
    for (int k = from << 1, end = to << 1; k < end; k += 2) {
      long v = w[k + 1];
      b.putLong(w[k]).putInt((int) v).putShort((short) (v >> 32));
    }
  }

  /** Symbols {@code [from, to)} of {@code s} as a new array of {@code 14 (to - from)} bytes. */
  public static byte[] pack(CodedSymbols s, int from, int to) {
    checkRange(s, from, to);
    byte[] out = new byte[Math.toIntExact(bytes(to - from))];
    write(s, from, to, ByteBuffer.wrap(out));
    return out;
  }

  /**
   * The number of symbols in {@code packed} ({@code remaining()} bytes) for a range that must start
   * at {@code expectedFrom} and end at or before {@code limit}: validates, allocates nothing.
   */
  public static int symbolCount(int from, ByteBuffer packed, int expectedFrom, int limit)
      throws FormatException {
    if (from != expectedFrom) {
      throw new FormatException(
          "coded symbols from index " + from + ", expected the next index " + expectedFrom);
    }
    int len = packed.remaining();
    if (len == 0) {
      throw new FormatException("empty range of coded symbols at index " + from);
    }
    if (len % SYMBOL_BYTES != 0) {
      throw new FormatException(
          "packed coded symbols of "
              + len
              + " bytes: not a multiple of "
              + SYMBOL_BYTES
              + " bytes per symbol");
    }
    int n = len / SYMBOL_BYTES;
    if ((long) from + n > limit) {
      throw new FormatException(
          "coded symbols ["
              + from
              + ", "
              + ((long) from + n)
              + ") exceed the prefix of "
              + limit
              + " symbols");
    }
    return n;
  }

  private static void checkRange(CodedSymbols s, int from, int to) {
    if (from < 0 || to < from || to > s.size()) {
      throw new IndexOutOfBoundsException(
          "symbol range [" + from + ", " + to + ") of a prefix of " + s.size());
    }
  }
}
