package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The write path skips the read of a key's current record when the key's row is above its
 * partition's tail ({@link PartitionTails}); these tests check that it skips what a catch-up sends
 * and never skips a key that is there (which would store an older version over a newer one and
 * leave two index rows for one key).
 */
class PartitionTailsTest {
  private static final SketchParams PARAMS = Fixtures.params(2, 6);

  @TempDir Path dir;

  private ReplicaStore open(AtomicLong ms) {
    return ReplicaStore.open(
        Fixtures.options(dir, "node-a", PARAMS, ms).tombstoneGrace(Duration.ofMillis(50)).build());
  }

  /** The rows of {@code keys} in the store's order: partition, then key bytes. */
  private static List<byte[]> inRowOrder(List<byte[]> keys) {
    HashSpec spec = PARAMS.spec();
    List<byte[]> rows = new ArrayList<>();
    for (byte[] k : keys) {
      rows.add(RecordKeys.of(HashSpec.partition(spec.keyHash(k), PARAMS.partitionsLog2()), k));
    }
    rows.sort(Arrays::compareUnsigned);
    List<byte[]> out = new ArrayList<>();
    for (byte[] row : rows) {
      out.add(RecordKeys.key(row));
    }
    return out;
  }

  private static List<byte[]> keys(int n, String prefix) {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      keys.add(bytes(prefix + i));
    }
    return keys;
  }

  @Test
  void aCatchUpInRowOrderReadsNothingAndStoresEverything() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    List<byte[]> keys = inRowOrder(keys(2_000, "key-"));
    try (ReplicaStore s = open(ms)) {
      for (int from = 0; from < keys.size(); from += 300) {
        List<ReplicaRecord> batch = new ArrayList<>();
        for (byte[] k : keys.subList(from, Math.min(keys.size(), from + 300))) {
          batch.add(ReplicaRecord.of(k, k, HybridClock.version(500, 0), 7));
        }
        assertThat(s.apply(batch).applied()).isEqualTo(batch.size());
      }
      assertThat(s.currentReadsSkipped()).isEqualTo(keys.size());
      assertThat(s.recordCount()).isEqualTo(keys.size());
      for (byte[] k : keys) {
        assertThat(s.get(k).orElseThrow().value()).isEqualTo(k);
      }
      assertThat(s.selfCheck().ok()).isTrue();
      ReplicaStoreTest.assertIndexAgreesWithRecords(s, "catch-up");
    }
  }

  /**
   * Keys already stored are read whatever the order they come in, in the same store and after a
   * reopen (the tails are found again from the rows): an older version is stale, a newer one
   * replaces the record and its one index row.
   */
  @Test
  void storedKeysAreAlwaysReadBeforeTheyAreWritten() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    List<byte[]> keys = keys(500, "k");
    List<byte[]> ordered = inRowOrder(keys);
    try (ReplicaStore s = open(ms)) {
      for (byte[] k : keys) {
        s.put(k, bytes("new"));
      }
      assertStale(s, ordered);
    }
    try (ReplicaStore s = open(ms)) {
      assertStale(s, ordered);
      List<byte[]> reversed = new ArrayList<>(ordered);
      java.util.Collections.reverse(reversed);
      assertStale(s, reversed);
      // A newer version in row order replaces each record.
      long newer = HybridClock.version(ms.get() + 10_000, 0);
      List<ReplicaRecord> batch = new ArrayList<>();
      for (byte[] k : ordered) {
        batch.add(ReplicaRecord.of(k, bytes("newer"), newer, 9));
      }
      assertThat(s.apply(batch).applied()).isEqualTo(keys.size());
      assertThat(s.recordCount()).isEqualTo(keys.size());
      assertThat(s.currentReadsSkipped()).isZero();
      assertThat(s.selfCheck().ok()).isTrue();
      ReplicaStoreTest.assertIndexAgreesWithRecords(s, "newer");
    }
  }

  private static void assertStale(ReplicaStore s, List<byte[]> keys) {
    List<ReplicaRecord> older = new ArrayList<>();
    for (byte[] k : keys) {
      older.add(ReplicaRecord.of(k, bytes("old"), HybridClock.version(1, 0), 3));
    }
    ApplyOutcome o = s.apply(older);
    assertThat(o.applied()).isZero();
    assertThat(o.stale()).isEqualTo(keys.size());
    for (byte[] k : keys) {
      assertThat(s.get(k).orElseThrow().value()).isEqualTo(bytes("new"));
    }
  }

  /** A key above the partition's last row after a reopen is new; the last row itself is not. */
  @Test
  void afterAReopenTheLastRowOfAPartitionIsItsTail() {
    AtomicLong ms = Fixtures.manualMillis(1_000);
    List<byte[]> ordered = inRowOrder(keys(200, "m"));
    byte[] last = ordered.get(ordered.size() - 1);
    try (ReplicaStore s = open(ms)) {
      s.put(last, bytes("v"));
    }
    try (ReplicaStore s = open(ms)) {
      ApplyOutcome o =
          s.apply(List.of(ReplicaRecord.of(last, bytes("old"), HybridClock.version(1, 0), 3)));
      assertThat(o.stale()).isEqualTo(1);
      assertThat(s.currentReadsSkipped()).isZero();
      s.put(bytes("zzzz-after-everything"), bytes("v"));
      assertThat(s.currentReadsSkipped()).isEqualTo(1);
      assertThat(s.get(last).orElseThrow().value()).isEqualTo(bytes("v"));
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }

  /**
   * Seeded mix of applies in row order (new and stored keys), in random order, local writes,
   * deletes, purges and reopens. Before each apply the expected winner of every key is worked out
   * from {@code get} (a read that does not go through the tails); after it, the store must hold
   * exactly those winners, and the index must agree with the records.
   */
  @ParameterizedTest
  @ValueSource(longs = {21, 22, 23, 24})
  void randomAppliesAgreeWithTheReadPath(long seed) {
    Random r = new Random(seed);
    AtomicLong ms = Fixtures.manualMillis(1_000);
    String ctx = "seed " + seed;
    ReplicaStore s = open(ms);
    long skipped = 0;
    try {
      for (int op = 0; op < 300; op++) {
        ms.addAndGet(1 + r.nextInt(3));
        int kind = r.nextInt(10);
        if (kind < 5) {
          List<byte[]> keys = new ArrayList<>();
          int n = 1 + r.nextInt(40);
          for (int i = 0; i < n; i++) {
            keys.add(bytes("k" + r.nextInt(kind < 3 ? 400 : 100_000)));
          }
          List<byte[]> batchKeys = r.nextBoolean() ? inRowOrder(keys) : keys;
          List<ReplicaRecord> batch = new ArrayList<>();
          for (byte[] k : batchKeys) {
            long version = HybridClock.version(Math.max(1, ms.get() + r.nextInt(200) - 100), 0);
            // Tombstones within the grace period: a winning one is stored, so the key stays.
            batch.add(
                r.nextInt(6) == 0
                    ? ReplicaRecord.tombstone(
                        k, HybridClock.version(ms.get() + r.nextInt(100), 0), r.nextInt(3))
                    : ReplicaRecord.of(k, bytes("v" + op), version, r.nextInt(3)));
          }
          Map<String, Long> expected = expectedVersions(s, batch);
          s.apply(batch);
          for (Map.Entry<String, Long> e : expected.entrySet()) {
            Optional<ReplicaRecord> got = s.get(bytes(e.getKey()));
            assertThat(got).as("%s op %d key %s", ctx, op, e.getKey()).isPresent();
            assertThat(got.get().version())
                .as("%s op %d key %s", ctx, op, e.getKey())
                .isEqualTo(e.getValue());
          }
        } else if (kind < 7) {
          s.put(bytes("k" + r.nextInt(400)), bytes("local" + op));
        } else if (kind < 8) {
          s.delete(bytes("k" + r.nextInt(400)));
        } else if (kind < 9) {
          ms.addAndGet(2_000);
          s.purgeTombstones(ms.get());
        } else {
          skipped += s.currentReadsSkipped();
          s.close();
          s = open(ms);
        }
      }
      assertThat(s.selfCheck().ok()).as(ctx).isTrue();
      ReplicaStoreTest.assertIndexAgreesWithRecords(s, ctx);
      // Keys above the tails (most of the wide key range) were applied without a read.
      assertThat(skipped + s.currentReadsSkipped()).as(ctx).isPositive();
    } finally {
      s.close();
    }
  }

  /**
   * The version each key of {@code batch} must end with: the highest of the stored one (read with
   * {@code get}) and the incoming ones. Versions here are distinct enough that ties do not matter
   * for the check; a tie keeps whichever the conflict rule picks, so tied keys are left out.
   */
  private static Map<String, Long> expectedVersions(ReplicaStore s, List<ReplicaRecord> batch) {
    Map<String, Long> best = new HashMap<>();
    Map<String, Integer> atBest = new HashMap<>();
    for (ReplicaRecord rec : batch) {
      String k = new String(rec.key(), java.nio.charset.StandardCharsets.UTF_8);
      if (!best.containsKey(k)) {
        Optional<ReplicaRecord> cur = s.get(rec.key());
        best.put(k, cur.map(ReplicaRecord::version).orElse(0L));
        atBest.put(k, cur.isPresent() ? 1 : 0);
      }
      int c = Long.compareUnsigned(rec.version(), best.get(k));
      if (c > 0) {
        best.put(k, rec.version());
        atBest.put(k, 1);
      } else if (c == 0) {
        atBest.merge(k, 1, Integer::sum);
      }
    }
    Map<String, Long> out = new HashMap<>();
    best.entrySet().stream()
        .filter(e -> atBest.get(e.getKey()) == 1)
        .sorted(Comparator.comparing(Map.Entry::getKey))
        .forEach(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }
}
