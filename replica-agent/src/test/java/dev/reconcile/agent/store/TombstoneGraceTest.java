package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.ReplicaRecord;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Repair of tombstones past the grace period: they delete, but are never stored. */
class TombstoneGraceTest {
  private static final long GRACE_MS = 1_000;

  @TempDir Path dir;

  private ReplicaStore open(String node, AtomicLong ms) {
    return ReplicaStore.open(
        Fixtures.options(dir.resolve(node), node, Fixtures.params(2, 6), ms)
            .tombstoneGrace(Duration.ofMillis(GRACE_MS))
            .build());
  }

  @Test
  void aPastGraceTombstoneIsNotStoredWhereTheKeyIsAbsent() {
    AtomicLong ms = Fixtures.manualMillis(100_000);
    try (ReplicaStore s = open("a", ms)) {
      ReplicaRecord old = ReplicaRecord.tombstone(bytes("k"), HybridClock.version(98_000, 0), 9);
      assertThat(s.pastGrace(old)).isTrue();
      ApplyOutcome o = s.apply(List.of(old));
      assertThat(o).isEqualTo(new ApplyOutcome(0, 0, 1));
      assertThat(s.get(bytes("k"))).isEmpty();
      assertThat(s.recordCount()).isZero();
      assertThat(s.selfCheck().ok()).isTrue();
      // Within the grace it is stored as before.
      ReplicaRecord young = ReplicaRecord.tombstone(bytes("j"), HybridClock.version(99_500, 0), 9);
      assertThat(s.pastGrace(young)).isFalse();
      assertThat(s.apply(List.of(young)).applied()).isEqualTo(1);
      assertThat(s.get(bytes("j"))).contains(young);
    }
  }

  @Test
  void aPastGraceTombstoneStillDeletesAnOlderLiveValue() {
    AtomicLong ms = Fixtures.manualMillis(100_000);
    try (ReplicaStore s = open("a", ms)) {
      ReplicaRecord live =
          ReplicaRecord.of(bytes("k"), bytes("v1"), HybridClock.version(90_000, 0), 9);
      ReplicaRecord other =
          ReplicaRecord.of(bytes("m"), bytes("v1"), HybridClock.version(90_000, 0), 9);
      s.apply(List.of(live, other));
      long before =
          s.sketches()
              .fingerprint(HashSpec.partition(s.params().spec().keyHash(bytes("k")), 2))
              .count();
      ReplicaRecord del = ReplicaRecord.tombstone(bytes("k"), HybridClock.version(95_000, 0), 9);
      assertThat(s.apply(List.of(del)).applied()).isEqualTo(1);
      assertThat(s.get(bytes("k"))).isEmpty(); // deleted, and the tombstone is not kept
      assertThat(s.get(bytes("m"))).isPresent();
      assertThat(s.recordCount()).isEqualTo(1);
      assertThat(
              s.sketches()
                  .fingerprint(HashSpec.partition(s.params().spec().keyHash(bytes("k")), 2))
                  .count())
          .isEqualTo(before - 1);
      assertThat(s.selfCheck().ok()).isTrue();
      // A newer live value is not deleted by an older past-grace tombstone.
      ReplicaRecord newer =
          ReplicaRecord.of(bytes("m"), bytes("v2"), HybridClock.version(96_000, 0), 9);
      s.apply(List.of(newer));
      ReplicaRecord olderDel =
          ReplicaRecord.tombstone(bytes("m"), HybridClock.version(95_500, 0), 9);
      assertThat(s.apply(List.of(olderDel))).isEqualTo(new ApplyOutcome(0, 1, 0));
      assertThat(s.get(bytes("m"))).contains(newer);
    }
  }

  @Test
  void aPurgedTombstoneDoesNotBounceBetweenStoresThatPurgeAtDifferentTimes() {
    AtomicLong ms = Fixtures.manualMillis(100_000);
    try (ReplicaStore a = open("a", ms);
        ReplicaStore b = open("b", ms)) {
      a.put(bytes("k"), bytes("v"));
      a.delete(bytes("k"));
      ReplicaRecord t = a.get(bytes("k")).orElseThrow();
      b.apply(List.of(t));
      ms.addAndGet(GRACE_MS + 1);
      assertThat(a.purgeTombstones(ms.get())).isEqualTo(1); // a purges, b has not yet
      // b hands it back, as a repair round would: a does not take it.
      assertThat(a.apply(List.of(b.get(bytes("k")).orElseThrow())).applied()).isZero();
      assertThat(a.get(bytes("k"))).isEmpty();
      // b purges later; a has nothing to hand back.
      assertThat(b.purgeTombstones(ms.get())).isEqualTo(1);
      assertThat(a.recordCount() + b.recordCount()).isZero();
    }
  }

  @Test
  void dropExpiredTombstonesKeepsWhatIsYoungOrRewritten() {
    AtomicLong ms = Fixtures.manualMillis(100_000);
    try (ReplicaStore s = open("a", ms)) {
      s.delete(bytes("old"));
      s.delete(bytes("rewritten"));
      s.put(bytes("live"), bytes("v"));
      ms.addAndGet(GRACE_MS + 1);
      s.put(bytes("rewritten"), bytes("again"));
      s.delete(bytes("young"));
      int n =
          s.dropExpiredTombstones(
              List.of(bytes("old"), bytes("rewritten"), bytes("live"), bytes("young"), bytes("x")));
      assertThat(n).isEqualTo(1);
      assertThat(s.get(bytes("old"))).isEmpty();
      assertThat(s.get(bytes("rewritten")).orElseThrow().tombstone()).isFalse();
      assertThat(s.get(bytes("young")).orElseThrow().tombstone()).isTrue();
      assertThat(s.get(bytes("live"))).isPresent();
      assertThat(s.stats().purgedTombstones()).isEqualTo(1);
      assertThat(s.selfCheck().ok()).isTrue();
    }
  }
}
