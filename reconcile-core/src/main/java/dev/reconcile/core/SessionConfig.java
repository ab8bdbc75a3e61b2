package dev.reconcile.core;

/**
 * Who this side is and what the session covers.
 *
 * @param partitions the partitions to reconcile, ascending (initiator only; {@code null} = all)
 * @param dryRun initiator: report what differs and stream no records (a session without a {@link
 *     RecordStore} is always a dry run)
 * @param repair how records are streamed after the difference is known
 * @param peerCheck who the peer may claim to be ({@link PeerCheck#ANYONE} when the transport does
 *     not authenticate it)
 * @param pacing how the initiator grants coded symbols in the rateless mode; null to offer the
 *     estimator mode only
 */
public record SessionConfig(
    String clusterId,
    String nodeId,
    long sessionId,
    int[] partitions,
    SessionLimits limits,
    boolean dryRun,
    RepairConfig repair,
    PeerCheck peerCheck,
    RatelessPacing.Config pacing) {
  public SessionConfig {
    if (clusterId == null || clusterId.isEmpty() || nodeId == null || nodeId.isEmpty()) {
      throw new IllegalArgumentException("cluster id and node id are required");
    }
    if (limits == null) {
      limits = SessionLimits.DEFAULT;
    }
    if (repair == null) {
      repair = RepairConfig.DEFAULT;
    }
    if (peerCheck == null) {
      peerCheck = PeerCheck.ANYONE;
    }
  }

  public SessionConfig(
      String clusterId,
      String nodeId,
      long sessionId,
      int[] partitions,
      SessionLimits limits,
      boolean dryRun,
      RepairConfig repair) {
    this(
        clusterId,
        nodeId,
        sessionId,
        partitions,
        limits,
        dryRun,
        repair,
        PeerCheck.ANYONE,
        RatelessExchange.PACING);
  }

  public SessionConfig(
      String clusterId, String nodeId, long sessionId, int[] partitions, SessionLimits limits) {
    this(clusterId, nodeId, sessionId, partitions, limits, false, RepairConfig.DEFAULT);
  }

  public static SessionConfig of(String clusterId, String nodeId, long sessionId) {
    return new SessionConfig(clusterId, nodeId, sessionId, null, SessionLimits.DEFAULT);
  }

  public SessionConfig withPartitions(int[] p) {
    return new SessionConfig(
        clusterId, nodeId, sessionId, p, limits, dryRun, repair, peerCheck, pacing);
  }

  public SessionConfig withLimits(SessionLimits l) {
    return new SessionConfig(
        clusterId, nodeId, sessionId, partitions, l, dryRun, repair, peerCheck, pacing);
  }

  /** Initiator: ask for a report only; the peer learns it from the Hello. */
  public SessionConfig withDryRun(boolean d) {
    return new SessionConfig(
        clusterId, nodeId, sessionId, partitions, limits, d, repair, peerCheck, pacing);
  }

  public SessionConfig withRepair(RepairConfig r) {
    return new SessionConfig(
        clusterId, nodeId, sessionId, partitions, limits, dryRun, r, peerCheck, pacing);
  }

  public SessionConfig withPeerCheck(PeerCheck c) {
    return new SessionConfig(
        clusterId, nodeId, sessionId, partitions, limits, dryRun, repair, c, pacing);
  }

  /** The rateless pacing, or null to offer the estimator mode only. */
  public SessionConfig withPacing(RatelessPacing.Config p) {
    return new SessionConfig(
        clusterId, nodeId, sessionId, partitions, limits, dryRun, repair, peerCheck, p);
  }

  public SessionConfig withNodeId(String id) {
    return new SessionConfig(
        clusterId, id, sessionId, partitions, limits, dryRun, repair, peerCheck, pacing);
  }

  public SessionConfig withSessionId(long id) {
    return new SessionConfig(
        clusterId, nodeId, id, partitions, limits, dryRun, repair, peerCheck, pacing);
  }
}
