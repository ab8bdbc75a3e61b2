package dev.reconcile.agent.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.CodedSymbols;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.SketchParams;
import dev.reconcile.core.SymbolSnapshot;
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

  /** Tables of 2^12 cells: larger than the small tables (2^10, 3 x 2^9), so folds read both. */
  private static final SketchParams LADDERS = Fixtures.params(0, 12).withRatelessLog2(10);

  @Test
  void readersApplyWhatIsPendingAndSeeEveryWrite() {
    for (long seed = 1; seed <= 5; seed++) {
      int[] wakes = {0};
      PartitionState deferred = new PartitionState(LADDERS, Fixtures.ESTIMATORS, () -> wakes[0]++);
      PartitionState immediate = new PartitionState(LADDERS, Fixtures.ESTIMATORS);
      writeSame(seed, 3000 + (int) seed * 17, deferred, immediate);
      // Nobody drained: a full buffer was applied by the writer, the rest is pending.
      assertThat(deferred.pendingSymbolUpdates()).as("seed %d", seed).isPositive();
      assertThat(wakes[0]).as("seed %d", seed).isPositive();
      CodedSymbols a = deferred.symbolsCopy();
      assertThat(deferred.pendingSymbolUpdates()).isZero();
      assertThat(a.sameSymbols(immediate.symbolsCopy())).as("seed %d", seed).isTrue();
      writeSame(seed + 100, 500, deferred, immediate);
      SymbolSnapshot sumD = new SymbolSnapshot(LADDERS.spec(), LADDERS.ratelessLog2());
      SymbolSnapshot sumI = new SymbolSnapshot(LADDERS.spec(), LADDERS.ratelessLog2());
      deferred.addSymbolsTo(sumD);
      immediate.addSymbolsTo(sumI);
      assertThat(sumD.copy().sameSymbols(sumI.copy())).as("seed %d", seed).isTrue();
      writeSame(seed + 200, 700, deferred, immediate);
      // A fold reads the small tables, whose updates are deferred with the symbols': pending.
      assertThat(deferred.pendingSymbolUpdates()).as("seed %d", seed).isPositive();
      for (IbltShape shape :
          new IbltShape[] {
            new IbltShape(3, 1, 4),
            LADDERS.maxShape(),
            new IbltShape(3, 3, 2),
            LADDERS.maxShapeBase3()
          }) {
        assertThat(deferred.fold(shape).sameCells(immediate.fold(shape)))
            .as("seed %d, %s", seed, shape)
            .isTrue();
      }
      writeSame(seed + 300, 700, deferred, immediate);
      assertThat(
              deferred
                  .foldWithFingerprint(new IbltShape(3, 3, 9))
                  .table()
                  .sameCells(immediate.fold(new IbltShape(3, 3, 9))))
          .as("seed %d", seed)
          .isTrue();
      writeSame(seed + 400, 700, deferred, immediate);
      assertThat(deferred.copy().differencesFrom(immediate.copy())).as("seed %d", seed).isEmpty();
      // The large part (fingerprint, estimator, large tables) is deferred too since stop 44:
      // a reader of it applies the large parts pending, and leaves the symbols' part queued.
      writeSame(seed + 500, 700, deferred, immediate);
      assertThat(deferred.pendingLargeParts()).as("seed %d", seed).isPositive();
      assertThat(deferred.fingerprint()).as("seed %d", seed).isEqualTo(immediate.fingerprint());
      assertThat(deferred.pendingLargeParts()).isZero();
      assertThat(deferred.pendingSymbolUpdates()).as("seed %d", seed).isPositive();
      writeSame(seed + 600, 700, deferred, immediate);
      assertThat(deferred.pendingLargeParts()).as("seed %d", seed).isPositive();
      assertThat(deferred.estimatorCopy().toProto())
          .as("seed %d", seed)
          .isEqualTo(immediate.estimatorCopy().toProto());
      assertThat(deferred.pendingLargeParts()).isZero();
      // A load's elements have their large part applied as they are added, and the queued ones
      // before them too.
      writeSame(seed + 700, 300, deferred, immediate);
      assertThat(deferred.pendingLargeParts()).as("seed %d", seed).isPositive();
      long[] loaded = new SplittableRandom(seed).longs(900).toArray();
      deferred.addAllLargeNow(loaded, loaded.length);
      for (long x : loaded) {
        immediate.add(x);
      }
      assertThat(deferred.pendingLargeParts()).as("seed %d", seed).isZero();
      assertThat(deferred.pendingSymbolUpdates()).as("seed %d", seed).isPositive();
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
                    // The large part is applied by readers and the upkeep thread meanwhile.
                    assertThat(deferred.fingerprint().count()).isNotNegative();
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
      assertThat(deferred.copy().differencesFrom(immediate.copy())).as("seed %d", seed).isEmpty();
    }
  }

  /**
   * Since stop 47 the upkeep thread applies a buffer's large parts (fingerprint, estimator, large
   * tables) after releasing the monitor, holding {@code largeLock}: a reader of the large part that
   * comes meanwhile must wait for them. The writer reads the fingerprint and the estimator every
   * few dozen writes, so many reads fall inside the upkeep thread's large phase (each ~256
   * updates); a reader that did not wait, or applied the next buffer beside it, would miss updates
   * or race on the tables. Partition loads ({@link PartitionState#addAllLargeNow}, whose chunks
   * hold {@code largeLock}) come in between.
   */
  @Test
  void aReaderOfTheLargePartWaitsForTheBufferTheUpkeepThreadIsApplying() throws Exception {
    long seed = 11;
    try (SymbolUpkeep upkeep = new SymbolUpkeep("test-upkeep")) {
      PartitionState deferred = new PartitionState(LADDERS, Fixtures.ESTIMATORS, upkeep::wake);
      PartitionState immediate = new PartitionState(LADDERS, Fixtures.ESTIMATORS);
      upkeep.start(new PartitionState[] {deferred});
      SplittableRandom r = new SplittableRandom(seed);
      int reads = 0;
      for (int i = 0; i < 200_000; i++) {
        long x = r.nextLong();
        deferred.add(x);
        immediate.add(x);
        if (r.nextInt(48) == 0) {
          assertThat(deferred.fingerprint())
              .as("seed %d, write %d", seed, i)
              .isEqualTo(immediate.fingerprint());
          reads++;
        }
        if (r.nextInt(1024) == 0) {
          assertThat(deferred.estimatorCopy().toProto())
              .as("seed %d, write %d", seed, i)
              .isEqualTo(immediate.estimatorCopy().toProto());
        }
        if (r.nextInt(8192) == 0) {
          long[] loaded = r.longs(700).toArray();
          deferred.addAllLargeNow(loaded, loaded.length);
          for (long y : loaded) {
            immediate.add(y);
          }
        }
      }
      assertThat(reads).isGreaterThan(2_000);
      assertThat(upkeep.applied()).as("the upkeep thread applied updates").isPositive();
      assertThat(deferred.copy().differencesFrom(immediate.copy())).as("seed %d", seed).isEmpty();
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
                    SymbolSnapshot sum = new SymbolSnapshot(PARAMS.spec(), PARAMS.ratelessLog2());
                    dev.reconcile.core.Fingerprint f = state.addSymbolsTo(sum);
                    assertThat(sum.copy().count(0))
                        .as("seed %d, snapshot %d", seed, snapshots[0])
                        .isEqualTo((int) f.count());
                    sum.release();
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

  /**
   * A stream's snapshot copies its symbols by need ({@link PartitionState#addSymbolsTo}): a random
   * schedule of writes, drains, snapshots (each beside a copy of the same instant), reads of a
   * snapshot up to a random point and releases, in both modes. Every snapshot still held ends equal
   * to the copy of its instant, whatever was written after it; once all are released, the partition
   * owes nothing. Seed printed on failure.
   */
  @Test
  void snapshotsReadByNeedAreTheSymbolsOfTheirInstant() {
    int m = 1 << PARAMS.ratelessLog2();
    for (long seed = 1; seed <= 30; seed++) {
      for (boolean deferredMode : new boolean[] {true, false}) {
        String ctx = "seed " + seed + (deferredMode ? ", deferred" : ", immediate");
        PartitionState state =
            deferredMode
                ? new PartitionState(PARAMS, Fixtures.ESTIMATORS, () -> {})
                : new PartitionState(PARAMS, Fixtures.ESTIMATORS);
        SplittableRandom r = new SplittableRandom(seed);
        List<Long> live = new ArrayList<>();
        List<SymbolSnapshot> held = new ArrayList<>();
        List<CodedSymbols> instants = new ArrayList<>();
        for (int step = 0; step < 3000; step++) {
          int op = r.nextInt(100);
          if (op < 70) {
            if (live.isEmpty() || r.nextInt(3) > 0) {
              long x = r.nextLong();
              live.add(x);
              state.add(x);
            } else if (r.nextBoolean()) {
              state.remove(live.remove(r.nextInt(live.size())));
            } else {
              int k = r.nextInt(live.size());
              long neu = r.nextLong();
              state.replace(true, live.set(k, neu), neu);
            }
          } else if (op < 75) {
            state.drainSymbols(); // the upkeep thread's turn (nothing pending when immediate)
          } else if (op < 83) {
            SymbolSnapshot snap = new SymbolSnapshot(PARAMS.spec(), PARAMS.ratelessLog2());
            state.addSymbolsTo(snap);
            held.add(snap);
            instants.add(state.symbolsCopy());
          } else if (op < 95 && !held.isEmpty()) {
            held.get(r.nextInt(held.size())).ensure(r.nextInt(m + 1));
          } else if (!held.isEmpty()) {
            int k = r.nextInt(held.size());
            held.remove(k).release();
            instants.remove(k);
          }
        }
        assertThat(held).as(ctx).isNotEmpty();
        assertThat(state.snapshotsOwed()).as(ctx).isLessThanOrEqualTo(held.size());
        for (int k = 0; k < held.size(); k++) {
          assertThat(held.get(k).copy().sameSymbols(instants.get(k)))
              .as("%s, snapshot %d of %d", ctx, k, held.size())
              .isTrue();
        }
        for (SymbolSnapshot snap : held) {
          snap.release();
        }
        assertThat(state.snapshotsOwed()).as(ctx).isZero();
      }
    }
  }

  /**
   * The same while the upkeep thread applies a writer's adds: the partition after {@code k} adds
   * holds the first {@code k} elements, and {@code k} is the snapshot's fingerprint count, so each
   * kept snapshot, read in part at once and in full after all the writes, must be the symbols of
   * those {@code k} elements.
   */
  @Test
  void snapshotsKeepTheirInstantWhileTheUpkeepThreadAppliesWrites() throws Exception {
    long seed = 11;
    long[] xs = new SplittableRandom(seed).longs(300_000).toArray();
    int m = 1 << PARAMS.ratelessLog2();
    try (SymbolUpkeep upkeep = new SymbolUpkeep("test-upkeep")) {
      PartitionState state = new PartitionState(PARAMS, Fixtures.ESTIMATORS, upkeep::wake);
      upkeep.start(new PartitionState[] {state});
      java.util.concurrent.atomic.AtomicBoolean writing =
          new java.util.concurrent.atomic.AtomicBoolean(true);
      AtomicReference<Throwable> readerFailure = new AtomicReference<>();
      List<SymbolSnapshot> kept = new ArrayList<>();
      List<Long> counts = new ArrayList<>();
      Thread reader =
          new Thread(
              () -> {
                SplittableRandom r = new SplittableRandom(seed + 1);
                try {
                  while (writing.get()) {
                    SymbolSnapshot snap = new SymbolSnapshot(PARAMS.spec(), PARAMS.ratelessLog2());
                    long count = state.addSymbolsTo(snap).count();
                    snap.ensure(1 + r.nextInt(64));
                    java.util.concurrent.locks.LockSupport.parkNanos(10_000); // writes go on
                    if (kept.size() < 40 && r.nextInt(4) == 0) {
                      kept.add(snap);
                      counts.add(count);
                    } else {
                      snap.ensure(r.nextInt(m + 1));
                      snap.release();
                    }
                  }
                } catch (Throwable t) {
                  readerFailure.set(t);
                }
              });
      reader.start();
      for (long x : xs) {
        state.add(x);
      }
      writing.set(false);
      reader.join();
      assertThat(readerFailure.get()).as("seed %d", seed).isNull();
      assertThat(kept).as("snapshots kept while writing").hasSizeGreaterThan(5);
      // The truth for each kept snapshot, in order of count: the first k elements' symbols.
      Integer[] order = new Integer[kept.size()];
      for (int i = 0; i < order.length; i++) {
        order[i] = i;
      }
      java.util.Arrays.sort(order, java.util.Comparator.comparing(counts::get));
      CodedSymbols truth = new CodedSymbols(PARAMS.spec(), PARAMS.ratelessLog2());
      int added = 0;
      for (int i : order) {
        long k = counts.get(i);
        while (added < k) {
          truth.insert(xs[added++]);
        }
        assertThat(kept.get(i).copy().sameSymbols(truth))
            .as("seed %d, the snapshot after %d adds", seed, k)
            .isTrue();
        kept.get(i).release();
      }
      assertThat(counts.get(order[order.length - 1]))
          .as("a snapshot taken after some writes")
          .isPositive();
      assertThat(state.snapshotsOwed()).isZero();
    }
  }

  /** A snapshot dropped without its release is forgotten once collected: it costs no copy. */
  @Test
  void aSnapshotDroppedWithoutItsReleaseIsForgotten() throws Exception {
    PartitionState state = new PartitionState(PARAMS, Fixtures.ESTIMATORS);
    state.addSymbolsTo(new SymbolSnapshot(PARAMS.spec(), PARAMS.ratelessLog2()));
    SymbolSnapshot held = new SymbolSnapshot(PARAMS.spec(), PARAMS.ratelessLog2());
    state.addSymbolsTo(held);
    assertThat(state.snapshotsOwed()).isEqualTo(2);
    for (int i = 0; i < 50 && state.snapshotsOwed() > 1; i++) {
      System.gc();
      Thread.sleep(20);
    }
    assertThat(state.snapshotsOwed()).as("the dropped one, after collections").isEqualTo(1);
    held.release();
    assertThat(state.snapshotsOwed()).isZero();
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
