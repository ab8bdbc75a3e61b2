package dev.reconcile.cli;

import java.util.Arrays;

/**
 * A sorted list of keys (unsigned bytewise order), as produced by {@link Side#keysOf}: the keys'
 * addresses and lengths in a {@link ByteArena}, permuted into key order. The bytes are not copied
 * when they are already in an arena (a side read into a {@link RecordTable}): a differing key costs
 * 12 bytes here, whatever its length.
 */
final class KeyList {
  private final ByteArena arena;
  private final long[] addr;
  private final int[] len;

  private KeyList(ByteArena arena, long[] addr, int[] len) {
    this.arena = arena;
    this.addr = addr;
    this.len = len;
  }

  int size() {
    return addr.length;
  }

  /** The array that holds key {@code i}, from {@link #offset(int)} on. */
  byte[] chunk(int i) {
    return arena.chunk(addr[i]);
  }

  int offset(int i) {
    return ByteArena.offset(addr[i]);
  }

  int length(int i) {
    return len[i];
  }

  byte[] key(int i) {
    return Arrays.copyOfRange(chunk(i), offset(i), offset(i) + len[i]);
  }

  /** Unsigned bytewise comparison of key {@code i} here with key {@code j} of {@code o}. */
  int compare(int i, KeyList o, int j) {
    return Arrays.compareUnsigned(
        chunk(i), offset(i), offset(i) + len[i], o.chunk(j), o.offset(j), o.offset(j) + o.len[j]);
  }

  /** Collects keys, then sorts them. */
  static final class Builder {
    private static final byte[] EMPTY = new byte[0];
    private final ByteArena arena;
    private long[] addr = new long[16];
    private int[] len = new int[16];
    private int n;

    /** Keys added by {@link #add} are copied into an arena of the builder's own. */
    Builder() {
      this(new ByteArena());
    }

    /** Keys added by {@link #addInArena} lie in {@code arena}. */
    Builder(ByteArena arena) {
      this.arena = arena;
    }

    /** Adds a copy of {@code b[o, o+l)}. */
    Builder add(byte[] b, int o, int l) {
      return addInArena(arena.appendRecord(b, o, l, EMPTY, 0, 0), l);
    }

    /** Adds the key of {@code l} bytes at address {@code a} of the builder's arena. */
    Builder addInArena(long a, int l) {
      if (n == addr.length) {
        addr = Arrays.copyOf(addr, n * 2);
        len = Arrays.copyOf(len, n * 2);
      }
      addr[n] = a;
      len[n] = l;
      n++;
      return this;
    }

    /**
     * Sorts the keys (unsigned bytewise) and lists their addresses in that order. Sorting is MSD by
     * 8-byte chunks: the big-endian chunk at depth 0 of every key is sorted as a primitive {@code
     * long} with the key index alongside; each run of equal chunks is ordered by the bytes left (a
     * key that ends inside the chunk sorts before a longer one), and the keys with more bytes are
     * sorted again at depth 8, and so on. Each level reads a key once, so the sort runs on
     * cache-friendly {@code long[]} instead of comparing scattered keys.
     */
    KeyList build() {
      int[] perm = new int[n];
      for (int i = 0; i < n; i++) {
        perm[i] = i;
      }
      sort(perm, new long[n], 0, n, 0);
      long[] sa = new long[n];
      int[] sl = new int[n];
      for (int i = 0; i < n; i++) {
        sa[i] = addr[perm[i]];
        sl[i] = len[perm[i]];
      }
      return new KeyList(arena, sa, sl);
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
      byte[] data = arena.chunk(addr[k]);
      int o = ByteArena.offset(addr[k]) + depth;
      int n = Math.min(8, len[k] - depth);
      long x = 0;
      for (int i = 0; i < 8; i++) {
        x = (x << 8) | (i < n ? data[o + i] & 0xff : 0);
      }
      return x;
    }
  }
}
