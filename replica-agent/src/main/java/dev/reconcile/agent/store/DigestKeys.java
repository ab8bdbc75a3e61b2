package dev.reconcile.agent.store;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.rocksdb.ReadOptions;

/**
 * Row keys of the {@code digests} column family (the digest index; values are empty):
 *
 * <pre>
 *   partition (2 bytes, big-endian) | element (8 bytes, big-endian) | record key (rest)
 * </pre>
 *
 * RocksDB's bytewise order therefore lists a partition's elements in unsigned ascending order, and
 * two keys with the same element are two distinct rows (the key is part of the row key), so
 * duplicates need no special case.
 */
final class DigestKeys {
  static final int PREFIX = 10;

  private DigestKeys() {}

  /**
   * Read options for a scan of the index across prefixes. The column family has a prefix extractor
   * over the first {@link #PREFIX} bytes (StoreDb); without total order a seek may use the prefix
   * Bloom filters and miss rows of other prefixes.
   */
  static ReadOptions scanOptions() {
    return new ReadOptions().setTotalOrderSeek(true);
  }

  static byte[] of(int partition, long element, byte[] key) {
    byte[] out = new byte[PREFIX + key.length];
    write(out, 0, partition, element, key);
    return out;
  }

  /**
   * Writes the row key {@link #of}{@code (partition, element, key)} into {@code out} at {@code
   * off}.
   */
  static void write(byte[] out, int off, int partition, long element, byte[] key) {
    out[off] = (byte) (partition >>> 8);
    out[off + 1] = (byte) partition;
    RecordCodec.putLong(out, off + 2, element);
    System.arraycopy(key, 0, out, off + PREFIX, key.length);
  }

  private static final int DIGIT_BITS = 11;
  private static final int DIGIT_VALUES = 1 << DIGIT_BITS;
  private static final int DIGIT_MASK = DIGIT_VALUES - 1;

  /**
   * The order of {@code n} rows of one partition, given by their elements and keys, in the column
   * family's bytewise order: element unsigned ascending, then key (unsigned bytes, shorter first),
   * as {@code Arrays.compareUnsigned} orders the rows. Returns the row indices in that order.
   *
   * <p>An LSD radix sort over the element's six 11-bit digits (stable, O(n), primitive arrays; the
   * last digit has 9 bits; 2 048 counters a pass, against 65 536 for 16-bit digits, which cost more
   * than the rows at the few thousand rows of a chunk), then equal elements, which only a hash
   * collision gives, ordered by key. It replaces a {@code byte[][]} sort with a comparator: besides
   * its per-row comparisons, that sort's array stores made a cold agent's C2 deoptimize and
   * recompile {@code TimSort} dozens of times in one catch-up.
   */
  static int[] order(long[] elements, byte[][] keys, int n) {
    int[] idx = new int[n];
    int[] tmp = new int[n];
    for (int i = 0; i < n; i++) {
      idx[i] = i;
    }
    int[] start = new int[DIGIT_VALUES + 1];
    for (int shift = 0; shift < Long.SIZE; shift += DIGIT_BITS) {
      Arrays.fill(start, 0);
      for (int i = 0; i < n; i++) {
        start[((int) (elements[i] >>> shift) & DIGIT_MASK) + 1]++;
      }
      for (int d = 0; d < DIGIT_VALUES; d++) {
        start[d + 1] += start[d];
      }
      for (int i = 0; i < n; i++) {
        int j = idx[i];
        tmp[start[(int) (elements[j] >>> shift) & DIGIT_MASK]++] = j;
      }
      int[] t = idx;
      idx = tmp;
      tmp = t;
    }
    for (int i = 0; i < n; ) {
      int end = i + 1;
      while (end < n && elements[idx[end]] == elements[idx[i]]) {
        end++;
      }
      for (int a = i + 1; a < end; a++) { // insertion sort of a run of equal elements
        int x = idx[a];
        int b = a - 1;
        while (b >= i && Arrays.compareUnsigned(keys[idx[b]], keys[x]) > 0) {
          idx[b + 1] = idx[b];
          b--;
        }
        idx[b + 1] = x;
      }
      i = end;
    }
    return idx;
  }

  /**
   * The indices of {@code elements} in ascending unsigned order ({@link #order} with equal elements
   * kept in their given order): the order in which an {@link IndexWalk} takes them.
   */
  static int[] orderByElement(long[] elements) {
    byte[][] noKeys = new byte[elements.length][];
    Arrays.fill(noKeys, NO_KEY);
    return order(elements, noKeys, elements.length);
  }

  private static final byte[] NO_KEY = new byte[0];

  /** {@link #of} written into {@code out} (cleared first), flipped for reading. */
  static ByteBuffer put(ByteBuffer out, int partition, long element, byte[] key) {
    return out.clear()
        .put((byte) (partition >>> 8))
        .put((byte) partition)
        .putLong(element)
        .put(key)
        .flip();
  }

  static byte[] prefix(int partition, long element) {
    byte[] out = new byte[PREFIX];
    out[0] = (byte) (partition >>> 8);
    out[1] = (byte) partition;
    RecordCodec.putLong(out, 2, element);
    return out;
  }

  /** First row key of {@code partition} (a lower bound). */
  static byte[] partitionStart(int partition) {
    return new byte[] {(byte) (partition >>> 8), (byte) partition};
  }

  static int partition(byte[] row) {
    return (row[0] & 0xFF) << 8 | (row[1] & 0xFF);
  }

  static long element(byte[] row) {
    return RecordCodec.getLong(row, 2);
  }

  static byte[] key(byte[] row) {
    return Arrays.copyOfRange(row, PREFIX, row.length);
  }

  static boolean startsWith(byte[] row, byte[] prefix) {
    return row.length >= prefix.length
        && Arrays.equals(row, 0, prefix.length, prefix, 0, prefix.length);
  }
}
