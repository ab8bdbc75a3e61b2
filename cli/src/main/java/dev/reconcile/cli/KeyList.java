package dev.reconcile.cli;

import java.util.Arrays;

/**
 * A sorted list of keys (unsigned bytewise order) in one byte array with offset and length arrays:
 * the differing keys of one side, as produced by {@link Side#keysOf}.
 */
final class KeyList {
  private final byte[] data;
  private final int[] off;
  private final int[] len;

  private KeyList(byte[] data, int[] off, int[] len) {
    this.data = data;
    this.off = off;
    this.len = len;
  }

  int size() {
    return off.length;
  }

  byte[] data() {
    return data;
  }

  int offset(int i) {
    return off[i];
  }

  int length(int i) {
    return len[i];
  }

  byte[] key(int i) {
    return Arrays.copyOfRange(data, off[i], off[i] + len[i]);
  }

  /** Unsigned bytewise comparison of key {@code i} here with key {@code j} of {@code o}. */
  int compare(int i, KeyList o, int j) {
    return Arrays.compareUnsigned(
        data, off[i], off[i] + len[i], o.data, o.off[j], o.off[j] + o.len[j]);
  }

  /** Collects keys, then sorts them. */
  static final class Builder {
    private byte[] data = new byte[256];
    private int size;
    private int[] off = new int[16];
    private int[] len = new int[16];
    private int n;

    Builder add(byte[] b, int o, int l) {
      if (n == off.length) {
        off = Arrays.copyOf(off, n * 2);
        len = Arrays.copyOf(len, n * 2);
      }
      if (data.length - size < l) {
        long cap = Math.max((long) data.length * 2, (long) size + l);
        if (cap > Integer.MAX_VALUE - 16) {
          throw new CliException("differing keys exceed 2 GiB");
        }
        data = Arrays.copyOf(data, (int) cap);
      }
      System.arraycopy(b, o, data, size, l);
      off[n] = size;
      len[n] = l;
      size += l;
      n++;
      return this;
    }

    /**
     * Sorts the keys (unsigned bytewise) and lays them out in that order. Sorting is MSD by 8-byte
     * chunks: the big-endian chunk at depth 0 of every key is sorted as a primitive {@code long}
     * with the key index alongside; each run of equal chunks is ordered by the bytes left (a key
     * that ends inside the chunk sorts before a longer one), and the keys with more bytes are
     * sorted again at depth 8, and so on. Each level reads a key once, so the sort runs on
     * cache-friendly {@code long[]} instead of comparing scattered keys.
     */
    KeyList build() {
      int[] perm = new int[n];
      for (int i = 0; i < n; i++) {
        perm[i] = i;
      }
      sort(perm, new long[n], 0, n, 0);
      byte[] sorted = new byte[size];
      int[] so = new int[n];
      int[] sl = new int[n];
      int pos = 0;
      for (int i = 0; i < n; i++) {
        int k = perm[i];
        System.arraycopy(data, off[k], sorted, pos, len[k]);
        so[i] = pos;
        sl[i] = len[k];
        pos += len[k];
      }
      return new KeyList(sorted, so, sl);
    }

    /** Sorts {@code perm[from, to)}, whose keys agree on their first {@code depth} bytes. */
    private void sort(int[] perm, long[] scratch, int from, int to, int depth) {
      while (to - from > 1) {
        for (int i = from; i < to; i++) {
          scratch[i] = chunk(perm[i], depth);
        }
        PrimitiveSort.sortUnsigned(scratch, perm, from, to);
        int longer = -1; // a run of keys that go on past this chunk, sorted after the loop
        int longerEnd = -1;
        int a = from;
        while (a < to) {
          int b = a + 1;
          while (b < to && scratch[b] == scratch[a]) {
            b++;
          }
          if (b - a > 1) {
            // Equal chunks: order by bytes left, capped at 9 (= "more than this chunk").
            for (int i = a; i < b; i++) {
              scratch[i] = Math.min(len[perm[i]] - depth, 9);
            }
            PrimitiveSort.sortUnsigned(scratch, perm, a, b);
            int c = a;
            while (c < b && scratch[c] < 9) {
              c++;
            }
            if (b - c > 1) {
              if (longer >= 0) {
                sort(perm, scratch, longer, longerEnd, depth + 8);
              }
              longer = c;
              longerEnd = b;
            }
            // scratch[a, b) now holds lengths; restore chunks for the run scan (only scratch[b]
            // on).
          }
          a = b;
        }
        if (longer < 0) {
          return;
        }
        from = longer; // the last run: loop instead of recursing
        to = longerEnd;
        depth += 8;
      }
    }

    /** Bytes {@code [depth, depth+8)} of key {@code k}, big-endian, zero-padded. */
    private long chunk(int k, int depth) {
      int o = off[k] + depth;
      int n = Math.min(8, len[k] - depth);
      long x = 0;
      for (int i = 0; i < 8; i++) {
        x = (x << 8) | (i < n ? data[o + i] & 0xff : 0);
      }
      return x;
    }
  }
}
