package dev.reconcile.agent.cluster;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Which members an agent runs rounds with in one repair interval. A pure function of what the
 * caller knows; the caller keeps the state (last attempts, last gossip time) and the randomness.
 *
 * <ol>
 *   <li><b>Differing first.</b> A candidate <i>looks different</i> when its published {@link
 *       PartitionDigest} is not this agent's current one, unless this agent completed a round with
 *       it after it published that digest (its sequence number has not moved since) and this
 *       agent's own digest has not changed since that round (and nothing but that round changed it
 *       while it ran): then the published digest is merely stale. Up to {@code fanout} such
 *       candidates are chosen, the one attempted longest ago first (never attempted before all
 *       others; ties in random order), so that every differing member is tried within {@code ceil(D
 *       / fanout)} intervals and an unreachable one cannot keep the others waiting.
 *   <li><b>Then gossip.</b> When no gossip round was started for {@code gossipIntervalMillis}, one
 *       more candidate among those not chosen yet: again the one attempted longest ago, ties
 *       random. This slot is not taken from the fanout, so members that look different (or only
 *       claim to) cannot crowd it out. Digests are hints (stale, 32-bit, and published by anyone
 *       who can join the cluster manager), so this bounds how long any pair can go without a round,
 *       whatever is published: at most {@code N - 1} gossip intervals from each side.
 * </ol>
 *
 * <p>Consequences (measured by the gossip simulation, docs/benchmarks.md): a write is pulled and
 * pushed along differing pairs, so it reaches all N replicas in O(log N) intervals; an agent starts
 * at most {@code fanout} rounds per interval whatever N is, plus one per gossip interval; identical
 * replicas start none but that one.
 */
public final class PeerChoice {
  /** Why a member was chosen. */
  public enum Reason {
    DIFFERS,
    GOSSIP
  }

  /**
   * What the caller knows about one other member.
   *
   * @param id the member's key (any unique string)
   * @param digest its published digest
   * @param seq its publication sequence number
   * @param lastAttemptMillis when this agent last started a round with it (0 = never)
   * @param seqAtLastSuccess its sequence number when this agent's last successful round with it
   *     started (-1 = no successful round)
   * @param ownDigestAtLastSuccess this agent's digest right after that round (null = none, or the
   *     round cannot vouch for it: something else changed this agent while it ran, see {@code
   *     ClusterMode.settled})
   */
  public record Candidate(
      String id,
      PartitionDigest digest,
      long seq,
      long lastAttemptMillis,
      long seqAtLastSuccess,
      PartitionDigest ownDigestAtLastSuccess) {
    /** A member this agent never had a round with. */
    public static Candidate fresh(String id, PartitionDigest digest, long seq) {
      return new Candidate(id, digest, seq, 0, -1, null);
    }
  }

  /** One chosen member. */
  public record Pick(String id, Reason reason) {}

  private final int fanout;
  private final long gossipIntervalMillis;

  /**
   * @param fanout rounds per interval, at least 1
   * @param gossipIntervalMillis at least this long between gossip rounds (0: one every interval)
   */
  public PeerChoice(int fanout, long gossipIntervalMillis) {
    if (fanout < 1) {
      throw new IllegalArgumentException("fanout " + fanout + " < 1");
    }
    if (gossipIntervalMillis < 0) {
      throw new IllegalArgumentException("negative gossip interval");
    }
    this.fanout = fanout;
    this.gossipIntervalMillis = gossipIntervalMillis;
  }

  public int fanout() {
    return fanout;
  }

  /** True when {@code c}'s published digest says it holds something this agent does not. */
  public static boolean looksDifferent(PartitionDigest own, Candidate c) {
    if (c.digest().equals(own)) {
      return false;
    }
    boolean staleSinceRound =
        c.seqAtLastSuccess() >= 0
            && c.seq() <= c.seqAtLastSuccess()
            && own.equals(c.ownDigestAtLastSuccess());
    return !staleSinceRound;
  }

  /**
   * The members to start rounds with now.
   *
   * @param own this agent's current digest
   * @param candidates the other members (not this agent)
   * @param nowMillis the caller's clock
   * @param lastGossipMillis when the caller last started a gossip round (0 = never)
   * @param random tie-breaking
   */
  public List<Pick> choose(
      PartitionDigest own,
      List<Candidate> candidates,
      long nowMillis,
      long lastGossipMillis,
      RandomGenerator random) {
    List<Candidate> shuffled = new ArrayList<>(candidates);
    // Fisher-Yates with the caller's generator (Collections.shuffle takes only java.util.Random).
    for (int i = shuffled.size() - 1; i > 0; i--) {
      Collections.swap(shuffled, i, random.nextInt(i + 1));
    }
    shuffled.sort(Comparator.comparingLong(Candidate::lastAttemptMillis)); // stable: ties random
    List<Pick> picks = new ArrayList<>();
    List<Candidate> rest = new ArrayList<>();
    for (Candidate c : shuffled) {
      if (picks.size() < fanout && looksDifferent(own, c)) {
        picks.add(new Pick(c.id(), Reason.DIFFERS));
      } else {
        rest.add(c);
      }
    }
    boolean gossipDue =
        lastGossipMillis <= 0 || nowMillis - lastGossipMillis >= gossipIntervalMillis;
    if (gossipDue && !rest.isEmpty()) {
      picks.add(new Pick(rest.get(0).id(), Reason.GOSSIP));
    }
    return picks;
  }
}
