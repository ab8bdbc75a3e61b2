package dev.reconcile.core;

import java.util.Locale;

/**
 * Prints the sizing trade-off per grid d of the decode table (docs/sizing.md; not a test):
 *
 * <pre>
 *   java -cp ... dev.reconcile.core.SizingReport [cellBytes]
 * </pre>
 *
 * Per d: the 99.9 % table and its bytes; the first table of least expected bytes at {@link
 * Sizing#DEFAULT_ROUND_TRIP_BYTES}, its first-try failure rate, expected cells and retries,
 * expected bytes (the objective) and wire bytes ({@code cellBytes x cells + 60 B of frames per
 * retry}); the expected bytes of the best first table at round-trip costs 0, 64 and 1024 bytes; and
 * the expected bytes of doubling from the smallest table (3 cells) without any estimate.
 */
final class SizingReport {
  private SizingReport() {}

  /** Frame bytes of one retry on the wire: a request and the header of the extension's offer. */
  static final int RETRY_FRAME_BYTES = 60;

  public static void main(String[] args) {
    int cb = args.length > 0 ? Integer.parseInt(args[0]) : CellLayout.WIDE.cellBytes();
    long rt = Sizing.DEFAULT_ROUND_TRIP_BYTES;
    System.out.println(
        "| d | 99.9 % table | its bytes | least bytes: first table | first-try failure"
            + " | E[cells] | E[retries] | E[bytes] | wire bytes | / d | R=0 | R=64 | R=1024"
            + " | doubling from 3 cells |");
    System.out.println("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (long d : SizingSimulation.grid(Sizing.decodeTableMaxD())) {
      IbltShape reliable = Sizing.shapeFor(d);
      IbltShape s = Sizing.firstShape(d, cb, rt);
      double cells = Sizing.expectedBytes(d, s, 1, 0);
      double retries = Sizing.expectedBytes(d, s, 0, 1);
      double bytes = Sizing.expectedBytes(d, s, cb, rt);
      double wire = cells * cb + retries * RETRY_FRAME_BYTES;
      System.out.printf(
          Locale.ROOT,
          "| %d | %s | %d | %s | %.1f %% | %.1f | %.3f | %.0f | %.0f | %.1f | %.0f | %.0f | %.0f"
              + " | %.0f |%n",
          d,
          name(reliable),
          reliable.cells() * cb,
          name(s),
          100 * Sizing.failureRate(d, s),
          cells,
          retries,
          bytes,
          wire,
          wire / d,
          best(d, cb, 0),
          best(d, cb, 64),
          best(d, cb, 1024),
          Sizing.expectedBytes(d, new IbltShape(3, 1, 0), cb, rt));
    }
  }

  /** Total cells and ladder: {@code 36 (3*2^2)}. */
  static String name(IbltShape s) {
    return s.cells() + (s.base() == 1 ? " (2^" : " (3*2^") + s.log2() + ")";
  }

  private static double best(long d, int cb, long rt) {
    return Sizing.expectedBytes(d, Sizing.firstShape(d, cb, rt), cb, rt);
  }
}
