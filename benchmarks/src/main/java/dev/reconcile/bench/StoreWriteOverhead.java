package dev.reconcile.bench;

import dev.reconcile.agent.store.ReplicaStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Paired A/B measurement of the write-path cost of sketch maintenance, for noisy shared machines:
 * two stores (sketches on / off) receive alternating rounds of the same puts, so slow drifts of
 * machine load hit both alike; the median of the per-round ratios is reported.
 *
 * <pre>
 *   java -cp benchmarks/target/benchmarks.jar dev.reconcile.bench.StoreWriteOverhead \
 *       [rounds] [putsPerRound] [partitionsLog2] [ibltMaxLog2] [ratelessLog2] [directIo]
 * </pre>
 *
 * The defaults are the agent's: 16 partitions, {@code iblt-max-log2} 15, {@code rateless-log2} 14
 * (2^14 coded symbols per partition kept up to date besides the tables; 0 keeps none), {@code
 * direct-io} false (both stores' flushes and compactions through the page cache; {@code true} takes
 * them past it).
 */
public final class StoreWriteOverhead {
  private StoreWriteOverhead() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 16;
    int perRound = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    Path a = Files.createTempDirectory("store-ab-on");
    Path b = Files.createTempDirectory("store-ab-off");
    byte[] value = new byte[StoreBenchmark.VALUE_BYTES];
    new SplittableRandom(4).nextBytes(value);
    int partitionsLog2 = args.length > 2 ? Integer.parseInt(args[2]) : 4;
    int maxLog2 = args.length > 3 ? Integer.parseInt(args[3]) : 15;
    int ratelessLog2 = args.length > 4 ? Integer.parseInt(args[4]) : 14;
    boolean directIo = args.length > 5 && Boolean.parseBoolean(args[5]);
    var params = StoreBenchmark.params(partitionsLog2, maxLog2).withRatelessLog2(ratelessLog2);
    try (ReplicaStore on =
            ReplicaStore.open(StoreBenchmark.options(a, params).directIo(directIo).build());
        ReplicaStore off =
            ReplicaStore.open(
                StoreBenchmark.options(b, params)
                    .maintainSketches(false)
                    .directIo(directIo)
                    .build())) {
      double[] ratios = new double[rounds];
      double[] onRates = new double[rounds];
      double[] offRates = new double[rounds];
      long next = 0;
      for (int r = -2; r < rounds; r++) { // two warm-up rounds
        long from = next;
        next += perRound;
        boolean onFirst = (r & 1) == 0;
        double t1 = round(onFirst ? on : off, from, perRound, value);
        double t2 = round(onFirst ? off : on, from, perRound, value);
        double tOn = onFirst ? t1 : t2;
        double tOff = onFirst ? t2 : t1;
        if (r >= 0) {
          onRates[r] = perRound / tOn;
          offRates[r] = perRound / tOff;
          ratios[r] = tOn / tOff;
        }
      }
      Arrays.sort(ratios);
      Arrays.sort(onRates);
      Arrays.sort(offRates);
      System.out.printf(
          "partitions=%d iblt-max-log2=%d rateless-log2=%d direct-io=%b rounds=%d puts/round=%d  median puts/s: sketches %.0f, no sketches %.0f;"
              + " median time ratio on/off = %.3f (overhead %.1f %%), quartiles %.3f .. %.3f%n",
          1 << partitionsLog2,
          maxLog2,
          ratelessLog2,
          on.directIo(),
          rounds,
          perRound,
          onRates[rounds / 2],
          offRates[rounds / 2],
          ratios[rounds / 2],
          (ratios[rounds / 2] - 1) * 100,
          ratios[rounds / 4],
          ratios[3 * rounds / 4]);
    } finally {
      StoreBenchmark.deleteTree(a);
      StoreBenchmark.deleteTree(b);
    }
  }

  private static double round(ReplicaStore s, long from, int n, byte[] value) {
    long t0 = System.nanoTime();
    for (long i = from; i < from + n; i++) {
      s.put(StoreBenchmark.key(i & ((1 << 20) - 1)), value);
    }
    return (System.nanoTime() - t0) / 1e9;
  }
}
