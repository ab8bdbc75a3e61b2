package dev.reconcile.agent.store;

/**
 * The elements a filtered scan looks for ({@link RecordReader#scanListed}): a set of 64-bit
 * elements, asked once per row the scan passes, so membership must cost about one memory read.
 *
 * <p>Layout: open addressing with linear probing in one {@code long[]} of a power-of-two length at
 * least twice the number of elements (load at most 1/2: about 1.5 probes for a present element and
 * 2.5 for an absent one, Knuth, TAOCP vol. 3, 6.4). A slot is the top bits of the element times
 * 2^64 / phi (Fibonacci hashing, Knuth 6.4), not the element's own top bits: those are its key's
 * partition bits ({@code HashSpec.element}), the same for every element of a list, and would pile a
 * list into a few runs of slots. 0 marks an empty slot, and the element 0 is kept apart in a flag.
 * Built once, read-only afterwards.
 */
final class ElementSet {
  private static final long PHI = 0x9E37_79B9_7F4A_7C15L;

  private final long[] slots;
  private final int shift;
  private final int mask;
  private final boolean hasZero;

  /** The set of {@code elements} (repeats allowed); the array is not kept. */
  ElementSet(long[] elements) {
    int log2 = Math.max(4, 64 - Long.numberOfLeadingZeros(Math.max(1, elements.length) * 2L - 1));
    if (log2 > 30) {
      throw new IllegalArgumentException("too many elements for one set: " + elements.length);
    }
    slots = new long[1 << log2];
    shift = 64 - log2;
    mask = slots.length - 1;
    boolean zero = false;
    for (long e : elements) {
      if (e == 0) {
        zero = true;
        continue;
      }
      int i = slot(e);
      while (slots[i] != 0 && slots[i] != e) {
        i = (i + 1) & mask;
      }
      slots[i] = e;
    }
    hasZero = zero;
  }

  boolean contains(long e) {
    if (e == 0) {
      return hasZero;
    }
    int i = slot(e);
    for (long s = slots[i]; s != 0; s = slots[i]) {
      if (s == e) {
        return true;
      }
      i = (i + 1) & mask;
    }
    return false;
  }

  /** The slots {@link #contains} reads for {@code e} (a nonzero element): its probe length. */
  int probes(long e) {
    int n = 1;
    for (int i = slot(e); slots[i] != 0 && slots[i] != e; i = (i + 1) & mask) {
      n++;
    }
    return n;
  }

  private int slot(long e) {
    return (int) ((e * PHI) >>> shift);
  }
}
