package dev.reconcile.agent.cluster;

import dev.reconcile.agent.HostPort;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

/**
 * What a member publishes through the cluster manager's shared map (key: its cluster-manager node
 * id), refreshed at most once per repair interval: its node id and cluster id, the address of its
 * peer port and of its HTTP API, its {@link PartitionDigest}, its record count, and a sequence
 * number that grows with every publication (so that readers can tell a fresh entry from one they
 * already acted on without comparing clocks).
 *
 * <p>Entries come from the network unauthenticated (Hazelcast's open-source edition has neither TLS
 * nor member authentication): {@link #parse} bounds every field and refuses anything else.
 */
public record MemberInfo(
    String member,
    String nodeId,
    String clusterId,
    HostPort peer,
    HostPort http,
    boolean httpTls,
    PartitionDigest digest,
    long records,
    long seq,
    long publishedAtMillis) {

  /** Largest serialized entry accepted. */
  public static final int MAX_JSON_CHARS = 2048;

  /** The JSON stored in the shared map. */
  public String toJson() {
    return new JsonObject()
        .put("v", 1)
        .put("member", member)
        .put("nodeId", nodeId)
        .put("clusterId", clusterId)
        .put("peer", peer.toString())
        .put("http", http.toString())
        .put("httpTls", httpTls)
        .put("digest", digest.encode())
        .put("records", records)
        .put("seq", seq)
        .put("publishedAt", publishedAtMillis)
        .encode();
  }

  /**
   * Parses an entry published under {@code member}; throws {@link IllegalArgumentException} naming
   * the field for anything malformed, oversized or published under another member's key.
   */
  public static MemberInfo parse(String member, Object raw) {
    if (!(raw instanceof String s)) {
      throw new IllegalArgumentException(
          "entry is a " + (raw == null ? "null" : raw.getClass().getSimpleName()) + ", not JSON");
    }
    if (s.length() > MAX_JSON_CHARS) {
      throw new IllegalArgumentException(
          "entry of " + s.length() + " characters (max " + MAX_JSON_CHARS + ")");
    }
    JsonObject j;
    try {
      j = new JsonObject(s);
    } catch (DecodeException e) {
      throw new IllegalArgumentException("entry is not a JSON object", e);
    }
    try {
      if (j.getInteger("v", -1) != 1) {
        throw new IllegalArgumentException("entry version " + j.getValue("v") + " (reads 1)");
      }
      String m = text(j, "member", 64);
      if (!m.equals(member)) {
        throw new IllegalArgumentException("entry for member " + m + " under key " + member);
      }
      String node = text(j, "nodeId", 64);
      if (!node.matches("[A-Za-z0-9._-]{1,64}")) {
        throw new IllegalArgumentException("nodeId is not 1-64 characters of A-Z a-z 0-9 . _ -");
      }
      return new MemberInfo(
          m,
          node,
          text(j, "clusterId", 256),
          HostPort.parse(text(j, "peer", 300)),
          HostPort.parse(text(j, "http", 300)),
          Boolean.TRUE.equals(j.getBoolean("httpTls", false)),
          PartitionDigest.decode(text(j, "digest", 400)),
          nonNegative(j, "records"),
          nonNegative(j, "seq"),
          nonNegative(j, "publishedAt"));
    } catch (ClassCastException e) {
      throw new IllegalArgumentException("entry field of the wrong type: " + e.getMessage(), e);
    }
  }

  private static String text(JsonObject j, String field, int max) {
    String s = j.getString(field);
    if (s == null || s.isEmpty()) {
      throw new IllegalArgumentException("entry without " + field);
    }
    if (s.length() > max) {
      throw new IllegalArgumentException(field + " longer than " + max + " characters");
    }
    return s;
  }

  private static long nonNegative(JsonObject j, String field) {
    Long v = j.getLong(field);
    if (v == null || v < 0) {
      throw new IllegalArgumentException(field + " missing or negative");
    }
    return v;
  }
}
