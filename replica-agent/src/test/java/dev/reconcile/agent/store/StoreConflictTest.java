package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.ConflictRule;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StoreConflictTest {
  private static final HashSpec SPEC = HashSpec.xxh3(Fixtures.SEED);

  @Test
  void versionThenOriginThenValueHashThenTombstoneAllUnsigned() {
    byte[] k = bytes("k");
    ReplicaRecord a = ReplicaRecord.of(k, bytes("a"), 10, 5);
    assertThat(ConflictRule.wins(ReplicaRecord.of(k, bytes("a"), 11, 0), a, SPEC)).isTrue();
    assertThat(ConflictRule.wins(ReplicaRecord.of(k, bytes("a"), 10, 6), a, SPEC)).isTrue();
    assertThat(ConflictRule.wins(ReplicaRecord.of(k, bytes("a"), 10, 4), a, SPEC)).isFalse();
    // unsigned: a version or origin with the top bit set is larger, not negative
    assertThat(
            ConflictRule.wins(ReplicaRecord.of(k, bytes("a"), 0x8000_0000_0000_0000L, 0), a, SPEC))
        .isTrue();
    assertThat(ConflictRule.wins(ReplicaRecord.of(k, bytes("a"), 10, -1L), a, SPEC)).isTrue();
    // same version and origin: the larger unsigned value hash wins
    ReplicaRecord b = ReplicaRecord.of(k, bytes("b"), 10, 5);
    boolean bBigger =
        Long.compareUnsigned(SPEC.valueHash(bytes("b")), SPEC.valueHash(bytes("a"))) > 0;
    assertThat(ConflictRule.wins(b, a, SPEC)).isEqualTo(bBigger);
    assertThat(ConflictRule.wins(a, b, SPEC)).isEqualTo(!bBigger);
    // a record never beats itself; absent is beaten by anything
    assertThat(ConflictRule.wins(a, a, SPEC)).isFalse();
    assertThat(ConflictRule.compare(a, ReplicaRecord.of(k, bytes("a"), 10, 5), SPEC)).isZero();
    assertThat(ConflictRule.wins(a, null, SPEC)).isTrue();
  }

  @Test
  void tombstoneBeatsEmptyValueOfSameVersionAndOrigin() {
    byte[] k = bytes("k");
    ReplicaRecord empty = ReplicaRecord.of(k, new byte[0], 7, 3);
    ReplicaRecord tomb = ReplicaRecord.tombstone(k, 7, 3);
    assertThat(ConflictRule.wins(tomb, empty, SPEC)).isTrue();
    assertThat(ConflictRule.wins(empty, tomb, SPEC)).isFalse();
    // against a non-empty value of the same version/origin, the value hashes decide
    ReplicaRecord v = ReplicaRecord.of(k, bytes("v"), 7, 3);
    boolean vBigger =
        Long.compareUnsigned(SPEC.valueHash(bytes("v")), SPEC.valueHash(new byte[0])) > 0;
    assertThat(ConflictRule.wins(tomb, v, SPEC)).isEqualTo(!vBigger);
    // a later value beats an earlier tombstone and vice versa
    assertThat(ConflictRule.wins(ReplicaRecord.of(k, bytes("x"), 8, 0), tomb, SPEC)).isTrue();
    assertThat(ConflictRule.wins(ReplicaRecord.tombstone(k, 8, 0), v, SPEC)).isTrue();
  }

  @Test
  void comparatorIsATotalOrderConsistentWithWins() {
    List<ReplicaRecord> rs = conflicting(new Random(42), bytes("key"), 40);
    rs.sort(ConflictRule.comparator(SPEC));
    for (int i = 0; i + 1 < rs.size(); i++) {
      ReplicaRecord lo = rs.get(i);
      ReplicaRecord hi = rs.get(i + 1);
      assertThat(ConflictRule.compare(lo, hi, SPEC)).isLessThanOrEqualTo(0);
      assertThat(ConflictRule.wins(lo, hi, SPEC)).isFalse();
    }
  }

  /** Applies permutations of conflicting records (singly and in batches) to fresh stores. */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void finalStateIndependentOfArrivalOrder(long seed, @TempDir Path dir) {
    SketchParams params = Fixtures.params(1, 5);
    Random rnd = new Random(seed);
    List<ReplicaRecord> all = new ArrayList<>();
    for (int k = 0; k < 5; k++) {
      all.addAll(conflicting(rnd, bytes("key-" + k), 12));
    }
    ReplicaRecord[] expected = new ReplicaRecord[5];
    for (ReplicaRecord r : all) {
      int k =
          Integer.parseInt(
              new String(r.key(), java.nio.charset.StandardCharsets.UTF_8).substring(4));
      if (ConflictRule.wins(r, expected[k], SPEC)) {
        expected[k] = r;
      }
    }
    List<List<ReplicaRecord>> finals = new ArrayList<>();
    List<dev.reconcile.core.Fingerprint> fps = new ArrayList<>();
    for (int perm = 0; perm < 6; perm++) {
      List<ReplicaRecord> order = new ArrayList<>(all);
      Collections.shuffle(order, rnd);
      try (ReplicaStore s =
          ReplicaStore.open(
              Fixtures.options(
                      dir.resolve("s" + perm), "n" + perm, params, Fixtures.manualMillis(1))
                  .build())) {
        int i = 0;
        while (i < order.size()) {
          int n = perm % 2 == 0 ? 1 : 1 + rnd.nextInt(9); // singly, or batches of 1..9
          s.apply(order.subList(i, Math.min(order.size(), i + n)));
          i += n;
        }
        List<ReplicaRecord> state = new ArrayList<>();
        s.forEachRecord(state::add);
        finals.add(state);
        fps.add(s.sketches().fingerprint(0));
        fps.add(s.sketches().fingerprint(1));
        assertThat(s.selfCheck().ok()).as("seed %d perm %d", seed, perm).isTrue();
        for (int k = 0; k < 5; k++) {
          assertThat(s.get(bytes("key-" + k)))
              .as("seed %d perm %d", seed, perm)
              .contains(expected[k]);
        }
      }
    }
    for (int perm = 1; perm < finals.size(); perm++) {
      assertThat(finals.get(perm)).as("seed %d perm %d", seed, perm).isEqualTo(finals.get(0));
      assertThat(fps.subList(2 * perm, 2 * perm + 2)).isEqualTo(fps.subList(0, 2));
    }
  }

  @Test
  void applyingTheSameBatchTwiceIsANoOp(@TempDir Path dir) {
    SketchParams params = Fixtures.params(1, 5);
    List<ReplicaRecord> batch = conflicting(new Random(7), bytes("k"), 10);
    batch.add(ReplicaRecord.of(bytes("other"), bytes("v"), 99, 1));
    try (ReplicaStore s =
        ReplicaStore.open(Fixtures.options(dir, "n", params, Fixtures.manualMillis(1)).build())) {
      ApplyOutcome first = s.apply(batch);
      assertThat(first.total()).isEqualTo(batch.size());
      List<ReplicaRecord> before = new ArrayList<>();
      s.forEachRecord(before::add);
      var fp0 = s.sketches().fingerprint(0);
      var fp1 = s.sketches().fingerprint(1);
      ApplyOutcome second = s.apply(batch);
      // every record is now a duplicate of the winner or loses to it; nothing is applied
      assertThat(second.applied()).isZero();
      assertThat(second.duplicate()).isGreaterThanOrEqualTo(2);
      assertThat(second.stale() + second.duplicate()).isEqualTo(batch.size());
      List<ReplicaRecord> after = new ArrayList<>();
      s.forEachRecord(after::add);
      assertThat(after).isEqualTo(before);
      assertThat(s.sketches().fingerprint(0)).isEqualTo(fp0);
      assertThat(s.sketches().fingerprint(1)).isEqualTo(fp1);
      assertThat(s.recordCount()).isEqualTo(2);
    }
  }

  /** Conflicting records of one key with many ties: few versions, few origins, tombstones. */
  static List<ReplicaRecord> conflicting(Random rnd, byte[] key, int n) {
    List<ReplicaRecord> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long version = 100L + rnd.nextInt(3);
      long origin = rnd.nextInt(3) == 0 ? -1L : (long) rnd.nextInt(2);
      int kind = rnd.nextInt(4);
      if (kind == 0) {
        out.add(ReplicaRecord.tombstone(key, version, origin));
      } else if (kind == 1) {
        out.add(ReplicaRecord.of(key, new byte[0], version, origin));
      } else {
        out.add(ReplicaRecord.of(key, bytes("v" + rnd.nextInt(3)), version, origin));
      }
    }
    return out;
  }
}
