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
    return Arrays.compareUnsigned(data, off[i], off[i] + len[i], o.data, o.off[j], o.off[j] + o.len[j]);
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

    KeyList build() {
      int[] perm = new int[n];
      for (int i = 0; i < n; i++) {
        perm[i] = i;
      }
      byte[] d = data;
      int[] o = off;
      int[] l = len;
      PrimitiveSort.mergeSort(
          perm, n, (a, b) -> Arrays.compareUnsigned(d, o[a], o[a] + l[a], d, o[b], o[b] + l[b]));
      int[] so = new int[n];
      int[] sl = new int[n];
      for (int i = 0; i < n; i++) {
        so[i] = o[perm[i]];
        sl[i] = l[perm[i]];
      }
      return new KeyList(d, so, sl);
    }
  }
}
