package dev.reconcile.agent.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.CodedSymbols;
import dev.reconcile.core.SketchParams;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Deferred coded-symbol updates ({@link PartitionState}, {@link SymbolUpkeep}): whoever reads the
 * symbols sees every write made before, exactly as with immediate updates, whether the upkeep
 * thread keeps up, lags or is absent.
 */
class PartitionStateTest {
  private static final SketchParams PARAMS = Fixtures.params(0, 8).withRatelessLog2(10);

  /** The same random adds, replaces and removes on both states; seed printed on failure. */
  private static void writeSame(long seed, int n, PartitionState... states) {
    SplittableRandom r = new SplittableRandom(seed);
    List<Long> live = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int op = live.isEmpty() ? 0 : r.nextInt(3);
      if (op == 0) {
        long x = r.nextLong();
        live.add(x);
        for (PartitionState s : states) {
          s.add(x);
        }
      } else {
        int k = r.nextInt(live.size());
        long old = live.get(k);
        if (op == 1) {
          long neu = r.nextLong();
          live.set(k, neu);
          for (PartitionState s : states) {
            s.replace(true, old, neu);
          }
        } else {
          live.remove(k);
          for (PartitionState s : states) {
            s.remove(old);
          }
        }
      }
    }
  }

  @Test
  void readersApplyWhatIsPendingAndSeeEveryWrite() {
    for (long seed = 1; seed <= 5; seed++) {
      int[] wakes = {0};
      PartitionState deferred = new PartitionState(PARAMS, Fixtures.ESTIMATORS, () -> wakes[0]++);
      PartitionState immediate = new PartitionState(PARAMS, Fixtures.ESTIMATORS);
      writeSame(seed, 3000 + (int) seed * 17, deferred, immediate);
      // Nobody drained: a full buffer was applied by the writer, the rest is pending.
      assertThat(deferred.pendingSymbolUpdates()).as("seed %d", seed).isPositive();
      assertThat(wakes[0]).as("seed %d", seed).isPositive();
      CodedSymbols a = deferred.symbolsCopy();
      assertThat(deferred.pendingSymbolUpdates()).isZero();
      assertThat(a.sameSymbols(immediate.symbolsCopy())).as("seed %d", seed).isTrue();
      writeSame(seed + 100, 500, deferred, immediate);
      CodedSymbols sumD = new CodedSymbols(PARAMS.spec(), PARAMS.ratelessLog2());
      CodedSymbols sumI = new CodedSymbols(PARAMS.spec(), PARAMS.ratelessLog2());
      deferred.addSymbolsTo(sumD);
      immediate.addSymbolsTo(sumI);
      assertThat(sumD.sameSymbols(sumI)).as("seed %d", seed).isTrue();
      writeSame(seed + 200, 700, deferred, immediate);
      assertThat(deferred.copy().differencesFrom(immediate.copy())).as("seed %d", seed).isEmpty();
    }
  }

  @Test
  void theUpkeepThreadDrainsWhileWritesAndReadsGoOn() throws Exception {
    long seed = 7;
    try (SymbolUpkeep upkeep = new SymbolUpkeep("test-upkeep")) {
      PartitionState deferred = new PartitionState(PARAMS, Fixtures.ESTIMATORS, upkeep::wake);
      PartitionState immediate = new PartitionState(PARAMS, Fixtures.ESTIMATORS);
      upkeep.start(new PartitionState[] {deferred});
      AtomicReference<Throwable> readerFailure = new AtomicReference<>();
      Thread reader =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < 200; i++) {
                    CodedSymbols s = deferred.symbolsCopy();
                    assertThat(s.size()).isEqualTo(1 << 10);
                  }
                } catch (Throwable t) {
                  readerFailure.set(t);
                }
              });
      reader.start();
      writeSame(seed, 200_000, deferred, immediate);
      reader.join();
      assertThat(readerFailure.get()).as("seed %d", seed).isNull();
      assertThat(upkeep.applied()).as("the upkeep thread applied updates").isPositive();
      assertThat(deferred.symbolsCopy().sameSymbols(immediate.symbolsCopy()))
          .as("seed %d", seed)
          .isTrue();
    }
  }

  /**
   * A stream's snapshot and the fingerprint its decode is checked against are of one instant
   * ({@link PartitionState#addSymbolsTo}): symbol 0 holds every element, so its count is the
   * fingerprint's count in every snapshot taken while a writer adds and removes and the upkeep
   * thread drains.
   */
  @Test
  void aSnapshotsFingerprintIsOfTheSameInstantAsItsSymbols() throws Exception {
    long seed = 9;
    try (SymbolUpkeep upkeep = new SymbolUpkeep("test-upkeep")) {
      PartitionState state = new PartitionState(PARAMS, Fixtures.ESTIMATORS, upkeep::wake);
      upkeep.start(new PartitionState[] {state});
      AtomicReference<Throwable> readerFailure = new AtomicReference<>();
      java.util.concurrent.atomic.AtomicBoolean writing =
          new java.util.concurrent.atomic.AtomicBoolean(true);
      int[] snapshots = {0};
      Thread reader =
          new Thread(
              () -> {
                try {
                  while (writing.get()) {
                    CodedSymbols sum = new CodedSymbols(PARAMS.spec(), PARAMS.ratelessLog2());
                    dev.reconcile.core.Fingerprint f = state.addSymbolsTo(sum);
                    assertThat(sum.count(0))
                        .as("seed %d, snapshot %d", seed, snapshots[0])
                        .isEqualTo((int) f.count());
                    snapshots[0]++;
                  }
                } catch (Throwable t) {
                  readerFailure.set(t);
                }
              });
      reader.start();
      SplittableRandom r = new SplittableRandom(seed);
      List<Long> live = new ArrayList<>();
      for (int i = 0; i < 400_000 && readerFailure.get() == null; i++) {
        if (live.isEmpty() || r.nextInt(3) > 0) {
          long x = r.nextLong();
          live.add(x);
          state.add(x);
        } else {
          state.remove(live.remove(live.size() - 1));
        }
      }
      writing.set(false);
      reader.join();
      assertThat(readerFailure.get()).as("seed %d", seed).isNull();
      assertThat(snapshots[0]).as("snapshots taken while writing").isGreaterThan(10);
    }
  }

  @Test
  void withoutARatelessPrefixNothingIsDeferred() {
    PartitionState s =
        new PartitionState(
            Fixtures.params(0, 8).withRatelessLog2(0),
            Fixtures.ESTIMATORS,
            () -> {
              throw new AssertionError("no symbols: nothing to wake for");
            });
    for (int i = 0; i < 2 * PartitionState.PENDING; i++) {
      s.add(i * 0x9E37_79B9_7F4A_7C15L);
    }
    assertThat(s.pendingSymbolUpdates()).isZero();
    assertThat(s.symbolsCopy()).isNull();
  }
}
