package dev.reconcile.cli;

/** Compares two int indices; lets {@link PrimitiveSort} sort index arrays without boxing. */
@FunctionalInterface
interface IntComparator {
  int compare(int a, int b);
}
