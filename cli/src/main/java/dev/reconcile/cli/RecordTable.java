package dev.reconcile.cli;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.MemorySketches;
import dev.reconcile.core.SketchParams;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The records of one local input (a file or a plain RocksDB), held without one object per record.
 *
 * <p>Layout: the key of record {@code i} lies in a {@link ByteArena} at {@code addr[i]} ({@code
 * keyLen[i]} bytes), its value one byte further on ({@code valLen[i]} bytes): where a text line
 * holds them (read into the arena in place, see {@link FileSource}) or where {@link
 * ByteArena#appendRecord} copied them. Parallel arrays hold the key hash and the element {@code
 * spec.element(keyHash, 0, 0, false, valueHash)}: the identity of a record is its key and value, as
 * version, origin and tombstone do not exist in a plain file. 32 bytes per record beyond the data.
 *
 * <p>After loading, {@link #dedupe} keeps one record per key (the last one read) and marks the
 * others dropped in a bitset; the live records feed {@link MemorySketches} and, after
 * reconciliation, {@link #keysOf}, both in one sequential pass over the arrays.
 */
final class RecordTable {
  private static final int MAX_WARNINGS = 5;
  private static final int MIN_CAPACITY = 1024;

  /** Buckets of at most this many records are sorted by insertion, larger ones by quicksort. */
  private static final int INSERTION_SORT_MAX = 32;

  private final HashSpec spec;
  private final long emptyValueHash;
  private final ByteArena arena = new ByteArena();
  private long[] addr;
  private int[] keyLen;
  private int[] valLen;
  private long[] keyHash;
  private long[] element;
  private int n;
  private long dataBytes;

  /** Bit i set: record i was dropped by {@link #dedupe}; null while none is. */
  private long[] dropped;

  private int live = -1;
  private long duplicateLines;
  private long conflictingKeys;

  RecordTable(HashSpec spec) {
    this.spec = spec;
    this.emptyValueHash = spec.valueHash(new byte[0]);
    allocate(MIN_CAPACITY);
  }

  ByteArena arena() {
    return arena;
  }

  /**
   * Grows the arrays at once to hold {@code records} in all (a hint from the input's size; saves
   * the copies of repeated growth).
   */
  void expect(long records) {
    if (records > addr.length && records < Integer.MAX_VALUE - 16) {
      resize((int) records);
    }
  }

  /**
   * Adds a copy of the record whose key is {@code k[kOff, kOff+kLen)}, value {@code v[vOff...]}.
   */
  void add(byte[] k, int kOff, int kLen, byte[] v, int vOff, int vLen) {
    long a = arena.appendRecord(k, kOff, kLen, v, vOff, vLen);
    put(a, kLen, vLen, spec.keyHash(k, kOff, kLen), valueHash(v, vOff, vLen));
  }

  /**
   * Adds the record that lies in arena chunk {@code chunkIndex} ({@code chunk}): key at {@code
   * [off, off+kLen)}, value at {@code [off+kLen+1, off+kLen+1+vLen)}. Nothing is copied.
   */
  void addInPlace(int chunkIndex, byte[] chunk, int off, int kLen, int vLen) {
    put(
        ByteArena.address(chunkIndex, off),
        kLen,
        vLen,
        spec.keyHash(chunk, off, kLen),
        valueHash(chunk, off + kLen + 1, vLen));
  }

  private long valueHash(byte[] b, int off, int len) {
    return len == 0 ? emptyValueHash : spec.valueHash(b, off, len);
  }

  private void put(long a, int kl, int vl, long kh, long vh) {
    if (n == addr.length) {
      long cap = (long) n + (n >> 1);
      if (cap > Integer.MAX_VALUE - 16) {
        throw new CliException("more than " + n + " records in one input");
      }
      resize((int) cap);
    }
    addr[n] = a;
    keyLen[n] = kl;
    valLen[n] = vl;
    keyHash[n] = kh;
    element[n] = spec.element(kh, 0, 0, false, vh);
    dataBytes += (long) kl + vl;
    n++;
  }

  private void allocate(int cap) {
    addr = new long[cap];
    keyLen = new int[cap];
    valLen = new int[cap];
    keyHash = new long[cap];
    element = new long[cap];
  }

  private void resize(int cap) {
    addr = Arrays.copyOf(addr, cap);
    keyLen = Arrays.copyOf(keyLen, cap);
    valLen = Arrays.copyOf(valLen, cap);
    keyHash = Arrays.copyOf(keyHash, cap);
    element = Arrays.copyOf(element, cap);
  }

  /** Records read, before {@link #dedupe}. */
  int recordsRead() {
    return n;
  }

  /** Bytes of keys and values read (every record, dropped ones included). */
  long bytes() {
    return dataBytes;
  }

  /**
   * Keeps one record per key: the last one read. Every earlier record of the key is dropped
   * (counted in {@link #duplicateLines}); a key whose records do not all have the same value is
   * reported to {@code warn} (the first few keys, then a count) and counted in {@link
   * #conflictingKeys}.
   *
   * <p>Records are bucketed by the top bits of their key hash (one counting pass, one scatter pass
   * over (key hash, record number) pairs, four to eight records per bucket). A bucket whose key
   * hashes are pairwise different (almost all of them) is done; any other is sorted by key hash,
   * stably, so that records of one key meet in input order. Records with equal key hashes are then
   * grouped by their key bytes, so even a 64-bit key-hash collision between different keys is
   * handled. O(n) expected time, 12 bytes per record of scratch.
   */
  void dedupe(String label, Consumer<String> warn) {
    if (n < 2) {
      live = n;
      return;
    }
    int bits = Math.max(1, Math.min(20, 29 - Integer.numberOfLeadingZeros(n)));
    int shift = 64 - bits;
    int buckets = 1 << bits;
    int[] start = new int[buckets + 1];
    for (int i = 0; i < n; i++) {
      start[(int) (keyHash[i] >>> shift) + 1]++;
    }
    for (int b = 0; b < buckets; b++) {
      start[b + 1] += start[b];
    }
    int[] next = Arrays.copyOf(start, buckets);
    long[] sk = new long[n];
    int[] si = new int[n];
    for (int i = 0; i < n; i++) {
      long h = keyHash[i];
      int p = next[(int) (h >>> shift)]++;
      sk[p] = h;
      si[p] = i;
    }
    next = null;
    for (int b = 0; b < buckets; b++) {
      int from = start[b];
      int to = start[b + 1];
      if (to - from < 2 || (to - from <= INSERTION_SORT_MAX && distinct(sk, from, to))) {
        continue;
      }
      sortBucket(sk, si, from, to);
      int i = from;
      while (i < to) {
        int j = i + 1;
        while (j < to && sk[j] == sk[i]) {
          j++;
        }
        if (j - i > 1) {
          resolveRun(si, i, j, label, warn);
        }
        i = j;
      }
    }
    if (conflictingKeys > MAX_WARNINGS) {
      warn.accept(
          label
              + ": "
              + (conflictingKeys - MAX_WARNINGS)
              + " more keys with different values (last one wins)");
    }
    live = (int) (n - duplicateLines);
  }

  /** True when {@code keys[from, to)} are pairwise different (the usual case: no sort needed). */
  private static boolean distinct(long[] keys, int from, int to) {
    for (int i = from + 1; i < to; i++) {
      long k = keys[i];
      for (int j = from; j < i; j++) {
        if (keys[j] == k) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Sorts {@code keys[from, to)} as unsigned values with {@code idx} alongside, keeping records of
   * equal keys in {@code idx} order (which is ascending on entry).
   */
  private static void sortBucket(long[] keys, int[] idx, int from, int to) {
    if (to - from > INSERTION_SORT_MAX) {
      PrimitiveSort.sortUnsigned(keys, idx, from, to); // ties ordered by idx
      return;
    }
    for (int i = from + 1; i < to; i++) {
      long k = keys[i];
      int x = idx[i];
      int j = i - 1;
      while (j >= from && Long.compareUnsigned(keys[j], k) > 0) {
        keys[j + 1] = keys[j];
        idx[j + 1] = idx[j];
        j--;
      }
      keys[j + 1] = k;
      idx[j + 1] = x;
    }
  }

  /**
   * Records {@code idx[from, to)} share a key hash and are in input order. Linear when they share
   * the key too (the usual case: repeated lines); quadratic only for a true 64-bit key-hash
   * collision.
   */
  private void resolveRun(int[] idx, int from, int to, String label, Consumer<String> warn) {
    boolean oneKey = true;
    for (int a = from + 1; a < to && oneKey; a++) {
      oneKey = sameKey(idx[from], idx[a]);
    }
    if (oneKey) {
      keepLast(idx, from, to, label, warn);
      return;
    }
    boolean[] done = new boolean[to - from];
    int[] group = new int[to - from];
    for (int a = from; a < to; a++) {
      if (done[a - from]) {
        continue;
      }
      int g = 0;
      for (int b = a; b < to; b++) {
        if (!done[b - from] && sameKey(idx[a], idx[b])) {
          done[b - from] = true;
          group[g++] = idx[b];
        }
      }
      keepLast(group, 0, g, label, warn);
    }
  }

  /** {@code ids[from, to)} are the records of one key in input order; the last one wins. */
  private void keepLast(int[] ids, int from, int to, String label, Consumer<String> warn) {
    if (to - from < 2) {
      return;
    }
    int winner = ids[to - 1];
    duplicateLines += to - from - 1;
    if (dropped == null) {
      dropped = new long[(n + 63) >>> 6];
    }
    for (int a = from; a < to - 1; a++) {
      dropped[ids[a] >>> 6] |= 1L << ids[a];
    }
    for (int a = from; a < to - 1; a++) {
      if (!sameValue(ids[a], winner)) {
        conflictingKeys++;
        if (conflictingKeys <= MAX_WARNINGS) {
          int first = ids[from];
          warn.accept(
              label
                  + ": key '"
                  + KeyEscaper.escape(
                      arena.chunk(addr[first]), ByteArena.offset(addr[first]), keyLen[first])
                  + "' has "
                  + (to - from)
                  + " records with different values; the last one (record "
                  + (winner + 1)
                  + ") wins");
        }
        return;
      }
    }
  }

  /** Key bytes of record {@code i} (a copy). */
  byte[] key(int i) {
    int o = ByteArena.offset(addr[i]);
    return Arrays.copyOfRange(arena.chunk(addr[i]), o, o + keyLen[i]);
  }

  /** Value bytes of record {@code i} (a copy). */
  byte[] value(int i) {
    int o = ByteArena.offset(addr[i]) + keyLen[i] + 1;
    return valLen[i] == 0
        ? new byte[0]
        : Arrays.copyOfRange(arena.chunk(addr[i]), o, o + valLen[i]);
  }

  /** Element of record {@code i}. */
  long element(int i) {
    return element[i];
  }

  /** True when {@link #dedupe} dropped record {@code i} for a later record of its key. */
  boolean isDropped(int i) {
    return dropped != null && (dropped[i >>> 6] & (1L << i)) != 0;
  }

  private boolean sameKey(int a, int b) {
    return keyLen[a] == keyLen[b]
        && Arrays.equals(
            arena.chunk(addr[a]),
            ByteArena.offset(addr[a]),
            ByteArena.offset(addr[a]) + keyLen[a],
            arena.chunk(addr[b]),
            ByteArena.offset(addr[b]),
            ByteArena.offset(addr[b]) + keyLen[b]);
  }

  private boolean sameValue(int a, int b) {
    int oa = ByteArena.offset(addr[a]) + keyLen[a] + 1;
    int ob = ByteArena.offset(addr[b]) + keyLen[b] + 1;
    return valLen[a] == valLen[b]
        && (valLen[a] == 0
            || Arrays.equals(
                arena.chunk(addr[a]),
                oa,
                oa + valLen[a],
                arena.chunk(addr[b]),
                ob,
                ob + valLen[b]));
  }

  /** Distinct keys after {@link #dedupe}. */
  int size() {
    return live;
  }

  /** Records dropped by {@link #dedupe} because a later record has the same key. */
  long duplicateLines() {
    return duplicateLines;
  }

  /** Keys seen with more than one value. */
  long conflictingKeys() {
    return conflictingKeys;
  }

  /** The in-memory sketches of the live records; call once, after {@link #dedupe}. */
  MemorySketches sketches(SketchParams params, EstimatorFactory estimators) {
    long[] el = new long[live];
    int[] part = new int[live];
    int log2 = params.partitionsLog2();
    int j = 0;
    for (int i = 0; i < n; i++) {
      if (!isDropped(i)) {
        el[j] = element[i];
        part[j] = HashSpec.partition(keyHash[i], log2);
        j++;
      }
    }
    keyHash = null; // not needed any more
    return MemorySketches.of(params, estimators, part, el);
  }

  /**
   * The keys of the live records whose element is in {@code sortedElements}, in one scan with a
   * hash-set lookup per record: O(n + d) time, O(d) memory, no index over all records.
   */
  KeyList keysOf(long[] sortedElements) {
    KeyList.Builder b = new KeyList.Builder(arena);
    if (sortedElements.length == 0) {
      return b.build();
    }
    LongSet wanted = new LongSet(sortedElements, n);
    int found = 0;
    for (int r = 0; r < n; r++) {
      if (wanted.contains(element[r]) && !isDropped(r)) {
        b.addInArena(addr[r], keyLen[r]);
        found++;
      }
    }
    if (found < sortedElements.length) {
      throw new IllegalStateException(
          (sortedElements.length - found) + " reconciled elements match no record of this side");
    }
    return b.build();
  }
}
