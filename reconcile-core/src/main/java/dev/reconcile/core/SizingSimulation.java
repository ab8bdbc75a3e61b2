package dev.reconcile.core;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Regenerates the sizing table {@code sizing-k3.csv} read by {@link Sizing}: for each difference
 * size {@code d} of a grid, the smallest IBLT shape (hash count 3, both ladders of {@link
 * IbltShape}) that decodes a difference of {@code d} with probability at least 99.9 % per attempt.
 *
 * <p>One trial inserts {@code d} random 64-bit elements, each with a random sign (+1: only here,
 * -1: only there), into one {@link Iblt} of the shape ({@link CellLayout#WIDE}, i.e. the subtracted
 * table of a real session) and peels it; it succeeds when the peel is complete and both lists equal
 * the inserted sets. Acceptance rule for a shape, by tier:
 *
 * <ul>
 *   <li>{@code d <= 10^4}: {@code T = 10^4} trials, accepted when failures {@code <= f(T)}, the
 *       largest {@code f} with {@code P[Binomial(T, 0.001) <= f] <= 0.05}: the exact one-sided 95 %
 *       (Clopper-Pearson) upper bound of the failure rate is then below 0.1 %.
 *   <li>{@code 10^4 < d <= 10^5}: {@code T = 3000}, accepted with 0 failures ({@code 0.999^3000 =
 *       0.0497}: the same 95 % bound).
 *   <li>{@code d > 10^5}: {@code T = 100} trials at the stressed load {@code ceil(1.05 d)},
 *       accepted with 0 failures. Failure is monotone in the load (adding elements can only grow
 *       the 2-core), and at this size it has two causes: the giant 2-core, whose appearance is
 *       concentrated in a load window of relative width {@code O(d^-1/2)} (about 0.3 % here) so
 *       that a load 5 % below a point where it appears in under 3 % of trials is many windows below
 *       it; and small stopping sets, dominated by two elements sharing all three cells, {@code ~
 *       13.5 / (d r^3) < 10^-4} for {@code r = cells/d >= 1.22}. See docs/sizing.md.
 * </ul>
 *
 * Shapes are tried in increasing size starting from the shape accepted for the previous (smaller)
 * {@code d} (failure is monotone in {@code d} for a fixed shape); a shape is rejected as soon as
 * its failures exceed the bound. Every (d, shape) runs on its own {@link SplittableRandom} seeded
 * with {@code mix13(MASTER + d * GAMMA + cells)} (printed, and written to the CSV).
 *
 * <p>Arguments: {@code --quick} (a tenth of the trials, d up to 10^5, writes under target/ unless
 * {@code --out} is given), {@code --out=PATH}, {@code --seed=N} (master seed), {@code --max-d=N},
 * {@code --resume} (keep the rows already in the output file and continue the grid after them).
 *
 * <h2>Decode table ({@code --decode-table})</h2>
 *
 * The data behind {@link Sizing#firstShape} (least expected bytes with incremental doubling):
 * {@code decode-k3.csv}, for every grid {@code d} and every shape of both ladders from the smallest
 * with at least {@code d} cells up to the first with at least twice {@link Sizing#cellsFor}{@code
 * (d)}, the first-try failure rate and the doubling chain that starts there. One trial of one
 * ladder draws a difference ({@link DecodeTrial}), adds it to the largest table of the ladder,
 * folds it down level by level ({@link Iblt#fold} equals direct construction, so each level is the
 * table a session of that shape would subtract) and peels every level. The chain from level {@code
 * L} ends at the first level {@code L' >= L} that decoded; with incremental doubling the cells sent
 * add up to {@code cells(L')}, after {@code L' - L} retries. Rows: {@code d, base, log2, cells,
 * trials, failures, wrong, unresolved, mean_final_cells, mean_retries, seed}; {@code unresolved}
 * counts trials where no level up to the top decoded (charged twice the top's cells and one retry
 * more), {@code wrong} undetected wrong decodes (must be 0). Trials per {@code d}: {@link
 * #decodeTrials}; each {@code (d, base)} runs its own {@link SplittableRandom} seeded with {@code
 * mix13(master + d * GAMMA + 31 * base)}, so rows do not depend on the thread count ({@code
 * --threads=N} or {@code -Ddecode.threads=N}, default 1; {@code -Ddecode.max-d=N} as {@code
 * --max-d}; {@code --min-d=N} starts the grid there, so that parts of the grid can run as separate
 * processes and their rows be concatenated). Output default: {@code decode-k3.csv} beside {@code
 * sizing-k3.csv} (or {@code -Ddecode.out}).
 */
public final class SizingSimulation {
  static final long DEFAULT_MASTER = 0x5121_46C0_FFEEL;
  static final double TARGET_FAILURE = 1e-3;
  static final int HASHES = Sizing.HASH_COUNT;

  private SizingSimulation() {}

  public static void main(String[] args) throws IOException {
    boolean quick = false;
    boolean resume = false;
    boolean decodeTable = false;
    int threads = Integer.getInteger("decode.threads", 1);
    long master = DEFAULT_MASTER;
    long maxD = Long.getLong("decode.max-d", 1_000_000);
    long minD = 1;
    String out = null;
    for (String a : args) {
      if (a.equals("--quick")) {
        quick = true;
      } else if (a.equals("--resume")) {
        resume = true;
      } else if (a.startsWith("--seed=")) {
        master = Long.decode(a.substring(7));
      } else if (a.startsWith("--min-d=")) {
        minD = Long.parseLong(a.substring(8));
      } else if (a.startsWith("--max-d=")) {
        maxD = Long.parseLong(a.substring(8));
      } else if (a.startsWith("--out=")) {
        out = a.substring(6);
      } else if (a.equals("--decode-table")) {
        decodeTable = true;
      } else if (a.startsWith("--threads=")) {
        threads = Integer.parseInt(a.substring(10));
      } else if (!a.isBlank()) {
        throw new IllegalArgumentException("unknown argument " + a);
      }
    }
    if (quick) {
      maxD = Math.min(maxD, 100_000);
    }
    if (decodeTable) {
      if (out == null) {
        out =
            System.getProperty(
                "decode.out",
                quick
                    ? "target/decode-k3-quick.csv"
                    : "src/main/resources/dev/reconcile/core/decode-k3.csv");
      }
      writeDecodeTable(master, minD, maxD, quick, threads, Path.of(out), System.out);
      return;
    }
    if (out == null) {
      out =
          quick
              ? System.getProperty("sizing.quick.out", "target/sizing-k3-quick.csv")
              : System.getProperty(
                  "sizing.out", "src/main/resources/dev/reconcile/core/sizing-k3.csv");
    }
    PrintStream log = System.out;
    log.printf(
        Locale.ROOT,
        "sizing simulation: master seed 0x%x, quick=%b, max d=%d, out=%s%n",
        master,
        quick,
        maxD,
        out);
    long t0 = System.nanoTime();
    List<String> rows = new ArrayList<>();
    rows.add("d,cells,base,log2,trials,failures,cells_per_d,tested_d,seed");
    List<IbltShape> ladder = ladder();
    HashSpec spec = HashSpec.xxh3(master);
    int idx = 0;
    long resumeAfter = 0;
    if (resume
        && Files.exists(Path.of(out))) { // keep the rows of an interrupted run, continue after
      List<String> old = Files.readAllLines(Path.of(out), StandardCharsets.US_ASCII);
      for (String row : old.subList(1, old.size())) {
        rows.add(row);
        String[] f = row.split(",");
        resumeAfter = Long.parseLong(f[0]);
        long cells = Long.parseLong(f[1]);
        while (ladder.get(idx).cells() < cells) {
          idx++;
        }
      }
      log.printf(Locale.ROOT, "resuming after d=%d (%d rows kept)%n", resumeAfter, rows.size() - 1);
    }
    for (long d : grid(maxD)) {
      if (d <= resumeAfter) {
        continue;
      }
      Tier tier = Tier.of(d, quick);
      while (true) {
        IbltShape shape = ladder.get(idx);
        long seed = HashSpec.mix13(master + d * HashSpec.GAMMA + shape.cells());
        long tested = tier.stressed ? (long) Math.ceil(d * 1.05) : d;
        if (shape.cells() < tested) { // each extraction empties a distinct pure cell: cannot decode
          idx++;
          continue;
        }
        Outcome o = run(spec, shape, tested, tier.trials, tier.maxFailures, seed);
        if (o.failures <= tier.maxFailures) {
          String row =
              String.format(
                  Locale.ROOT,
                  "%d,%d,%d,%d,%d,%d,%.4f,%d,0x%x",
                  d,
                  shape.cells(),
                  shape.base(),
                  shape.log2(),
                  o.trials,
                  o.failures,
                  (double) shape.cells() / d,
                  tested,
                  seed);
          rows.add(row);
          log.printf(Locale.ROOT, "%-70s  %.1f s%n", row, (System.nanoTime() - t0) / 1e9);
          break;
        }
        log.printf(
            Locale.ROOT,
            "  d=%d rejected %s: %d failures in %d trials%n",
            d,
            shape,
            o.failures,
            o.trials);
        idx++;
      }
    }
    Path p = Path.of(out);
    if (p.getParent() != null) {
      Files.createDirectories(p.getParent());
    }
    Files.write(p, rows, StandardCharsets.US_ASCII);
    log.printf(
        Locale.ROOT,
        "wrote %d rows to %s in %.1f s%n",
        rows.size() - 1,
        p.toAbsolutePath(),
        (System.nanoTime() - t0) / 1e9);
  }

  /** Trial count and failure bound of one grid point. */
  record Tier(int trials, int maxFailures, boolean stressed) {
    static Tier of(long d, boolean quick) {
      if (quick) { // a smoke run: a tenth of the trials, zero failures, no statistical guarantee
        return new Tier(d <= 10_000 ? 1000 : d <= 100_000 ? 300 : 30, 0, d > 100_000);
      }
      if (d <= 10_000) {
        return new Tier(10_000, SizingSimulation.maxFailures(10_000, TARGET_FAILURE, 0.05), false);
      }
      if (d <= 100_000) {
        return new Tier(3000, SizingSimulation.maxFailures(3000, TARGET_FAILURE, 0.05), false);
      }
      return new Tier(100, 0, true);
    }
  }

  record Outcome(int trials, int failures) {}

  /** Runs up to {@code trials} trials, stopping early once failures exceed {@code maxFailures}. */
  static Outcome run(
      HashSpec spec, IbltShape shape, long d, int trials, int maxFailures, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    Iblt t = new Iblt(spec, shape, CellLayout.WIDE);
    DecodeTrial trial = new DecodeTrial(CellLayout.WIDE);
    int n = Math.toIntExact(d);
    int failures = 0;
    int done = 0;
    while (done < trials && failures <= maxFailures) {
      done++;
      if (trial.run(t, rnd, n) != DecodeTrial.Outcome.DECODED) {
        failures++;
      }
    }
    return new Outcome(done, failures);
  }

  /** Trials per grid {@code d} of the decode table (a tenth with {@code --quick}). */
  static int decodeTrials(long d, boolean quick) {
    int t = d <= 1000 ? 20_000 : d <= 10_000 ? 5000 : d <= 100_000 ? 1000 : 100;
    return quick ? t / 10 : t;
  }

  /** Header of {@code decode-k3.csv}. */
  static final String DECODE_HEADER =
      "d,base,log2,cells,trials,failures,wrong,unresolved,mean_final_cells,mean_retries,seed";

  /** One row of the decode table: a first shape for a difference of {@code d}. */
  record LevelStats(
      long d,
      IbltShape shape,
      int trials,
      int failures,
      int wrong,
      int unresolved,
      double meanFinalCells,
      double meanRetries,
      long seed) {
    String csv() {
      return String.format(
          Locale.ROOT,
          "%d,%d,%d,%d,%d,%d,%d,%d,%.4f,%.6f,0x%x",
          d,
          shape.base(),
          shape.log2(),
          shape.cells(),
          trials,
          failures,
          wrong,
          unresolved,
          meanFinalCells,
          meanRetries,
          seed);
    }
  }

  static void writeDecodeTable(
      long master, long minD, long maxD, boolean quick, int threads, Path out, PrintStream log)
      throws IOException {
    log.printf(
        Locale.ROOT,
        "decode table: master seed 0x%x, quick=%b, max d=%d, threads=%d, out=%s%n",
        master,
        quick,
        maxD,
        threads,
        out);
    long t0 = System.nanoTime();
    HashSpec spec = HashSpec.xxh3(master);
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(threads);
    try (PrintStream w = new PrintStream(Files.newOutputStream(out), true, "US-ASCII")) {
      w.println(DECODE_HEADER);
      for (long d : grid(maxD)) {
        if (d < minD) {
          continue;
        }
        int trials = decodeTrials(d, quick);
        List<java.util.concurrent.Future<List<LevelStats>>> parts = new ArrayList<>();
        for (int base : new int[] {1, 3}) {
          long seed = HashSpec.mix13(master + d * HashSpec.GAMMA + 31L * base);
          parts.add(pool.submit(() -> runLadder(spec, base, d, trials, seed)));
        }
        for (java.util.concurrent.Future<List<LevelStats>> f : parts) {
          List<LevelStats> rows;
          try {
            rows = f.get();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
          } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("d=" + d + ": " + e.getCause(), e.getCause());
          }
          for (LevelStats r : rows) {
            w.println(r.csv());
          }
        }
        log.printf(
            Locale.ROOT,
            "d=%d done (%d trials per ladder), %.1f s%n",
            d,
            trials,
            (System.nanoTime() - t0) / 1e9);
      }
    } finally {
      pool.shutdown();
    }
    log.printf(
        Locale.ROOT, "wrote %s in %.1f s%n", out.toAbsolutePath(), (System.nanoTime() - t0) / 1e9);
  }

  /**
   * Trials of one ladder for a difference of {@code d}: every level from the smallest with at least
   * {@code d} cells to the first with at least {@code 2 * Sizing.cellsFor(d)} (and at least two
   * levels), see the class comment.
   */
  static List<LevelStats> runLadder(HashSpec spec, int base, long d, int trials, long seed) {
    int lo = 0;
    while (((3L * base) << lo) < d) {
      lo++;
    }
    int hi = lo + 1;
    while (((3L * base) << hi) < 2 * Sizing.cellsFor(d) && hi < IbltShape.MAX_LOG2) {
      hi++;
    }
    int n = hi - lo + 1;
    IbltShape[] shapes = new IbltShape[n];
    Iblt[] tables = new Iblt[n];
    Iblt[] work = new Iblt[n];
    for (int i = 0; i < n; i++) {
      shapes[i] = new IbltShape(HASHES, base, lo + i);
      tables[i] = new Iblt(spec, shapes[i], CellLayout.WIDE);
      work[i] = new Iblt(spec, shapes[i], CellLayout.WIDE);
    }
    DecodeTrial trial = new DecodeTrial(CellLayout.WIDE);
    SplittableRandom rnd = new SplittableRandom(seed);
    int[] failures = new int[n];
    int[] wrong = new int[n];
    int[] unresolved = new int[n];
    long[] finalCells = new long[n];
    long[] retries = new long[n];
    boolean[] ok = new boolean[n];
    int size = Math.toIntExact(d);
    for (int t = 0; t < trials; t++) {
      trial.draw(rnd, size);
      tables[n - 1].clear();
      trial.addTo(tables[n - 1]);
      for (int i = n - 2; i >= 0; i--) {
        tables[i + 1].foldInto(tables[i]);
      }
      for (int i = 0; i < n; i++) {
        tables[i].copyInto(work[i]);
        DecodeTrial.Outcome o = trial.peel(work[i]);
        ok[i] = o == DecodeTrial.Outcome.DECODED;
        if (!ok[i]) {
          failures[i]++;
        }
        if (o == DecodeTrial.Outcome.WRONG) {
          wrong[i]++;
        }
      }
      for (int i = 0; i < n; i++) {
        int j = i;
        while (j < n && !ok[j]) {
          j++;
        }
        if (j < n) {
          finalCells[i] += shapes[j].cells();
          retries[i] += j - i;
        } else {
          unresolved[i]++;
          finalCells[i] += 2 * shapes[n - 1].cells();
          retries[i] += n - i;
        }
      }
    }
    List<LevelStats> rows = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      rows.add(
          new LevelStats(
              d,
              shapes[i],
              trials,
              failures[i],
              wrong[i],
              unresolved[i],
              (double) finalCells[i] / trials,
              (double) retries[i] / trials,
              seed));
    }
    return rows;
  }

  /** Largest f with P[Binomial(n, p) <= f] <= alpha, or -1 when even f = 0 exceeds alpha. */
  static int maxFailures(int n, double p, double alpha) {
    double logPmf = n * Math.log1p(-p); // P[X = 0]
    double cdf = Math.exp(logPmf);
    int f = -1;
    for (int k = 0; k <= n && cdf <= alpha; k++) {
      f = k;
      logPmf += Math.log((double) (n - k) / (k + 1)) + Math.log(p / (1 - p));
      cdf += Math.exp(logPmf);
    }
    return f;
  }

  /**
   * Every shape of both ladders with 3 hashes, by increasing cells: 3 * {1, 2, 3, 4, 6, 8, ...}.
   */
  static List<IbltShape> ladder() {
    List<IbltShape> l = new ArrayList<>();
    for (int log2 = 0; log2 <= IbltShape.MAX_LOG2; log2++) {
      l.add(new IbltShape(HASHES, 1, log2));
      l.add(new IbltShape(HASHES, 3, log2)); // 9 * 2^log2 cells: never equal to 3 * 2^j
    }
    l.sort((a, b) -> Long.compare(a.cells(), b.cells()));
    return l;
  }

  /** Every d from 1 to 20, then round(10^(i/8)) up to {@code maxD}. */
  static long[] grid(long maxD) {
    List<Long> g = new ArrayList<>();
    for (long d = 1; d <= Math.min(20, maxD); d++) {
      g.add(d);
    }
    for (int i = 0; ; i++) {
      long d = Math.round(Math.pow(10, i / 8.0));
      if (d > maxD) {
        break;
      }
      if (d > 20 && d > g.get(g.size() - 1)) {
        g.add(d);
      }
    }
    return g.stream().mapToLong(Long::longValue).toArray();
  }
}
