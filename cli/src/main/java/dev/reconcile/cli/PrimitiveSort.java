package dev.reconcile.cli;

/** Sorts of primitive arrays that the JDK lacks; no boxing. */
final class PrimitiveSort {
  private static final int INSERTION = 24;

  private PrimitiveSort() {}

  /**
   * Sorts {@code keys[0, n)} as unsigned 64-bit values and permutes {@code idx} alongside; equal
   * keys are ordered by {@code idx}, so the result is the same as a stable sort when {@code idx}
   * starts ascending. Quicksort with a median-of-three pivot and insertion sort for short ranges.
   */
  static void sortUnsigned(long[] keys, int[] idx, int n) {
    sortUnsigned(keys, idx, 0, n);
  }

  /** {@link #sortUnsigned(long[], int[], int)} of the range {@code [from, to)}. */
  static void sortUnsigned(long[] keys, int[] idx, int from, int to) {
    for (int i = from; i < to; i++) {
      keys[i] ^= Long.MIN_VALUE; // unsigned order == signed order of the flipped values
    }
    quick(keys, idx, from, to - 1);
    for (int i = from; i < to; i++) {
      keys[i] ^= Long.MIN_VALUE;
    }
  }

  private static boolean less(long[] k, int[] x, int i, int j) {
    return k[i] < k[j] || (k[i] == k[j] && x[i] < x[j]);
  }

  private static void quick(long[] k, int[] x, int lo, int hi) {
    while (hi - lo > INSERTION) {
      int mid = (lo + hi) >>> 1;
      if (less(k, x, mid, lo)) {
        swap(k, x, mid, lo);
      }
      if (less(k, x, hi, lo)) {
        swap(k, x, hi, lo);
      }
      if (less(k, x, hi, mid)) {
        swap(k, x, hi, mid);
      }
      long pk = k[mid];
      int px = x[mid];
      int i = lo;
      int j = hi;
      while (i <= j) {
        while (k[i] < pk || (k[i] == pk && x[i] < px)) {
          i++;
        }
        while (k[j] > pk || (k[j] == pk && x[j] > px)) {
          j--;
        }
        if (i <= j) {
          swap(k, x, i, j);
          i++;
          j--;
        }
      }
      // Recurse into the smaller half, loop on the larger: O(log n) stack.
      if (j - lo < hi - i) {
        quick(k, x, lo, j);
        lo = i;
      } else {
        quick(k, x, i, hi);
        hi = j;
      }
    }
    for (int i = lo + 1; i <= hi; i++) {
      for (int j = i; j > lo && less(k, x, j, j - 1); j--) {
        swap(k, x, j, j - 1);
      }
    }
  }

  private static void swap(long[] k, int[] x, int i, int j) {
    long t = k[i];
    k[i] = k[j];
    k[j] = t;
    int u = x[i];
    x[i] = x[j];
    x[j] = u;
  }

  /** Stable merge sort of {@code a[0, n)} under {@code c}. */
  static void mergeSort(int[] a, int n, IntComparator c) {
    if (n < 2) {
      return;
    }
    int[] tmp = new int[n];
    int[] src = a;
    int[] dst = tmp;
    // Bottom-up: insertion-sort runs of INSERTION, then merge widths INSERTION, 2*INSERTION, ...
    for (int lo = 0; lo < n; lo += INSERTION) {
      int hi = Math.min(n, lo + INSERTION);
      for (int i = lo + 1; i < hi; i++) {
        int v = a[i];
        int j = i - 1;
        while (j >= lo && c.compare(a[j], v) > 0) {
          a[j + 1] = a[j];
          j--;
        }
        a[j + 1] = v;
      }
    }
    for (int w = INSERTION; w < n; w <<= 1) {
      for (int lo = 0; lo < n; lo += 2 * w) {
        int mid = Math.min(n, lo + w);
        int hi = Math.min(n, lo + 2 * w);
        int i = lo;
        int j = mid;
        int o = lo;
        while (i < mid && j < hi) {
          dst[o++] = c.compare(src[j], src[i]) < 0 ? src[j++] : src[i++];
        }
        while (i < mid) {
          dst[o++] = src[i++];
        }
        while (j < hi) {
          dst[o++] = src[j++];
        }
      }
      int[] t = src;
      src = dst;
      dst = t;
    }
    if (src != a) {
      System.arraycopy(src, 0, a, 0, n);
    }
  }
}
