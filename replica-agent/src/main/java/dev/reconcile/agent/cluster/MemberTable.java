package dev.reconcile.agent.cluster;

import dev.reconcile.agent.RoundReport;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What this agent knows about the other members beyond their published entries: when it last
 * started a round with each, the last round and the last successful one, the recent rounds, and
 * members that joined or left. Keyed by cluster-manager node id (a restarted agent is a new member
 * with a fresh history). Thread-safe: the scheduler, the HTTP API and the cluster manager's
 * listener threads use it.
 */
final class MemberTable {
  static final int RECENT_ROUNDS = 512;
  static final int DEPARTED = 32;

  /** One finished round, as served by {@code GET /cluster}. */
  record Round(
      long at,
      String member,
      String nodeId,
      String peer,
      PeerChoice.Reason reason,
      boolean ok,
      String error,
      long durationMillis,
      long protocolBytes,
      long recordsSent,
      long recordsReceived,
      long recordBytes,
      String peerNodeId) {
    JsonObject toJson() {
      return new JsonObject()
          .put("at", at)
          .put("member", member)
          .put("nodeId", nodeId)
          .put("peer", peer)
          .put("reason", reason.name().toLowerCase(java.util.Locale.ROOT))
          .put("ok", ok)
          .put("error", error)
          .put("durationMillis", durationMillis)
          .put("protocolBytes", protocolBytes)
          .put("recordsSent", recordsSent)
          .put("recordsReceived", recordsReceived)
          .put("recordBytes", recordBytes)
          .put("peerNodeId", peerNodeId);
    }
  }

  private static final class State {
    long lastAttemptMillis;
    long seqAtLastSuccess = -1;
    PartitionDigest ownAfterLastSuccess;
    Round last;
    Round lastSuccess;
    long joinedAtMillis;
  }

  private record Departure(String member, String nodeId, long atMillis) {}

  private final Map<String, State> states = new HashMap<>();
  private final ArrayDeque<Round> recent = new ArrayDeque<>();
  private final ArrayDeque<Departure> departed = new ArrayDeque<>();
  private final Map<String, String> nodeIdOf = new HashMap<>();

  /** Candidates for {@link PeerChoice}: entries of other members of this cluster id. */
  synchronized List<PeerChoice.Candidate> candidates(
      Map<String, MemberInfo> entries, String self, String clusterId) {
    List<PeerChoice.Candidate> out = new ArrayList<>();
    for (MemberInfo m : entries.values()) {
      if (m.member().equals(self) || !m.clusterId().equals(clusterId)) {
        continue;
      }
      State s = states.computeIfAbsent(m.member(), k -> new State());
      out.add(
          new PeerChoice.Candidate(
              m.member(),
              m.digest(),
              m.seq(),
              s.lastAttemptMillis,
              s.seqAtLastSuccess,
              s.ownAfterLastSuccess));
    }
    return out;
  }

  /**
   * Remembers the node id each other live member of this cluster id published in {@code entries}.
   */
  synchronized void named(
      Map<String, MemberInfo> entries, Set<String> live, String self, String clusterId) {
    for (MemberInfo m : entries.values()) {
      if (!m.member().equals(self)
          && live.contains(m.member())
          && m.clusterId().equals(clusterId)) {
        nodeIdOf.put(m.member(), m.nodeId());
      }
    }
  }

  synchronized void attempt(String member, long nowMillis) {
    states.computeIfAbsent(member, k -> new State()).lastAttemptMillis = nowMillis;
  }

  synchronized Round finished(
      MemberInfo m,
      PeerChoice.Reason reason,
      RoundReport rep,
      long seqAtStart,
      PartitionDigest ownAfter) {
    long bytes = rep.stats == null ? 0 : rep.stats.protocolBytes();
    Round r =
        new Round(
            rep.startedAtMillis > 0 ? rep.startedAtMillis : System.currentTimeMillis(),
            m.member(),
            m.nodeId(),
            m.peer().toString(),
            reason,
            rep.ok,
            rep.error,
            rep.durationMillis,
            bytes,
            rep.recordsSent,
            rep.recordsReceived,
            rep.recordBytesSent + rep.recordBytesReceived,
            rep.peerNodeId);
    State s = states.computeIfAbsent(m.member(), k -> new State());
    s.last = r;
    if (rep.ok) {
      s.lastSuccess = r;
      s.seqAtLastSuccess = seqAtStart;
      s.ownAfterLastSuccess = ownAfter;
    }
    recent.addLast(r);
    while (recent.size() > RECENT_ROUNDS) {
      recent.removeFirst();
    }
    return r;
  }

  synchronized void joined(String member, long nowMillis) {
    states.computeIfAbsent(member, k -> new State()).joinedAtMillis = nowMillis;
  }

  /** The cluster manager reported {@code member} gone; returns its node id if it published one. */
  synchronized String left(String member, long nowMillis) {
    depart(member, nowMillis);
    for (Departure d : departed) {
      if (d.member().equals(member)) {
        return d.nodeId();
      }
    }
    return null;
  }

  /**
   * Drops the state of members no longer in {@code live}; those not yet reported gone are recorded
   * as departed now (the member list can change before the leave event arrives).
   */
  synchronized void retain(Set<String> live, long nowMillis) {
    for (String m : new ArrayList<>(nodeIdOf.keySet())) {
      if (!live.contains(m)) {
        depart(m, nowMillis);
      }
    }
    states.keySet().retainAll(live);
  }

  private void depart(String member, long nowMillis) {
    String node = nodeIdOf.remove(member);
    states.remove(member);
    for (Departure d : departed) {
      if (d.member().equals(member)) {
        return; // already recorded
      }
    }
    departed.addLast(new Departure(member, node, nowMillis));
    while (departed.size() > DEPARTED) {
      departed.removeFirst();
    }
  }

  /** The member's round history for {@code GET /cluster}. */
  synchronized JsonObject roundsOf(String member) {
    State s = states.get(member);
    JsonObject j = new JsonObject();
    if (s == null) {
      return j;
    }
    if (s.last != null) {
      j.put("lastRound", s.last.toJson());
    }
    if (s.lastSuccess != null) {
      j.put("lastSuccessAt", s.lastSuccess.at());
    }
    if (s.joinedAtMillis > 0) {
      j.put("joinedAt", s.joinedAtMillis);
    }
    return j;
  }

  /** The last {@code n} rounds, newest last. */
  synchronized JsonArray recent(int n) {
    JsonArray a = new JsonArray();
    int skip = Math.max(0, recent.size() - n);
    for (Round r : recent) {
      if (skip-- > 0) {
        continue;
      }
      a.add(r.toJson());
    }
    return a;
  }

  synchronized JsonArray departed() {
    JsonArray a = new JsonArray();
    for (Departure d : departed) {
      a.add(
          new JsonObject()
              .put("member", d.member())
              .put("nodeId", d.nodeId())
              .put("leftAt", d.atMillis()));
    }
    return a;
  }
}
