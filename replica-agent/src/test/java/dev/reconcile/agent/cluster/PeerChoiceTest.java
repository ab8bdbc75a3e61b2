package dev.reconcile.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.agent.cluster.PeerChoice.Candidate;
import dev.reconcile.agent.cluster.PeerChoice.Pick;
import dev.reconcile.agent.cluster.PeerChoice.Reason;
import dev.reconcile.core.Fingerprint;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PeerChoiceTest {
  static final PartitionDigest A = digest(1);
  static final PartitionDigest B = digest(2);
  static final PartitionDigest C = digest(3);

  static PartitionDigest digest(long salt) {
    return PartitionDigest.of(4, p -> new Fingerprint(p + salt, salt * 31 + p, salt));
  }

  static List<Candidate> fresh(PartitionDigest... ds) {
    List<Candidate> out = new ArrayList<>();
    for (int i = 0; i < ds.length; i++) {
      out.add(Candidate.fresh("m" + i, ds[i], 1));
    }
    return out;
  }

  @Test
  void identicalReplicasCostNoRoundsUntilTheGossipIntervalIsUp() {
    PeerChoice c = new PeerChoice(2, 60_000);
    SplittableRandom r = new SplittableRandom(1);
    List<Candidate> same = fresh(A, A, A, A);
    assertThat(c.choose(A, same, 100_000, 50_000, r)).isEmpty();
    List<Pick> due = c.choose(A, same, 110_000, 50_000, r);
    assertThat(due).hasSize(1);
    assertThat(due.get(0).reason()).isEqualTo(Reason.GOSSIP);
    // Never gossiped yet: due at once.
    assertThat(c.choose(A, same, 1, 0, r)).hasSize(1);
  }

  @Test
  void differingMembersComeFirstAndFillTheFanout() {
    PeerChoice c = new PeerChoice(2, 500);
    List<Candidate> cs = fresh(A, B, A, C, A);
    List<Pick> picks = c.choose(A, cs, 1000, 900, new SplittableRandom(7));
    assertThat(picks).extracting(Pick::id).containsExactlyInAnyOrder("m1", "m3");
    assertThat(picks).extracting(Pick::reason).containsOnly(Reason.DIFFERS);
    // Gossip due: one more, beyond the fanout, among the others.
    List<Pick> due = c.choose(A, cs, 1000, 400, new SplittableRandom(7));
    assertThat(due).hasSize(3);
    assertThat(due.get(2).reason()).isEqualTo(Reason.GOSSIP);
    assertThat(due.get(2).id()).isIn("m0", "m2", "m4");
    // One differing: it, then one gossip peer among the equal ones.
    List<Pick> one = c.choose(A, fresh(A, B, A), 1000, 0, new SplittableRandom(7));
    assertThat(one).hasSize(2);
    assertThat(one.get(0)).isEqualTo(new Pick("m1", Reason.DIFFERS));
    assertThat(one.get(1).reason()).isEqualTo(Reason.GOSSIP);
    assertThat(one.get(1).id()).isIn("m0", "m2");
  }

  @Test
  void theMemberAttemptedLongestAgoGoesFirst() {
    PeerChoice c = new PeerChoice(1, 60_000);
    List<Candidate> cs =
        List.of(
            new Candidate("recent", B, 5, 900, -1, null),
            new Candidate("old", B, 5, 100, -1, null),
            new Candidate("never", B, 5, 0, -1, null));
    assertThat(c.choose(A, cs, 1000, 1000, new SplittableRandom(1)))
        .containsExactly(new Pick("never", Reason.DIFFERS));
    assertThat(c.choose(A, cs.subList(0, 2), 1000, 1000, new SplittableRandom(1)))
        .containsExactly(new Pick("old", Reason.DIFFERS));
  }

  @Test
  void aDigestPublishedBeforeOurLastSuccessfulRoundIsStale() {
    // Reconciled with m at its seq 4; its published digest still says B, ours is A.
    Candidate stale = new Candidate("m", B, 4, 500, 4, A);
    assertThat(PeerChoice.looksDifferent(A, stale)).isFalse();
    // It published again since: believe it.
    assertThat(PeerChoice.looksDifferent(A, new Candidate("m", B, 5, 500, 4, A))).isTrue();
    // We changed since the round (new local writes): different again.
    assertThat(PeerChoice.looksDifferent(C, new Candidate("m", B, 4, 500, 4, A))).isTrue();
    // Never reconciled: different.
    assertThat(PeerChoice.looksDifferent(A, new Candidate("m", B, 4, 500, -1, null))).isTrue();
    assertThat(PeerChoice.looksDifferent(A, new Candidate("m", A, 4, 500, -1, null))).isFalse();
  }

  /** Every differing member gets a round within ceil(D / fanout) intervals, whatever the seed. */
  @Test
  void noDifferingMemberStarves() {
    for (long seed = 1; seed <= 20; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      int d = 7;
      int fanout = 2;
      PeerChoice c = new PeerChoice(fanout, 1_000_000);
      Map<String, Long> lastAttempt = new HashMap<>();
      Map<String, Long> lastPicked = new HashMap<>();
      for (long tick = 1; tick <= 200; tick++) {
        List<Candidate> cs = new ArrayList<>();
        for (int i = 0; i < d; i++) {
          String id = "m" + i;
          cs.add(new Candidate(id, B, 1, lastAttempt.getOrDefault(id, 0L), -1, null));
        }
        List<Pick> picks = c.choose(A, cs, tick, tick, r);
        assertThat(picks).as("seed %d tick %d", seed, tick).hasSize(fanout);
        for (Pick p : picks) {
          lastAttempt.put(p.id(), tick);
          lastPicked.put(p.id(), tick);
        }
        if (tick > 10) {
          for (int i = 0; i < d; i++) {
            assertThat(tick - lastPicked.getOrDefault("m" + i, 0L))
                .as("seed %d: m%d waited at tick %d", seed, i, tick)
                .isLessThan((d + fanout - 1) / fanout);
          }
        }
      }
    }
  }

  /** Gossip visits every equal-looking member in turn: no pair starves either. */
  @Test
  void gossipVisitsEveryEqualMemberInTurn() {
    SplittableRandom r = new SplittableRandom(3);
    PeerChoice c = new PeerChoice(2, 10);
    Map<String, Long> lastAttempt = new HashMap<>();
    List<String> order = new ArrayList<>();
    long lastGossip = 0;
    for (long now = 10; now <= 2000; now += 10) {
      List<Candidate> cs = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        cs.add(new Candidate("m" + i, A, 1, lastAttempt.getOrDefault("m" + i, 0L), -1, null));
      }
      for (Pick p : c.choose(A, cs, now, lastGossip, r)) {
        assertThat(p.reason()).isEqualTo(Reason.GOSSIP);
        lastAttempt.put(p.id(), now);
        lastGossip = now;
        order.add(p.id());
      }
    }
    assertThat(order).hasSize(200);
    for (int i = 0; i + 5 <= order.size(); i += 5) {
      assertThat(order.subList(i, i + 5)).containsExactlyInAnyOrder("m0", "m1", "m2", "m3", "m4");
    }
  }

  /**
   * A member that looks equal (a rogue may claim so) while others claim to differ still gets a
   * gossip round within N - 1 gossip intervals: the gossip slot is not taken from the fanout.
   */
  @Test
  void liarsCannotCrowdOutGossip() {
    for (long seed = 1; seed <= 20; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      PeerChoice c = new PeerChoice(2, 10);
      Map<String, Long> lastAttempt = new HashMap<>();
      long lastGossip = 0;
      long firstRoundWithReal = -1;
      for (long now = 10; now <= 1000 && firstRoundWithReal < 0; now += 10) {
        List<Candidate> cs = new ArrayList<>();
        for (int i = 0; i < 6; i++) { // six members that claim to differ (fakes)
          cs.add(
              new Candidate("fake" + i, B, 1, lastAttempt.getOrDefault("fake" + i, 0L), -1, null));
        }
        cs.add(new Candidate("real", A, 1, lastAttempt.getOrDefault("real", 0L), -1, null));
        List<Pick> picks = c.choose(A, cs, now, lastGossip, r);
        assertThat(picks.size()).isLessThanOrEqualTo(3);
        for (Pick p : picks) {
          lastAttempt.put(p.id(), now);
          if (p.reason() == Reason.GOSSIP) {
            lastGossip = now;
          }
          if (p.id().equals("real")) {
            firstRoundWithReal = now;
          }
        }
      }
      // N - 1 = 6 gossip intervals of 10 ms (the first at the first tick).
      assertThat(firstRoundWithReal).as("seed %d", seed).isBetween(10L, 60L);
    }
  }

  /**
   * Ties are broken at random: each of 4 never-tried members is picked about a quarter of times.
   */
  @Test
  void tiesAreBrokenUniformly() {
    long seed = 42;
    SplittableRandom r = new SplittableRandom(seed);
    PeerChoice c = new PeerChoice(1, 0);
    Map<String, Integer> n = new HashMap<>();
    int trials = 8000;
    for (int t = 0; t < trials; t++) {
      n.merge(c.choose(A, fresh(B, B, C, B), 1, 0, r).get(0).id(), 1, Integer::sum);
    }
    // Binomial(8000, 1/4): sd 39; +-200 is more than 5 sd.
    for (String id : List.of("m0", "m1", "m2", "m3")) {
      assertThat(n.getOrDefault(id, 0)).as("seed %d, %s", seed, id).isBetween(1800, 2200);
    }
  }

  @Test
  void badArguments() {
    assertThatThrownBy(() -> new PeerChoice(0, 0)).hasMessageContaining("fanout 0");
    assertThatThrownBy(() -> new PeerChoice(1, -1)).hasMessageContaining("negative");
  }
}
