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
 * <p>Layout: key and value bytes of record {@code i} lie contiguously in a {@link ByteArena} at
 * {@code addr[i]} ({@code keyLen[i]} key bytes, then {@code valLen[i]} value bytes). Parallel
 * arrays hold the key hash and the element {@code spec.element(keyHash, 0, 0, false, valueHash)}:
 * the identity of a record is its key and value, as version, origin and tombstone do not exist in a
 * plain file. About 24 bytes per record beyond the data, plus transient sort arrays.
 *
 * <p>After loading, {@link #dedupe} keeps one record per key (the last one read), and the live
 * records feed {@link MemorySketches} and, after reconciliation, {@link #keysOf}.
 */
final class RecordTable {
  private static final int MAX_WARNINGS = 5;

  private final HashSpec spec;
  private final ByteArena arena = new ByteArena();
  private long[] addr = new long[1024];
  private int[] keyLen = new int[1024];
  private int[] valLen = new int[1024];
  private long[] keyHash = new long[1024];
  private long[] element = new long[1024];
  private int n;
  private int[] live;
  private long duplicateLines;
  private long conflictingKeys;

  RecordTable(HashSpec spec) {
    this.spec = spec;
  }

  /** Adds a record whose key is {@code k[kOff, kOff+kLen)} and value {@code v[vOff, vOff+vLen)}. */
  void add(byte[] k, int kOff, int kLen, byte[] v, int vOff, int vLen) {
    if (n == addr.length) {
      int cap = n + (n >> 1);
      if (cap < 0 || cap > Integer.MAX_VALUE - 16) {
        throw new CliException("more than " + n + " records in one input");
      }
      addr = Arrays.copyOf(addr, cap);
      keyLen = Arrays.copyOf(keyLen, cap);
      valLen = Arrays.copyOf(valLen, cap);
      keyHash = Arrays.copyOf(keyHash, cap);
      element = Arrays.copyOf(element, cap);
    }
    long kh = spec.keyHash(k, kOff, kLen);
    long vh = spec.valueHash(v, vOff, vLen);
    addr[n] = arena.append(k, kOff, kLen, v, vOff, vLen);
    keyLen[n] = kLen;
    valLen[n] = vLen;
    keyHash[n] = kh;
    element[n] = spec.element(kh, 0, 0, false, vh);
    n++;
  }

  /** Records read, before {@link #dedupe}. */
  int recordsRead() {
    return n;
  }

  long bytes() {
    return arena.bytes();
  }

  /**
   * Keeps one record per key: the last one read. Every earlier record of the key is dropped
   * (counted in {@link #duplicateLines}); a key whose records do not all have the same value is
   * reported to {@code warn} (the first few keys, then a count) and counted in {@link
   * #conflictingKeys}.
   *
   * <p>Sorts (key hash, record number) pairs; records with equal key hashes are then grouped by
   * their key bytes, so even a 64-bit key-hash collision between different keys is handled.
   */
  void dedupe(String label, Consumer<String> warn) {
    long[] kh = Arrays.copyOf(keyHash, n);
    int[] idx = new int[n];
    for (int i = 0; i < n; i++) {
      idx[i] = i;
    }
    PrimitiveSort.sortUnsigned(kh, idx, n);
    int[] keep = new int[n];
    int m = 0;
    int i = 0;
    while (i < n) {
      int j = i + 1;
      while (j < n && kh[j] == kh[i]) {
        j++;
      }
      if (j == i + 1) {
        keep[m++] = idx[i];
      } else {
        m = resolveRun(idx, i, j, keep, m, label, warn);
      }
      i = j;
    }
    if (conflictingKeys > MAX_WARNINGS) {
      warn.accept(
          label
              + ": "
              + (conflictingKeys - MAX_WARNINGS)
              + " more keys with different values (last one wins)");
    }
    live = Arrays.copyOf(keep, m);
    Arrays.sort(live); // input order: deterministic scans, better locality
  }

  /**
   * Records {@code idx[from, to)} share a key hash and are in input order. Linear when they share
   * the key too (the usual case: repeated lines); quadratic only for a true 64-bit key-hash
   * collision.
   */
  private int resolveRun(
      int[] idx, int from, int to, int[] keep, int m, String label, Consumer<String> warn) {
    boolean oneKey = true;
    for (int a = from + 1; a < to && oneKey; a++) {
      oneKey = sameKey(idx[from], idx[a]);
    }
    if (oneKey) {
      keepLast(idx, from, to, idx[from], label, warn);
      keep[m++] = idx[to - 1];
      return m;
    }
    boolean[] done = new boolean[to - from];
    for (int a = from; a < to; a++) {
      if (done[a - from]) {
        continue;
      }
      int winner = a;
      for (int b = a; b < to; b++) {
        if (sameKey(idx[a], idx[b])) {
          done[b - from] = true;
          winner = b;
        }
      }
      int[] group = new int[to - from];
      int g = 0;
      for (int b = a; b < to; b++) {
        if (sameKey(idx[a], idx[b])) {
          group[g++] = idx[b];
        }
      }
      keepLast(group, 0, g, idx[a], label, warn);
      keep[m++] = idx[winner];
    }
    return m;
  }

  /** {@code ids[from, to)} are the records of one key in input order; the last one wins. */
  private void keepLast(
      int[] ids, int from, int to, int first, String label, Consumer<String> warn) {
    int winner = ids[to - 1];
    duplicateLines += to - from - 1;
    for (int a = from; a < to - 1; a++) {
      if (!sameValue(ids[a], winner)) {
        conflictingKeys++;
        if (conflictingKeys <= MAX_WARNINGS) {
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
    int oa = ByteArena.offset(addr[a]) + keyLen[a];
    int ob = ByteArena.offset(addr[b]) + keyLen[b];
    return valLen[a] == valLen[b]
        && Arrays.equals(
            arena.chunk(addr[a]), oa, oa + valLen[a], arena.chunk(addr[b]), ob, ob + valLen[b]);
  }

  /** Distinct keys after {@link #dedupe}. */
  int size() {
    return live.length;
  }

  /** Records dropped by {@link #dedupe} because a later record has the same key. */
  long duplicateLines() {
    return duplicateLines;
  }

  /** Keys seen with more than one value. */
  long conflictingKeys() {
    return conflictingKeys;
  }

  /** The in-memory sketches of the live records. */
  MemorySketches sketches(SketchParams params, EstimatorFactory estimators) {
    int m = live.length;
    long[] el = new long[m];
    int[] part = new int[m];
    for (int i = 0; i < m; i++) {
      int r = live[i];
      el[i] = element[r];
      part[i] = HashSpec.partition(keyHash[r], params.partitionsLog2());
    }
    return MemorySketches.of(params, estimators, part, el);
  }

  /**
   * The keys of the live records whose element is in {@code sortedElements}, in one scan with a
   * hash-set lookup per record: O(n + d) time, O(d) memory, no index over all records.
   */
  KeyList keysOf(long[] sortedElements) {
    KeyList.Builder b = new KeyList.Builder();
    if (sortedElements.length == 0) {
      return b.build();
    }
    LongSet wanted = new LongSet(sortedElements);
    int found = 0;
    for (int r : live) {
      if (wanted.contains(element[r])) {
        b.add(arena.chunk(addr[r]), ByteArena.offset(addr[r]), keyLen[r]);
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
