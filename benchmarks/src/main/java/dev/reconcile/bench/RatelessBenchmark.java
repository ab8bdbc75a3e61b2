package dev.reconcile.bench;

import dev.reconcile.core.CodedSymbols;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.PackedSymbols;
import dev.reconcile.core.RatelessDecoder;
import java.nio.ByteBuffer;
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
 * Throughput of the rateless mode's core: maintaining a prefix of coded symbols on writes, and
 * decoding a stream of them.
 *
 * <pre>
 * ./mvnw -B -ntp -o -pl benchmarks -am package -DskipTests
 * java -jar benchmarks/target/benchmarks.jar Rateless -f 1 -wi 3 -i 5 -w 1s -r 1s
 * </pre>
 *
 * <ul>
 *   <li>{@code update}: writes/s into one prefix of {@code 2^log2} symbols, the keyed hash
 *       included; {@code layout} compares {@link CodedSymbols}' interleaved {@code long[2M]} with
 *       three parallel arrays (the alternative it was chosen over).
 *   <li>{@code updateSpread}: the same over 16 prefixes of {@code 2^16} symbols (16 MiB, an agent's
 *       partitions), elements routed by their top bits: the cache-missing case.
 *   <li>{@code applyPending}: queued updates with known check hashes into one prefix, as the
 *       agent's symbol upkeep applies them; {@code walk} compares one element at a time with {@code
 *       CodedSymbols.updateAll}'s four side by side.
 *   <li>{@code decode}: a difference of {@code d} elements (even split) decoded from exactly the
 *       symbols it needs, in one range; the primary score is decodes/s, {@code decode:recovered} is
 *       differences/s. Local-symbol subtraction, peeling and the final consistency scan are all
 *       inside the timing; building the local prefix is not.
 * </ul>
 */
public class RatelessBenchmark {
  static final HashSpec SPEC = HashSpec.xxh3(0x5EED_AB1EL);
  static final int BATCH = 1 << 16;

  /** Three parallel arrays per symbol: the layout {@link CodedSymbols} was measured against. */
  static final class ParallelArraySymbols {
    final int size;
    final long[] sums;
    final int[] checks;
    final int[] counts;

    ParallelArraySymbols(int log2) {
      size = 1 << log2;
      sums = new long[size];
      checks = new int[size];
      counts = new int[size];
    }

    void update(long x, int delta) {
      long c = SPEC.checkHash(x);
      int chk = (int) c;
      long s = HashSpec.ratelessStart(c);
      int i = 0;
      do {
        sums[i] ^= x;
        checks[i] ^= chk;
        counts[i] += delta;
        s += HashSpec.RATELESS_GAMMA;
        i = HashSpec.nextRatelessIndex(i, HashSpec.mix13(s));
      } while (i < size);
    }
  }

  @State(Scope.Thread)
  public static class UpdateState {
    /** 12: 64 KiB; 14: 256 KiB; 16: 1 MiB of symbols. */
    @Param({"12", "14", "16"})
    public int log2;

    @Param({"interleaved", "parallel"})
    public String layout;

    CodedSymbols interleaved;
    ParallelArraySymbols parallel;
    long[] elements;

    @Setup(Level.Trial)
    public void setUp() {
      interleaved = new CodedSymbols(SPEC, log2);
      parallel = new ParallelArraySymbols(log2);
      elements = randomElements(1, BATCH);
    }
  }

  /** Inserts a precomputed batch of 2^16 random elements; score in writes/s. */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(BATCH)
  public Object update(UpdateState s) {
    long[] xs = s.elements;
    if (s.layout.equals("interleaved")) {
      CodedSymbols p = s.interleaved;
      for (long x : xs) {
        p.update(x, 1);
      }
      return p;
    }
    ParallelArraySymbols p = s.parallel;
    for (long x : xs) {
      p.update(x, 1);
    }
    return p;
  }

  @State(Scope.Thread)
  public static class PendingState {
    /** 14: an agent's default prefix (256 KiB). */
    @Param({"12", "14", "16"})
    public int log2;

    /** {@code single}: one {@code update} per element; {@code lanes}: {@code updateAll}. */
    @Param({"single", "lanes"})
    public String walk;

    CodedSymbols symbols;
    long[] elements;
    long[] checks;
    byte[] deltas;

    @Setup(Level.Trial)
    public void setUp() {
      symbols = new CodedSymbols(SPEC, log2);
      elements = randomElements(3, BATCH);
      checks = new long[BATCH];
      deltas = new byte[BATCH];
      for (int i = 0; i < BATCH; i++) {
        checks[i] = SPEC.checkHash(elements[i]);
        deltas[i] = (byte) (i % 3 == 0 ? -1 : 1);
      }
    }
  }

  /**
   * Applies 2^16 queued updates whose check hashes are known (what the agent's symbol upkeep does
   * with its pending buffers), one by one or four walks side by side; updates/s.
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(BATCH)
  public Object applyPending(PendingState s) {
    CodedSymbols p = s.symbols;
    if (s.walk.equals("lanes")) {
      p.updateAll(s.elements, s.checks, s.deltas, BATCH);
      return p;
    }
    long[] xs = s.elements;
    long[] cs = s.checks;
    byte[] ds = s.deltas;
    for (int i = 0; i < BATCH; i++) {
      p.update(xs[i], cs[i], ds[i]);
    }
    return p;
  }

  @State(Scope.Thread)
  public static class SpreadState {
    @Param({"interleaved", "parallel"})
    public String layout;

    CodedSymbols[] interleaved = new CodedSymbols[16];
    ParallelArraySymbols[] parallel = new ParallelArraySymbols[16];
    long[] elements;

    @Setup(Level.Trial)
    public void setUp() {
      for (int p = 0; p < 16; p++) {
        interleaved[p] = new CodedSymbols(SPEC, 16);
        parallel[p] = new ParallelArraySymbols(16);
      }
      elements = randomElements(2, BATCH);
    }
  }

  /** Inserts 2^16 elements into 16 prefixes of 2^16 symbols by their top 4 bits; writes/s. */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(BATCH)
  public Object updateSpread(SpreadState s) {
    long[] xs = s.elements;
    if (s.layout.equals("interleaved")) {
      CodedSymbols[] ps = s.interleaved;
      for (long x : xs) {
        ps[(int) (x >>> 60)].update(x, 1);
      }
      return ps;
    }
    ParallelArraySymbols[] ps = s.parallel;
    for (long x : xs) {
      ps[(int) (x >>> 60)].update(x, 1);
    }
    return ps;
  }

  @State(Scope.Thread)
  public static class DecodeState {
    @Param({"1000", "100000"})
    public int d;

    CodedSymbols local;
    byte[] needed;

    @Setup(Level.Trial)
    public void setUp() throws FormatException {
      int log2 = 32 - Integer.numberOfLeadingZeros(2 * d);
      local = new CodedSymbols(SPEC, log2);
      CodedSymbols remote = new CodedSymbols(SPEC, log2);
      SplittableRandom r = new SplittableRandom(3);
      for (int i = 0; i < d; i++) {
        (r.nextBoolean() ? local : remote).insert(r.nextLong());
      }
      byte[] all = PackedSymbols.pack(remote, 0, remote.size());
      RatelessDecoder probe = new RatelessDecoder(local);
      int n = 0;
      while (!probe.complete()) {
        probe.receive(
            n, ByteBuffer.wrap(all, PackedSymbols.SYMBOL_BYTES * n, PackedSymbols.SYMBOL_BYTES));
        n++;
      }
      needed = PackedSymbols.pack(remote, 0, n);
    }
  }

  /** Recovered differences, reported by JMH as a rate ({@code decode:recovered}). */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  public static class Recovered {
    public long recovered;
  }

  /** Decodes a difference of {@code d} from the symbols it needs; score in decodes/s. */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  public RatelessDecoder decode(DecodeState s, Recovered c) throws FormatException {
    RatelessDecoder dec = new RatelessDecoder(s.local);
    dec.receive(0, s.needed);
    if (!dec.complete()) {
      throw new IllegalStateException("benchmark stream does not decode");
    }
    c.recovered += dec.recovered();
    return dec;
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
