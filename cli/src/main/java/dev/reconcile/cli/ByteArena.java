package dev.reconcile.cli;

import java.util.Arrays;

/**
 * Append-only byte storage in a few large chunks, addressed by a {@code long} ({@code chunk << 32 |
 * offset}). Holds the keys and values of a whole input without one object per record. A record is
 * stored as a text line would hold it: key bytes, one separator byte, value bytes, so its value
 * always starts at {@code offset + keyLength + 1}; the caller keeps the address and the two lengths
 * in primitive arrays.
 *
 * <p>Two ways in: {@link #appendRecord} copies a record (chunks start at 64 KiB and double up to 16
 * MiB, so a small input costs little and a large one wastes at most one partly filled chunk; a
 * record larger than a chunk gets a chunk of its own), and {@link #adopt} takes a block that the
 * caller filled in place (a file read straight into it, its lines addressed where they lie), so
 * text input is never copied record by record.
 */
final class ByteArena {
  static final int FIRST_CHUNK = 1 << 16;
  static final int MAX_CHUNK = 1 << 24;

  private byte[][] chunks = new byte[8][];
  private int count;
  private byte[] current;
  private int pos;
  private int nextSize = FIRST_CHUNK;

  /**
   * Appends {@code key[kOff, kOff+kLen)}, a TAB, then {@code value[vOff, vOff+vLen)}; returns the
   * address of the key.
   */
  long appendRecord(byte[] key, int kOff, int kLen, byte[] value, int vOff, int vLen) {
    long len = (long) kLen + 1 + vLen;
    if (len > Integer.MAX_VALUE - 16) {
      throw new CliException("record of more than 2 GiB");
    }
    if (current == null || current.length - pos < len) {
      newChunk((int) len);
    }
    long addr = address(count - 1, pos);
    System.arraycopy(key, kOff, current, pos, kLen);
    current[pos + kLen] = '\t';
    System.arraycopy(value, vOff, current, pos + kLen + 1, vLen);
    pos += (int) len;
    return addr;
  }

  /**
   * Makes {@code chunk} part of the arena and returns its index; the caller fills it and addresses
   * its bytes with {@link #address}. Later {@link #appendRecord} calls start a new chunk.
   */
  int adopt(byte[] chunk) {
    add(chunk);
    current = null;
    return count - 1;
  }

  private void newChunk(int atLeast) {
    int size = Math.max(nextSize, atLeast);
    nextSize = Math.min(MAX_CHUNK, nextSize << 1);
    current = new byte[size];
    add(current);
    pos = 0;
  }

  private void add(byte[] chunk) {
    if (count == chunks.length) {
      chunks = Arrays.copyOf(chunks, count * 2);
    }
    chunks[count++] = chunk;
  }

  /** Bytes the arena's chunks take, filled or not. */
  long capacity() {
    long sum = 0;
    for (int i = 0; i < count; i++) {
      sum += chunks[i].length;
    }
    return sum;
  }

  static long address(int chunk, int offset) {
    return ((long) chunk << 32) | offset;
  }

  byte[] chunk(long addr) {
    return chunks[(int) (addr >>> 32)];
  }

  static int offset(long addr) {
    return (int) addr;
  }
}
