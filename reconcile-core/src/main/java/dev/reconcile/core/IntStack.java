package dev.reconcile.core;

import java.util.Arrays;

/** Growable stack of primitive ints (no boxing on the peel path). */
final class IntStack {
  private int[] a;
  private int n;

  IntStack(int capacity) {
    a = new int[Math.max(4, capacity)];
  }

  void push(int v) {
    if (n == a.length) {
      a = Arrays.copyOf(a, a.length * 2);
    }
    a[n++] = v;
  }

  int pop() {
    return a[--n];
  }

  int size() {
    return n;
  }
}
