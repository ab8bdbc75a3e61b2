package dev.reconcile.core;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * One seeded rateless reconciliation for tests: {@code d} random elements split between the two
 * sides (each only here with probability {@code hereFraction}), optionally {@code common} shared
 * ones, the two prefixes, and the peer's prefix packed.
 */
final class RatelessTrial {
  final long seed;
  final CodedSymbols here;
  final byte[] therePacked;
  final long[] onlyHere;
  final long[] onlyThere;
  final long countDifference;

  private RatelessTrial(
      long seed, CodedSymbols here, CodedSymbols there, long[] onlyHere, long[] onlyThere) {
    this.seed = seed;
    this.here = here;
    this.therePacked = PackedSymbols.pack(there, 0, there.size());
    this.onlyHere = onlyHere;
    this.onlyThere = onlyThere;
    this.countDifference = onlyHere.length - (long) onlyThere.length;
  }

  static RatelessTrial of(
      HashSpec spec, long seed, int d, double hereFraction, int common, int log2) {
    SplittableRandom r = new SplittableRandom(seed);
    CodedSymbols a = new CodedSymbols(spec, log2);
    CodedSymbols b = new CodedSymbols(spec, log2);
    for (int i = 0; i < common; i++) {
      long x = r.nextLong();
      a.insert(x);
      b.insert(x);
    }
    long[] ha = new long[d];
    long[] hb = new long[d];
    int na = 0;
    int nb = 0;
    for (int i = 0; i < d; i++) {
      long x = r.nextLong();
      if (r.nextDouble() < hereFraction) {
        a.insert(x);
        ha[na++] = x;
      } else {
        b.insert(x);
        hb[nb++] = x;
      }
    }
    return new RatelessTrial(seed, a, b, Arrays.copyOf(ha, na), Arrays.copyOf(hb, nb));
  }

  /** Smallest log2 of a prefix that holds {@code factor * d} symbols, at least {@code 2^min}. */
  static int log2For(int d, double factor, int min) {
    long want = (long) Math.ceil(factor * d);
    int l = min;
    while ((1L << l) < want) {
      l++;
    }
    return l;
  }

  int d() {
    return onlyHere.length + onlyThere.length;
  }

  /** Sends symbols {@code [from, from + n)} of the peer to {@code dec}. */
  void send(RatelessDecoder dec, int from, int n) throws FormatException {
    dec.receive(
        from,
        ByteBuffer.wrap(
            therePacked, PackedSymbols.SYMBOL_BYTES * from, PackedSymbols.SYMBOL_BYTES * n));
  }

  /**
   * Feeds the peer's symbols one at a time; returns the decoder, complete or exhausted. Its {@code
   * received()} is then the exact number of symbols the difference needed.
   */
  RatelessDecoder decodeOneByOne() throws FormatException {
    RatelessDecoder dec = new RatelessDecoder(here);
    while (!dec.complete() && !dec.exhausted()) {
      send(dec, dec.received(), 1);
    }
    return dec;
  }

  /** The decoded lists equal the truth element by element (as sets). */
  boolean matches(RatelessDecoder dec) {
    return sameSet(dec.onlyHere(), onlyHere) && sameSet(dec.onlyThere(), onlyThere);
  }

  static boolean sameSet(long[] got, long[] want) {
    long[] a = got.clone();
    long[] b = want.clone();
    Arrays.sort(a);
    Arrays.sort(b);
    return Arrays.equals(a, b);
  }

  /** The p-quantile (nearest rank) of sorted values. */
  static double quantile(double[] sorted, double p) {
    int k = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, k))];
  }
}
