package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store's key filter, grown past one segment, is rebuilt into one in the background ({@link
 * KeyFilterRebuild}) without losing a key: neither those stored before the rebuild's snapshot nor
 * those written while it scans (puts, a repair batch, a partition ingested as table files); keys
 * purged before the snapshot lose their bits. A close stops a running rebuild; a failed one leaves
 * the old segments.
 */
@Timeout(120)
final class KeyFilterRebuildTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 8);
  private static final long NOW = 1_700_000_000_000L;

  /** Keys a first segment holds (the store opens empty: the smallest segment). */
  private static final int FIRST_CAPACITY = KeyFilter.MIN_BLOCKS * 512 / KeyFilter.BITS_PER_KEY;

  @TempDir Path tmp;

  private static ReplicaStore open(Path dir, AtomicLong millis, StoreHooks hooks) {
    return ReplicaStore.open(Fixtures.options(dir, "node", PARAMS, millis).build(), hooks);
  }

  private static List<ReplicaRecord> records(String prefix, int n, long version) {
    List<ReplicaRecord> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(ReplicaRecord.of(bytes(prefix + i), bytes("v" + i), version, 7));
    }
    return out;
  }

  private static List<byte[]> keysOf(List<ReplicaRecord> records) {
    return records.stream().map(ReplicaRecord::key).toList();
  }

  /** Puts {@code records} in bulk loads of 10 000. */
  private static void load(ReplicaStore s, List<ReplicaRecord> records) {
    for (int i = 0; i < records.size(); i += 10_000) {
      s.putAll(records.subList(i, Math.min(records.size(), i + 10_000)));
    }
  }

  private static void await(String what, BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!done.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for %s", what).isLessThan(end);
      Thread.sleep(20);
    }
  }

  private static void noneDenied(ReplicaStore s, List<byte[]> keys) {
    for (byte[] k : keys) {
      assertThat(s.surelyLacks(k)).as("denies stored %s", ReplicaRecord.hex(k, 32)).isFalse();
    }
  }

  /** Of {@code n} keys never written, how many the filter lets through. */
  private static int falsePositives(ReplicaStore s, int n) {
    int hits = 0;
    for (int i = 0; i < n; i++) {
      if (!s.surelyLacks(bytes("never-" + i))) {
        hits++;
      }
    }
    return hits;
  }

  /** Hooks that run {@code batch} before each batch of a rebuild's scan, and default otherwise. */
  private static StoreHooks atEachRebuildBatch(Runnable batch) {
    return new StoreHooks() {
      @Override
      void keyFilterRebuildBatch() {
        batch.run();
      }
    };
  }

  /**
   * 160 000 keys into an empty store: its filter grows a second segment at 52 428 keys and a third
   * at 157 285, and is rebuilt into one once the load has stopped, sized for twice the records (419
   * 430 keys); without the rebuild it would keep three segments and about 2 % false positives, with
   * it at most 0.5 % (expected about 0.02 %; even a segment of half that size, had a slow load let
   * the rebuild begin at 52 428 keys, would give about 0.2 %; 100 000 queries, whose standard
   * deviation is at most 0.015 %).
   */
  @Test
  void aStoreGrownFromEmptyAsksOneSegmentAgain() throws InterruptedException {
    AtomicLong millis = Fixtures.manualMillis(NOW);
    List<ReplicaRecord> stored = records("k-", 160_000, HybridClock.version(NOW - 1_000, 0));
    try (ReplicaStore s = open(tmp.resolve("grown"), millis, StoreHooks.DEFAULT)) {
      load(s, stored);
      await("one segment", () -> s.stats().keyFilterSegments() == 1);
      assertThat(s.stats().keyFilterRebuilds()).isGreaterThanOrEqualTo(1);
      // sized for twice the records when it began: 2^13 blocks after the load, 2^12 if a slow
      // load let it begin before its end
      assertThat(s.stats().keyFilterBytes())
          .isBetween(4 * KeyFilter.MIN_BLOCKS * 64L, 8 * KeyFilter.MIN_BLOCKS * 64L);
      noneDenied(s, keysOf(stored));
      assertThat(s.selfCheck().ok()).isTrue();
      assertThat(falsePositives(s, 100_000)).isLessThan(500);
    }
  }

  /**
   * 5 000 keys, 4 000 of them deleted and their tombstones purged: the purged keys (at least {@link
   * KeyFilter#MIN_STALE_KEYS} and as many as the 1 000 left) ask for a rebuild, after which the
   * filter denies the purged keys (a one-segment filter sized for 2 000 keys at the smallest
   * segment: expected about 0.001 % false positives, asserted under 1 %) and none of the stored
   * ones. Without the purge's request every purged key stayed a false positive until the next open.
   */
  @Test
  void purgingMostKeysRebuildsTheFilterWithoutThem() throws InterruptedException {
    AtomicLong millis = Fixtures.manualMillis(NOW);
    List<ReplicaRecord> all = records("p-", 5_000, HybridClock.version(NOW - 1_000, 0));
    try (ReplicaStore s = open(tmp.resolve("purged"), millis, StoreHooks.DEFAULT)) {
      load(s, all);
      List<byte[]> gone = keysOf(all.subList(0, 4_000));
      List<byte[]> kept = keysOf(all.subList(4_000, 5_000));
      for (byte[] k : gone) {
        s.delete(k);
      }
      millis.addAndGet(s.options().tombstoneGrace().toMillis() + 1_000);
      assertThat(s.purgeTombstones(millis.get())).isEqualTo(4_000);
      await("the rebuild after the purge", () -> s.stats().keyFilterRebuilds() == 1);
      noneDenied(s, kept);
      long letThrough = gone.stream().filter(k -> !s.surelyLacks(k)).count();
      assertThat(letThrough).as("purged keys the filter lets through").isLessThan(40);
      assertThat(s.stats().keyFilterSegments()).isEqualTo(1);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  /**
   * The rebuild held at its first batch (its snapshot taken) while a client puts, a repair batch is
   * applied and a partition is ingested as table files: after it, every one of those keys and of
   * the keys before is let through, and the self-check (the filter against every stored key)
   * passes; keys purged before the snapshot, false positives of the grown filter, are denied.
   */
  @Test
  void writesDuringTheRebuildAreKeptAndPurgedKeysDropped() throws InterruptedException {
    AtomicLong millis = Fixtures.manualMillis(NOW);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    StoreHooks hold =
        atEachRebuildBatch(
            () -> {
              entered.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    try (ReplicaStore s = open(tmp.resolve("during"), millis, hold)) {
      List<byte[]> purged = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        purged.add(bytes("gone-" + i));
        s.put(purged.get(i), bytes("v"));
        s.delete(purged.get(i));
      }
      millis.addAndGet(s.options().tombstoneGrace().toMillis() + 1_000);
      assertThat(s.purgeTombstones(millis.get())).isEqualTo(20);
      long recent = HybridClock.version(millis.get() - 1_000, 0);
      List<ReplicaRecord> before = records("k-", FIRST_CAPACITY + 8_000, recent);
      load(s, before);
      assertThat(entered.await(60, TimeUnit.SECONDS)).as("the rebuild started").isTrue();
      assertThat(s.stats().keyFilterSegments()).isEqualTo(2);
      for (byte[] k : purged) {
        assertThat(s.surelyLacks(k)).as("a purged key's bits stay before the rebuild").isFalse();
      }
      // meanwhile: client puts, a repair batch, a partition ingested as table files
      List<byte[]> during = new ArrayList<>();
      for (int i = 0; i < 2_000; i++) {
        during.add(bytes("during-put-" + i));
        s.put(during.get(i), bytes("p" + i));
      }
      List<ReplicaRecord> repaired = records("during-apply-", 500, recent);
      assertThat(s.apply(repaired).applied()).isEqualTo(500);
      List<ReplicaRecord> ingested = Fixtures.partitionRecords(PARAMS, "ingest-", 2, 3_000, recent);
      try (RecordStore.PartitionLoad load = s.load(2, PartitionIngest.CHUNK_RECORDS, 0)) {
        load.add(ingested);
        load.finish();
      }
      assertThat(s.stats().ingestedRecords()).as("ingested as files").isEqualTo(3_000);
      assertThat(s.stats().keyFilterRebuilds()).isZero();
      release.countDown();
      await("the rebuild", () -> s.stats().keyFilterRebuilds() == 1);
      assertThat(s.stats().keyFilterSegments()).isEqualTo(1);
      noneDenied(s, keysOf(before));
      noneDenied(s, during);
      noneDenied(s, keysOf(repaired));
      noneDenied(s, keysOf(ingested));
      assertThat(s.selfCheck().ok()).isTrue();
      long denied = purged.stream().filter(s::surelyLacks).count();
      assertThat(denied).as("purged keys denied after the rebuild").isGreaterThanOrEqualTo(19);
    }
  }

  /**
   * An ingest whose keys grow the filter: the rebuild they ask for must not take its snapshot
   * between the keys' addition and the files (it waits for the ingest's end), or the new segment
   * would lack the ingested keys. The ingest lingers 500 ms after its marker to give a rebuild that
   * did not wait the time to start; taking the ingest lock out of the rebuild fails this.
   */
  @Test
  void aRebuildAskedForByAnIngestWaitsForItsFiles() throws InterruptedException {
    AtomicLong millis = Fixtures.manualMillis(NOW);
    StoreHooks linger =
        new StoreHooks() {
          @Override
          long keyFilterQuietMillis() {
            return 100; // the rebuild would start within the ingest's 500 ms
          }

          @Override
          void ingestStep(int step) {
            if (step == 1) {
              try {
                Thread.sleep(500);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          }
        };
    long recent = HybridClock.version(NOW - 1_000, 0);
    try (ReplicaStore s = open(tmp.resolve("ingest"), millis, linger)) {
      List<ReplicaRecord> before = records("k-", FIRST_CAPACITY - 1_000, recent);
      load(s, before);
      assertThat(s.stats().keyFilterSegments()).isEqualTo(1);
      List<ReplicaRecord> ingested = Fixtures.partitionRecords(PARAMS, "ingest-", 2, 3_000, recent);
      try (RecordStore.PartitionLoad load = s.load(2, PartitionIngest.CHUNK_RECORDS, 0)) {
        load.add(ingested);
        load.finish();
      }
      assertThat(s.stats().ingestedRecords()).as("ingested as files").isEqualTo(3_000);
      await("the rebuild", () -> s.stats().keyFilterRebuilds() == 1);
      noneDenied(s, keysOf(ingested));
      noneDenied(s, keysOf(before));
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  /**
   * While the store takes new keys fast (here a bulk load of about 2 x 10^4 keys a second, past the
   * 10^4 a second that counts as quiet), a rebuild asked for by a growth waits; once the load
   * stops, it runs.
   */
  @Test
  void aRebuildWaitsWhileTheStoreTakesKeysFast() throws InterruptedException {
    AtomicLong millis = Fixtures.manualMillis(NOW);
    CountDownLatch entered = new CountDownLatch(1);
    StoreHooks watch =
        new StoreHooks() {
          @Override
          long keyFilterQuietMillis() {
            return 200;
          }

          @Override
          void keyFilterRebuildBatch() {
            entered.countDown();
          }
        };
    long recent = HybridClock.version(NOW - 1_000, 0);
    try (ReplicaStore s = open(tmp.resolve("busy"), millis, watch)) {
      load(s, records("k-", FIRST_CAPACITY + 1_000, recent));
      assertThat(s.stats().keyFilterSegments()).isEqualTo(2);
      // 40 batches of 1 000 keys, one each 50 ms: 2 s at 20 000 keys a second
      for (int b = 0; b < 40; b++) {
        s.putAll(records("busy-" + b + "-", 1_000, recent));
        assertThat(entered.getCount()).as("a rebuild began during the load, batch %d", b).isOne();
        Thread.sleep(50);
      }
      await("the rebuild after the load", () -> s.stats().keyFilterRebuilds() == 1);
      assertThat(s.stats().keyFilterSegments()).isEqualTo(1);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  /** A close while a rebuild scans stops it and returns; the next open builds the filter anew. */
  @Test
  void aCloseStopsARunningRebuild() throws InterruptedException {
    AtomicLong millis = Fixtures.manualMillis(NOW);
    CountDownLatch entered = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    StoreHooks hold =
        atEachRebuildBatch(
            () -> {
              entered.countDown();
              try {
                new CountDownLatch(1).await(); // until the close interrupts it
              } catch (InterruptedException e) {
                interrupted.set(true);
              }
            });
    Path dir = tmp.resolve("close");
    List<ReplicaRecord> stored =
        records("k-", FIRST_CAPACITY + 1_000, HybridClock.version(NOW - 1_000, 0));
    try (ReplicaStore s = open(dir, millis, hold)) {
      load(s, stored);
      assertThat(entered.await(60, TimeUnit.SECONDS)).as("the rebuild started").isTrue();
    }
    assertThat(interrupted).as("the close stopped the held rebuild").isTrue();
    try (ReplicaStore s = open(dir, millis, StoreHooks.DEFAULT)) {
      assertThat(s.stats().keyFilterSegments()).isEqualTo(1);
      noneDenied(s, keysOf(stored));
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  /** A rebuild that fails leaves the grown segments, which still hold every key. */
  @Test
  void aFailedRebuildLeavesTheGrownFilter() throws InterruptedException {
    AtomicLong millis = Fixtures.manualMillis(NOW);
    CountDownLatch failed = new CountDownLatch(1);
    StoreHooks failing =
        atEachRebuildBatch(
            () -> {
              failed.countDown();
              throw new StoreException("injected: the rebuild's scan fails");
            });
    List<ReplicaRecord> stored =
        records("k-", FIRST_CAPACITY + 1_000, HybridClock.version(NOW - 1_000, 0));
    try (ReplicaStore s = open(tmp.resolve("fail"), millis, failing)) {
      load(s, stored);
      assertThat(failed.await(60, TimeUnit.SECONDS)).isTrue();
      // the failure drops the new segment under the writer lock, which a put then takes
      await(
          "the dropped segment",
          () -> s.stats().keyFilterBytes() == 3 * KeyFilter.MIN_BLOCKS * 64L);
      s.put(bytes("after"), bytes("v"));
      assertThat(s.stats().keyFilterSegments()).isEqualTo(2);
      assertThat(s.stats().keyFilterRebuilds()).isZero();
      noneDenied(s, keysOf(stored));
      noneDenied(s, List.of(bytes("after")));
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }
}
