package dev.reconcile.bench;

import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import dev.reconcile.estimator.EstimatorKinds;
import dev.reconcile.estimator.StrataEstimatorFactory;
import dev.reconcile.estimator.TugOfWarEstimatorFactory;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Difference estimators of both kinds (docs/estimator.md, "Benchmarks"): add throughput
 * (elements/s, the write path's per-element cost), {@code toProto()} latency (what a round pays to
 * send its sketch) and {@code estimate()} latency (validate, subtract; the strata estimator also
 * peels from the top stratum) for a difference {@code d}, inputs precomputed.
 *
 * <p>{@code params}: {@code tow2016} is the tug-of-war estimator of 2 016 buckets (kind 2, the
 * default); {@code SxCkH} a strata estimator of S strata of C cells and H hashes (kind 1), {@code
 * 18x128k4} its defaults.
 *
 * <pre>
 *   java -jar benchmarks/target/benchmarks.jar EstimatorBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s
 * </pre>
 */
public class EstimatorBenchmark {
  static final int BATCH = 1 << 16;
  static final int COMMON = 100_000;

  static EstimatorFactory factory(String shape) {
    if (shape.startsWith("tow")) {
      return EstimatorKinds.of(
          TugOfWarEstimatorFactory.params(Integer.parseInt(shape.substring("tow".length()))));
    }
    // "strata x cells k hashes", e.g. 32x72k3
    String[] a = shape.split("[xk]");
    return StrataEstimatorFactory.of(
        EstimatorParams.newBuilder()
            .setKind(1)
            .setStrata(Integer.parseInt(a[0]))
            .setCellsPerStratum(Integer.parseInt(a[1]))
            .setHashCount(Integer.parseInt(a[2]))
            .build());
  }

  /** Add throughput: one op = one element added. */
  @State(Scope.Thread)
  public static class AddState {
    @Param({"tow2016", "18x128k4", "32x72k3"})
    public String params;

    long[] elements;
    DifferenceEstimator estimator;

    @Setup(Level.Trial)
    public void setUp() {
      SplittableRandom r = new SplittableRandom(1);
      elements = new long[BATCH];
      for (int i = 0; i < BATCH; i++) {
        elements[i] = r.nextLong();
      }
      estimator = factory(params).create(HashSpec.xxh3(7));
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(BATCH)
  public DifferenceEstimator add(AddState s) {
    DifferenceEstimator e = s.estimator;
    for (long x : s.elements) {
      e.add(x);
    }
    return e;
  }

  /**
   * Estimate latency: local sketch of COMMON + onlyA, remote proto of COMMON + onlyB, |A delta B| =
   * d.
   */
  @State(Scope.Thread)
  public static class EstimateState {
    @Param({"100", "10000"})
    public int d;

    @Param({"tow2016", "18x128k4", "32x72k3"})
    public String params;

    DifferenceEstimator local;
    Estimator remote;

    @Setup(Level.Trial)
    public void setUp() {
      EstimatorFactory f = factory(params);
      HashSpec spec = HashSpec.xxh3(7);
      local = f.create(spec);
      DifferenceEstimator other = f.create(spec);
      SplittableRandom r = new SplittableRandom(2);
      for (int i = 0; i < COMMON; i++) {
        long x = r.nextLong();
        local.add(x);
        other.add(x);
      }
      for (int i = 0; i < d; i++) {
        (r.nextBoolean() ? local : other).add(r.nextLong());
      }
      remote = other.toProto();
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public long estimate(EstimateState s) throws FormatException {
    return s.local.estimate(s.remote).value();
  }

  /** Serialization latency: the wire form of a sketch of {@code COMMON + d/2} elements. */
  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public Estimator toProto(EstimateState s) {
    return s.local.toProto();
  }
}
