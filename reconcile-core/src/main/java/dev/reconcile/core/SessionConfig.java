package dev.reconcile.core;

/**
 * Who this side is and what the session covers.
 *
 * @param partitions the partitions to reconcile, ascending (initiator only; {@code null} = all)
 */
public record SessionConfig(
    String clusterId,
    String nodeId,
    long sessionId,
    int[] partitions,
    SessionLimits limits,
    boolean dryRun) {
  public SessionConfig {
    if (clusterId == null || clusterId.isEmpty() || nodeId == null || nodeId.isEmpty()) {
      throw new IllegalArgumentException("cluster id and node id are required");
    }
    if (limits == null) {
      limits = SessionLimits.DEFAULT;
    }
  }

  public SessionConfig(
      String clusterId, String nodeId, long sessionId, int[] partitions, SessionLimits limits) {
    this(clusterId, nodeId, sessionId, partitions, limits, false);
  }

  public static SessionConfig of(String clusterId, String nodeId, long sessionId) {
    return new SessionConfig(clusterId, nodeId, sessionId, null, SessionLimits.DEFAULT, false);
  }

  public SessionConfig withPartitions(int[] p) {
    return new SessionConfig(clusterId, nodeId, sessionId, p, limits, dryRun);
  }

  public SessionConfig withLimits(SessionLimits l) {
    return new SessionConfig(clusterId, nodeId, sessionId, partitions, l, dryRun);
  }

  /** Initiator: ask for a report only; the peer learns it from the Hello. */
  public SessionConfig withDryRun(boolean d) {
    return new SessionConfig(clusterId, nodeId, sessionId, partitions, limits, d);
  }
}
