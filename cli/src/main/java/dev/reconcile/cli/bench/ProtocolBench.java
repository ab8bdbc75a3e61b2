package dev.reconcile.cli.bench;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.LocalRound;
import dev.reconcile.core.MemorySketches;
import dev.reconcile.core.PartitionOutcome;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.SessionConfig;
import dev.reconcile.core.SessionLimits;
import dev.reconcile.core.SessionStats;
import dev.reconcile.core.SketchParams;
import dev.reconcile.estimator.EstimatorKinds;
import dev.reconcile.estimator.StrataEstimatorFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.stream.LongStream;

/**
 * Protocol bytes of one reconciliation, in memory: two {@link MemorySketches} replicas of {@code n}
 * random elements differing in {@code d} ({@code ceil(d/2)} only on the initiator, {@code
 * floor(d/2)} only on the responder), the real {@link ReconcileSession} pumped between them, and
 * the baselines costed on the same sets.
 *
 * <p>Modes: {@code rateless} (the default between agents: coded symbols maintained for a prefix of
 * {@code 2^ratelessLog2} per partition, streamed until the peel completes), {@code estimator} (the
 * estimator path with the production tug-of-war estimator, {@link EstimatorKinds#defaults()}),
 * {@code strata} (the same path with the former strata estimator, {@link
 * StrataEstimatorFactory#defaults()}), {@code oracle} (the total difference known exactly,
 * estimator bytes not counted: the tables alone, see {@link OracleEstimator}); baselines {@code
 * digest-list} (both sides send their full sorted list, 8 B per element, one round trip), {@code
 * merkle-topdown} and {@code merkle-full} ({@link MerkleBaseline}).
 *
 * <p>Every mode and baseline is checked against the truth element by element: the elements it lists
 * as missing on each side, sorted, must equal those only on the other side ({@code correct} in the
 * trials, {@code wrong_results} in the summary).
 */
public final class ProtocolBench {
  /** Modes and baselines, in plot order. */
  public static final List<String> MODES =
      List.of(
          "rateless",
          "estimator",
          "strata",
          "oracle",
          "digest-list",
          "merkle-topdown",
          "merkle-full");

  /** What to run. */
  public record Config(
      long[] ns,
      long[] ds,
      int trials,
      int partitionsLog2,
      int ibltMaxLog2,
      int ratelessLog2,
      int merkleDepth,
      long seed) {}

  /** One (n, d, mode) cell of the grid over its trials. */
  public record Summary(
      long n,
      long d,
      String mode,
      int trials,
      double bytesMedian,
      double bytesP90,
      double bytesMax,
      double roundTripsMedian,
      long tabledPartitions,
      long firstTry,
      long doublings,
      long decodeFailures,
      long plannedDigestLists,
      long fallbacksAfterFailure,
      long wrongResults,
      double sessionMillisMedian,
      double estimatorBytesMedian,
      long estimatorSize) {
    public double bytesPerD() {
      return bytesMedian / d;
    }

    /** Protocol bytes over the information-theoretic floor {@code d x 8 B}. */
    public double ratioTo8d() {
      return bytesMedian / (8.0 * d);
    }

    /**
     * The target of issue 10 for this mode: estimator modes {@code 6 x d x 8 B + the estimator's
     * wire size} for {@code d >= 10} (whether or not a round sends it: a small first table may save
     * it); rateless {@code 3 x d x 8 B + 1 KiB} for every d; none (NaN) for the oracle and the
     * baselines.
     */
    public double targetBytes() {
      return switch (mode) {
        case "estimator", "strata" ->
            d >= 10 ? ProtocolBench.targetBytes(true, d, estimatorSize) : Double.NaN;
        case "rateless" -> ProtocolBench.targetBytes(false, d, 0);
        default -> Double.NaN;
      };
    }

    public boolean meetsTarget() {
      return bytesMedian <= targetBytes();
    }

    public double firstTryRate() {
      return tabledPartitions == 0 ? Double.NaN : (double) firstTry / tabledPartitions;
    }
  }

  /**
   * Target bytes: estimator mode {@code 6 x d x 8 + estimator}, best mode {@code 3 x d x 8 + 1024}.
   */
  public static double targetBytes(boolean estimatorMode, long d, double estimatorBytes) {
    return estimatorMode ? 6.0 * 8 * d + estimatorBytes : 3.0 * 8 * d + 1024;
  }

  private static final SessionLimits LIMITS = new SessionLimits(Integer.MAX_VALUE - 8, 1 << 16);

  private ProtocolBench() {}

  /**
   * Runs the grid, writing {@code protocol-trials.csv} and {@code protocol-summary.csv} into {@code
   * out}.
   */
  public static List<Summary> run(Config c, Path out, Consumer<String> log) {
    List<Summary> summaries = new ArrayList<>();
    try (Csv trials =
            new Csv(
                out.resolve("protocol-trials.csv"),
                "n",
                "d",
                "trial",
                "mode",
                "bytes",
                "bytes_per_d",
                "ratio_to_8d",
                "round_trips",
                "estimator_bytes",
                "iblt_bytes",
                "digest_bytes",
                "result_bytes",
                "other_bytes",
                "unequal_partitions",
                "tabled_partitions",
                "first_try",
                "doublings",
                "decode_failures",
                "planned_digest_lists",
                "fallbacks_after_failure",
                "found",
                "correct",
                "session_ms");
        Csv summary =
            new Csv(
                out.resolve("protocol-summary.csv"),
                "n",
                "d",
                "mode",
                "trials",
                "bytes_median",
                "bytes_p90",
                "bytes_max",
                "bytes_per_d",
                "ratio_to_8d",
                "round_trips_median",
                "tabled_partitions",
                "first_try_rate",
                "doublings",
                "decode_failures",
                "planned_digest_lists",
                "fallbacks_after_failure",
                "wrong_results",
                "session_ms_median",
                "estimator_bytes_median",
                "estimator_size",
                "target_bytes",
                "meets_target")) {
      for (long n : c.ns()) {
        for (long d : c.ds()) {
          if (d > n) {
            log.accept(String.format("protocol: skipping n=%d d=%d (d > n)", n, d));
            continue;
          }
          List<List<Trial>> byMode = new ArrayList<>();
          for (int m = 0; m < MODES.size(); m++) {
            byMode.add(new ArrayList<>());
          }
          for (int t = 0; t < c.trials(); t++) {
            long seed = MerkleBaseline.mix(c.seed() * 0x9E3779B97F4A7C15L + n * 31 + d * 131 + t);
            Sets s = Sets.random(seed, n, d, c.partitionsLog2());
            List<Trial> results = runTrial(c, s, d);
            for (int m = 0; m < MODES.size(); m++) {
              Trial r = results.get(m);
              byMode.get(m).add(r);
              trials.row(
                  n,
                  d,
                  t,
                  r.mode,
                  r.bytes,
                  (double) r.bytes / d,
                  r.bytes / (8.0 * d),
                  r.roundTrips,
                  r.estimatorBytes,
                  r.ibltBytes,
                  r.digestBytes,
                  r.resultBytes,
                  r.otherBytes,
                  r.unequal,
                  r.tabled,
                  r.firstTry,
                  r.doublings,
                  r.decodeFailures,
                  r.planned,
                  r.fallbacksAfterFailure,
                  r.found,
                  r.correct,
                  r.sessionMillis);
            }
          }
          for (int m = 0; m < MODES.size(); m++) {
            Summary sm = summarize(n, d, MODES.get(m), byMode.get(m));
            summaries.add(sm);
            summary.row(
                n,
                d,
                sm.mode(),
                sm.trials(),
                sm.bytesMedian(),
                sm.bytesP90(),
                sm.bytesMax(),
                sm.bytesPerD(),
                sm.ratioTo8d(),
                sm.roundTripsMedian(),
                sm.tabledPartitions(),
                sm.firstTryRate(),
                sm.doublings(),
                sm.decodeFailures(),
                sm.plannedDigestLists(),
                sm.fallbacksAfterFailure(),
                sm.wrongResults(),
                sm.sessionMillisMedian(),
                sm.estimatorBytesMedian(),
                sm.estimatorSize(),
                sm.targetBytes(),
                Double.isNaN(sm.targetBytes()) ? "" : Boolean.toString(sm.meetsTarget()));
          }
          Summary rl = summaries.get(summaries.size() - MODES.size());
          Summary est = summaries.get(summaries.size() - MODES.size() + 1);
          log.accept(
              String.format(
                  "protocol n=%,d d=%,d: rateless %.0f B (p90 %.0f, %.2f x d x 8 B), estimator %.0f B"
                      + " (p90 %.0f, %.2f x d x 8 B, first try %d/%d), digest list %.0f B, merkle"
                      + " %.0f B",
                  n,
                  d,
                  rl.bytesMedian(),
                  rl.bytesP90(),
                  rl.ratioTo8d(),
                  est.bytesMedian(),
                  est.bytesP90(),
                  est.ratioTo8d(),
                  est.firstTry(),
                  est.tabledPartitions(),
                  summaries.get(summaries.size() - 3).bytesMedian(),
                  summaries.get(summaries.size() - 2).bytesMedian()));
        }
      }
    }
    return summaries;
  }

  private static Summary summarize(long n, long d, String mode, List<Trial> ts) {
    double[] bytes = ts.stream().mapToDouble(t -> t.bytes).toArray();
    double[] rts = ts.stream().mapToDouble(t -> t.roundTrips).toArray();
    double[] ms = ts.stream().mapToDouble(t -> t.sessionMillis).toArray();
    return new Summary(
        n,
        d,
        mode,
        ts.size(),
        Medians.of(bytes),
        Medians.quantile(bytes, 0.9),
        Medians.max(bytes),
        Medians.of(rts),
        ts.stream().mapToLong(t -> t.tabled).sum(),
        ts.stream().mapToLong(t -> t.firstTry).sum(),
        ts.stream().mapToLong(t -> t.doublings).sum(),
        ts.stream().mapToLong(t -> t.decodeFailures).sum(),
        ts.stream().mapToLong(t -> t.planned).sum(),
        ts.stream().mapToLong(t -> t.fallbacksAfterFailure).sum(),
        ts.stream().filter(t -> !t.correct).count(),
        Medians.of(ms),
        Medians.of(ts.stream().mapToDouble(t -> t.estimatorBytes).toArray()),
        ts.stream().mapToLong(t -> t.estimatorSize).max().orElse(0));
  }

  /** One mode's measurements in one trial. */
  static final class Trial {
    String mode;
    long bytes;
    int roundTrips;
    long estimatorBytes;
    long estimatorSize;
    long ibltBytes;
    long digestBytes;
    long resultBytes;
    long otherBytes;
    long unequal;
    long tabled;
    long firstTry;
    long doublings;
    long decodeFailures;
    long planned;
    long fallbacksAfterFailure;
    long found;
    boolean correct;
    double sessionMillis;
  }

  static List<Trial> runTrial(Config c, Sets s, long d) {
    List<Trial> out = new ArrayList<>();
    out.add(session(c, s, EstimatorKinds.defaults(), c.ratelessLog2(), "rateless", false));
    out.add(session(c, s, EstimatorKinds.defaults(), 0, "estimator", false));
    out.add(session(c, s, StrataEstimatorFactory.defaults(), 0, "strata", false));
    out.add(session(c, s, OracleEstimator.FACTORY, 0, "oracle", true));
    Trial list = new Trial();
    list.mode = "digest-list";
    list.bytes = 8L * (s.a.length + s.b.length);
    list.digestBytes = list.bytes;
    list.roundTrips = 1;
    long[][] found = difference(s.a, s.b);
    list.found = (long) found[0].length + found[1].length;
    list.correct = s.isTruth(found[0], found[1]);
    out.add(list);
    MerkleBaseline.Cost m =
        MerkleBaseline.compare(s.a, s.a.length, s.b, s.b.length, c.merkleDepth());
    long[][] leafFound = difference(m.differingLeafElementsA(), m.differingLeafElementsB());
    boolean leafCorrect = s.isTruth(leafFound[0], leafFound[1]);
    Trial top = new Trial();
    top.mode = "merkle-topdown";
    top.bytes = m.topDownBytes();
    top.roundTrips = m.topDownRoundTrips();
    top.unequal = m.differingLeaves();
    top.found = (long) leafFound[0].length + leafFound[1].length;
    top.correct = leafCorrect;
    out.add(top);
    Trial full = new Trial();
    full.mode = "merkle-full";
    full.bytes = m.fullTreeBytes();
    full.roundTrips = m.fullTreeRoundTrips();
    full.unequal = m.differingLeaves();
    full.found = top.found;
    full.correct = leafCorrect;
    out.add(full);
    return out;
  }

  /**
   * What each side of two lists holds that the other does not, each sorted: {@code {a \ b, b \ a}}
   * (multisets of distinct elements).
   */
  static long[][] difference(long[] a, long[] b) {
    long[] x = a.clone();
    long[] y = b.clone();
    Arrays.sort(x);
    Arrays.sort(y);
    LongStream.Builder onlyX = LongStream.builder();
    LongStream.Builder onlyY = LongStream.builder();
    int i = 0;
    int j = 0;
    while (i < x.length || j < y.length) {
      if (j == y.length || (i < x.length && x[i] < y[j])) {
        onlyX.add(x[i++]);
      } else if (i == x.length || y[j] < x[i]) {
        onlyY.add(y[j++]);
      } else {
        i++;
        j++;
      }
    }
    return new long[][] {onlyX.build().toArray(), onlyY.build().toArray()};
  }

  private static Trial session(
      Config c,
      Sets s,
      EstimatorFactory f,
      int ratelessLog2,
      String mode,
      boolean excludeEstimator) {
    SketchParams params =
        new SketchParams(
            HashSpec.xxh3(0x5EED_BE7CL),
            c.partitionsLog2(),
            3,
            c.ibltMaxLog2(),
            f.params(),
            ratelessLog2);
    MemorySketches left = MemorySketches.of(params, f, s.pa, s.a);
    MemorySketches right = MemorySketches.of(params, f, s.pb, s.b);
    long t0 = System.nanoTime();
    ReconcileSession i =
        ReconcileSession.initiator(new SessionConfig("bench", "left", 1, null, LIMITS), left);
    ReconcileSession r =
        ReconcileSession.responder(new SessionConfig("bench", "right", 1, null, LIMITS), right);
    LocalRound.run(i, r);
    Trial t = new Trial();
    t.sessionMillis = (System.nanoTime() - t0) / 1e6;
    if (!i.succeeded() || !r.succeeded()) {
      String why =
          i.failure()
              .map(Object::toString)
              .or(() -> r.failure().map(Object::toString))
              .orElse("did not finish");
      throw new IllegalStateException("benchmark session failed (" + mode + "): " + why);
    }
    SessionStats st = i.stats();
    t.mode = mode;
    t.estimatorBytes = st.estimatorBytes();
    t.estimatorSize = f.create(params.spec()).wireBytes();
    t.bytes = st.bytesTotal() - (excludeEstimator ? st.estimatorBytes() : 0);
    t.ibltBytes = st.ibltBytes();
    t.digestBytes = st.digestBytes();
    t.resultBytes = st.resultBytes();
    t.otherBytes = st.handshakeBytes() + st.fingerprintBytes();
    t.roundTrips = st.roundTrips();
    t.doublings = st.doublings();
    t.decodeFailures = st.decodeFailures();
    LongStream.Builder missingHere = LongStream.builder();
    LongStream.Builder missingThere = LongStream.builder();
    for (PartitionOutcome o : i.outcomes()) {
      for (long x : o.missingLocal()) {
        missingHere.add(x);
      }
      for (long x : o.missingRemote()) {
        missingThere.add(x);
      }
      if (o.path() != PartitionOutcome.Path.FAST) {
        t.unequal++;
      }
      if (o.attempts() > 0) {
        t.tabled++;
        if (o.path() == PartitionOutcome.Path.IBLT && o.attempts() == 1) {
          t.firstTry++;
        }
      }
      if (o.path() == PartitionOutcome.Path.FALLBACK) {
        if (o.attempts() == 0) {
          t.planned++;
        } else {
          t.fallbacksAfterFailure++;
        }
      }
      t.found += o.difference();
    }
    // The initiator lists what it lacks (only at the responder) and what the responder lacks.
    long[] lacksHere = missingHere.build().sorted().toArray();
    long[] lacksThere = missingThere.build().sorted().toArray();
    t.correct = st.unverified() == 0 && s.isTruth(lacksThere, lacksHere);
    return t;
  }

  /**
   * Two replicas' elements and partitions: a common part, then each side's own elements. Elements
   * are uniform 64-bit values; an element's partition is read off its top bits, as for real records
   * ({@link HashSpec#element} carries the key's partition bits).
   */
  static final class Sets {
    final long[] a;
    final int[] pa;
    final long[] b;
    final int[] pb;
    final long[] onlyA;
    final long[] onlyB;

    private Sets(long[] a, int[] pa, long[] b, int[] pb, int common) {
      this.a = a;
      this.pa = pa;
      this.b = b;
      this.pb = pb;
      this.onlyA = Arrays.copyOfRange(a, common, a.length);
      this.onlyB = Arrays.copyOfRange(b, common, b.length);
      Arrays.sort(onlyA);
      Arrays.sort(onlyB);
    }

    /**
     * True when {@code foundA} and {@code foundB} (sorted) are exactly the elements only at A and
     * only at B.
     */
    boolean isTruth(long[] foundA, long[] foundB) {
      return Arrays.equals(foundA, onlyA) && Arrays.equals(foundB, onlyB);
    }

    static Sets random(long seed, long n, long d, int partitionsLog2) {
      SplittableRandom rnd = new SplittableRandom(seed);
      int onlyA = Math.toIntExact((d + 1) / 2);
      int onlyB = Math.toIntExact(d / 2);
      int common = Math.toIntExact(n - onlyA);
      long[] a = new long[common + onlyA];
      int[] pa = new int[a.length];
      long[] b = new long[common + onlyB];
      int[] pb = new int[b.length];
      for (int k = 0; k < common; k++) {
        a[k] = b[k] = rnd.nextLong();
        pa[k] = pb[k] = HashSpec.partitionOfElement(a[k], partitionsLog2);
      }
      for (int k = common; k < a.length; k++) {
        a[k] = rnd.nextLong();
        pa[k] = HashSpec.partitionOfElement(a[k], partitionsLog2);
      }
      for (int k = common; k < b.length; k++) {
        b[k] = rnd.nextLong();
        pb[k] = HashSpec.partitionOfElement(b[k], partitionsLog2);
      }
      return new Sets(a, pa, b, pb, common);
    }
  }
}
