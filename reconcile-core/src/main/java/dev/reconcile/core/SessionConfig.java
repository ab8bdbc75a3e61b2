package dev.reconcile.core;

/**
 * Who this side is and what the session covers.
 *
 * @param partitions the partitions to reconcile, ascending (initiator only; {@code null} = all)
 */
public record SessionConfig(
    String clusterId, String nodeId, long sessionId, int[] partitions, SessionLimits limits) {
  public SessionConfig {
    if (clusterId == null || clusterId.isEmpty() || nodeId == null || nodeId.isEmpty()) {
      throw new IllegalArgumentException("cluster id and node id are required");
    }
    if (limits == null) {
      limits = SessionLimits.DEFAULT;
    }
  }

  public static SessionConfig of(String clusterId, String nodeId, long sessionId) {
    return new SessionConfig(clusterId, nodeId, sessionId, null, SessionLimits.DEFAULT);
  }

  public SessionConfig withPartitions(int[] p) {
    return new SessionConfig(clusterId, nodeId, sessionId, p, limits);
  }
}
