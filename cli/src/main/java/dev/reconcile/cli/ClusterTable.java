package dev.reconcile.cli;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** {@code reconcile status --cluster}: an agent's {@code GET /cluster} as a table. */
final class ClusterTable {
  private ClusterTable() {}

  static void print(PrintWriter out, JsonObject c) {
    long now = c.getLong("now", System.currentTimeMillis());
    JsonArray members = c.getJsonArray("members", new JsonArray());
    int differ = 0;
    for (int i = 0; i < members.size(); i++) {
      JsonObject m = members.getJsonObject(i);
      if (!m.getBoolean("self", false) && m.getBoolean("differs", false)) {
        differ++;
      }
    }
    JsonObject policy = c.getJsonObject("policy", new JsonObject());
    out.printf(
        "cluster %s as seen by %s: %d members, %d differ from %s; %d partitions;"
            + " fanout %s, repair every %s, gossip every %s, failure timeout %s%n",
        c.getString("clusterName", "?"),
        c.getString("nodeId", "?"),
        members.size(),
        differ,
        c.getString("nodeId", "?"),
        c.getInteger("partitions", 0),
        policy.getValue("fanout"),
        policy.getValue("repairInterval"),
        policy.getValue("gossipInterval"),
        policy.getValue("failureTimeout"));
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "NODE", "PEER", "HTTP", "RECORDS", "DIFFERS IN", "LAST ROUND", "LAST SUCCESS", "PUBLISHED"
        });
    for (int i = 0; i < members.size(); i++) {
      JsonObject m = members.getJsonObject(i);
      boolean self = m.getBoolean("self", false);
      String mark =
          (self ? " *" : "")
              + (m.getString("member", "").equals(c.getString("coordinator")) ? " (c)" : "");
      String node = m.getString("nodeId");
      if (node == null) {
        node = "(no entry) " + m.getString("member", "?");
      }
      if (!m.getBoolean("published", false)) {
        rows.add(new String[] {node + mark, "", "", "", "", "", "", "no"});
        continue;
      }
      String differs;
      if (self) {
        differs = "-";
      } else if (m.getBoolean("differs", false)) {
        differs = partitions(m.getJsonArray("differingPartitions", new JsonArray()));
      } else {
        differs = "none";
      }
      JsonObject last = m.getJsonObject("lastRound");
      String lastRound = "";
      if (last != null) {
        lastRound =
            (last.getBoolean("ok", false) ? "ok " : "FAILED ")
                + ago(now, last.getLong("at", 0L))
                + ", "
                + last.getLong("durationMillis", 0L)
                + " ms, "
                + last.getLong("protocolBytes", 0L)
                + " B";
      }
      Long success = m.getLong("lastSuccessAt");
      rows.add(
          new String[] {
            node + mark,
            m.getString("peer", ""),
            m.getString("http", ""),
            String.format("%,d", m.getLong("records", 0L)),
            differs,
            self ? "-" : lastRound,
            self ? "-" : (success == null ? "never" : ago(now, success)),
            ago(now, m.getLong("publishedAt", 0L))
          });
    }
    table(out, rows);
    out.println(
        "(* = the agent asked; (c) = the coordinator, the cluster manager's oldest member;"
            + " DIFFERS IN = partitions whose published digest differs)");
    if (!c.getBoolean("entriesFresh", true)) {
      out.println(
          "some members did not answer the entry read in time: their last known entries are shown");
    }
    JsonArray departed = c.getJsonArray("departed", new JsonArray());
    if (!departed.isEmpty()) {
      StringBuilder b = new StringBuilder("left:");
      for (int i = Math.max(0, departed.size() - 5); i < departed.size(); i++) {
        JsonObject d = departed.getJsonObject(i);
        String who = d.getString("nodeId");
        b.append(' ')
            .append(who == null ? d.getString("member", "?") : who)
            .append(" (")
            .append(ago(now, d.getLong("leftAt", 0L)))
            .append(')');
      }
      out.println(b);
    }
    JsonArray rounds = c.getJsonArray("rounds", new JsonArray());
    if (!rounds.isEmpty()) {
      int failed = 0;
      long bytes = 0;
      for (int i = 0; i < rounds.size(); i++) {
        JsonObject r = rounds.getJsonObject(i);
        failed += r.getBoolean("ok", false) ? 0 : 1;
        bytes += r.getLong("protocolBytes", 0L);
      }
      out.printf(
          "last %d rounds started here: %d failed, %,d protocol bytes%n",
          rounds.size(), failed, bytes);
    }
    long malformed = c.getLong("malformedEntries", 0L);
    if (malformed > 0) {
      out.printf("%d malformed member entries ignored (see the agent's log)%n", malformed);
    }
  }

  /** Up to 8 partition numbers, then a count. */
  static String partitions(JsonArray ps) {
    StringBuilder b = new StringBuilder();
    int n = Math.min(8, ps.size());
    for (int i = 0; i < n; i++) {
      b.append(i == 0 ? "" : ",").append(ps.getValue(i));
    }
    if (ps.size() > n) {
      b.append(",... (").append(ps.size()).append(')');
    }
    return b.toString();
  }

  static String ago(long now, long t) {
    if (t <= 0) {
      return "never";
    }
    long s = Math.max(0, (now - t) / 1000);
    if (s < 120) {
      return s + "s ago";
    }
    if (s < 7200) {
      return (s / 60) + "m ago";
    }
    return (s / 3600) + "h ago";
  }

  private static void table(PrintWriter out, List<String[]> rows) {
    int cols = rows.get(0).length;
    int[] w = new int[cols];
    for (String[] r : rows) {
      for (int i = 0; i < cols; i++) {
        w[i] = Math.max(w[i], r[i].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < cols; i++) {
        String cell = r[i];
        boolean right = i == 3 && !cell.equals("RECORDS");
        String pad = " ".repeat(w[i] - cell.length());
        b.append(right ? pad + cell : cell + (i == cols - 1 ? "" : pad));
        if (i < cols - 1) {
          b.append("  ");
        }
      }
      out.println(b.toString().stripTrailing());
    }
  }
}
