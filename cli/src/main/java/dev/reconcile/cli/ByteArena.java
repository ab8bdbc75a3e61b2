package dev.reconcile.cli;

/**
 * Append-only byte storage in a few large chunks, addressed by a {@code long} ({@code chunk << 32 |
 * offset}). Holds the keys and values of a whole input without one object per record: a record is
 * stored as its key bytes immediately followed by its value bytes, and the caller keeps the address
 * and the two lengths in primitive arrays.
 *
 * <p>Chunks start at 64 KiB and double up to 16 MiB, so a small input costs little and a large one
 * wastes at most one partly filled chunk; a record larger than a chunk gets a chunk of its own.
 */
final class ByteArena {
  static final int FIRST_CHUNK = 1 << 16;
  static final int MAX_CHUNK = 1 << 24;

  private byte[][] chunks = new byte[8][];
  private int count;
  private byte[] current;
  private int pos;
  private int nextSize = FIRST_CHUNK;
  private long bytes;

  /**
   * Appends {@code a[aOff, aOff+aLen)} then {@code b[bOff, bOff+bLen)} contiguously; returns the
   * address.
   */
  long append(byte[] a, int aOff, int aLen, byte[] b, int bOff, int bLen) {
    int len = aLen + bLen;
    if (len < 0) {
      throw new CliException("record of more than 2 GiB");
    }
    if (current == null || current.length - pos < len) {
      newChunk(len);
    }
    long addr = ((long) (count - 1) << 32) | pos;
    System.arraycopy(a, aOff, current, pos, aLen);
    System.arraycopy(b, bOff, current, pos + aLen, bLen);
    pos += len;
    bytes += len;
    return addr;
  }

  private void newChunk(int atLeast) {
    int size = Math.max(nextSize, atLeast);
    nextSize = Math.min(MAX_CHUNK, nextSize << 1);
    if (count == chunks.length) {
      chunks = java.util.Arrays.copyOf(chunks, count * 2);
    }
    current = new byte[size];
    chunks[count++] = current;
    pos = 0;
  }

  byte[] chunk(long addr) {
    return chunks[(int) (addr >>> 32)];
  }

  static int offset(long addr) {
    return (int) addr;
  }

  /** Bytes stored. */
  long bytes() {
    return bytes;
  }
}
