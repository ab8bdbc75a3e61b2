package dev.reconcile.bench;

import dev.reconcile.core.CellLayout;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PeelResult;
import dev.reconcile.core.Sizing;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * Throughput of the IBLT core (reconciliation layout, 3 hashes). Scores are operations per second
 * where one operation is one element (insert, peel), one cell (subtract, fold) as annotated.
 *
 * <pre>
 * ./mvnw -B -ntp -o -pl benchmarks -am package -DskipTests
 * java -jar benchmarks/target/benchmarks.jar IbltBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s
 * </pre>
 */
public class IbltBenchmark {
  static final HashSpec SPEC = HashSpec.xxh3(0x5EED_1B17L);
  static final int BATCH = 1 << 16;

  /** Insert a precomputed batch of 2^16 random elements into a table of {@code log2} (base 1). */
  @State(Scope.Thread)
  public static class InsertState {
    /** 10: 3*2^10 cells (48 KiB, in L1/L2); 16: 3*2^16 cells (3 MiB). */
    @Param({"10", "16"})
    public int log2;

    Iblt table;
    long[] elements;

    @Setup(Level.Trial)
    public void setUp() {
      table = new Iblt(SPEC, new IbltShape(Sizing.HASH_COUNT, 1, log2), CellLayout.WIDE);
      elements = randomElements(1, BATCH);
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(BATCH)
  public Iblt insert(InsertState s) {
    Iblt t = s.table;
    long[] xs = s.elements;
    for (long x : xs) {
      t.insert(x);
    }
    return t;
  }

  /** Two full tables of 3*2^16 cells, and the fold source. */
  @State(Scope.Thread)
  public static class CellState {
    Iblt a;
    Iblt b;
    IbltShape small;

    @Setup(Level.Trial)
    public void setUp() {
      IbltShape big = new IbltShape(Sizing.HASH_COUNT, 1, 16);
      a = new Iblt(SPEC, big, CellLayout.WIDE);
      b = new Iblt(SPEC, big, CellLayout.WIDE);
      for (long x : randomElements(2, BATCH)) {
        a.insert(x);
      }
      for (long x : randomElements(3, BATCH)) {
        b.insert(x);
      }
      small = big.withLog2(10);
    }
  }

  /** {@code a -= b} over 3*2^16 cells; score in cells/s. */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(3 << 16)
  public Iblt subtract(CellState s) {
    s.a.subtract(s.b);
    return s.a;
  }

  /** Fold 3*2^16 cells to 3*2^10; score in source cells/s. */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(3 << 16)
  public Iblt fold(CellState s) {
    return s.a.fold(s.small);
  }

  /** A difference of {@code d} elements (random sides) in a table sized by {@link Sizing}. */
  @State(Scope.Thread)
  public static class PeelState {
    @Param({"1000", "50000"})
    public int d;

    Iblt source;
    Iblt work;

    @Setup(Level.Trial)
    public void setUp() {
      source =
          new Iblt(SPEC, IbltShape.atLeast(Sizing.HASH_COUNT, Sizing.cellsFor(d)), CellLayout.WIDE);
      SplittableRandom r = new SplittableRandom(4);
      for (int i = 0; i < d; i++) {
        source.update(r.nextLong(), r.nextBoolean() ? 1 : -1);
      }
      if (!source.copy().peel().complete()) {
        throw new IllegalStateException("benchmark table does not decode; pick another seed");
      }
    }

    @Setup(Level.Invocation)
    public void refill() {
      work = source.copy();
    }
  }

  /** Recovered elements, reported by JMH as a rate ({@code peel:recovered}, elements/s). */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  public static class Recovered {
    public long recovered;
  }

  /**
   * Peel a difference of {@code d}; the primary score is peels/s, {@code peel:recovered} is
   * recovered elements/s (the per-invocation table copy is excluded from the timing).
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  public PeelResult peel(PeelState s, Recovered c) {
    PeelResult r = s.work.peel();
    c.recovered += r.recovered();
    return r;
  }

  static long[] randomElements(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] xs = new long[n];
    for (int i = 0; i < n; i++) {
      xs[i] = r.nextLong();
    }
    return xs;
  }
}
