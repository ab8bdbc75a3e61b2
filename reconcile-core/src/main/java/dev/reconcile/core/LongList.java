package dev.reconcile.core;

import java.util.Arrays;

/** Growable list of primitive longs. */
public final class LongList {
  private long[] a;
  private int n;

  public LongList(int capacity) {
    a = new long[Math.max(4, capacity)];
  }

  /** A list holding {@code values} (the array is copied). */
  public static LongList of(long[] values) {
    LongList l = new LongList(values.length);
    l.addAll(values);
    return l;
  }

  public void add(long v) {
    if (n == a.length) {
      a = Arrays.copyOf(a, a.length * 2);
    }
    a[n++] = v;
  }

  public void addAll(long[] vs) {
    for (long v : vs) {
      add(v);
    }
  }

  public long get(int i) {
    if (i >= n) {
      throw new IndexOutOfBoundsException(i + " >= " + n);
    }
    return a[i];
  }

  public int size() {
    return n;
  }

  public void clear() {
    n = 0;
  }

  public long[] toArray() {
    return Arrays.copyOf(a, n);
  }
}
