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
 * @param expectedDifference initiator: the difference it expects (from its last rounds with this
 *     peer), which sizes the rateless streams' first batches; 0 for none
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
    RatelessPacing.Config pacing,
    long expectedDifference) {
  public SessionConfig {
    if (expectedDifference < 0) {
      throw new IllegalArgumentException("expected difference " + expectedDifference + " < 0");
    }
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
        RatelessExchange.PACING,
        0);
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
        clusterId,
        nodeId,
        sessionId,
        p,
        limits,
        dryRun,
        repair,
        peerCheck,
        pacing,
        expectedDifference);
  }

  public SessionConfig withLimits(SessionLimits l) {
    return new SessionConfig(
        clusterId,
        nodeId,
        sessionId,
        partitions,
        l,
        dryRun,
        repair,
        peerCheck,
        pacing,
        expectedDifference);
  }

  /** Initiator: ask for a report only; the peer learns it from the Hello. */
  public SessionConfig withDryRun(boolean d) {
    return new SessionConfig(
        clusterId,
        nodeId,
        sessionId,
        partitions,
        limits,
        d,
        repair,
        peerCheck,
        pacing,
        expectedDifference);
  }

  public SessionConfig withRepair(RepairConfig r) {
    return new SessionConfig(
        clusterId,
        nodeId,
        sessionId,
        partitions,
        limits,
        dryRun,
        r,
        peerCheck,
        pacing,
        expectedDifference);
  }

  public SessionConfig withPeerCheck(PeerCheck c) {
    return new SessionConfig(
        clusterId,
        nodeId,
        sessionId,
        partitions,
        limits,
        dryRun,
        repair,
        c,
        pacing,
        expectedDifference);
  }

  /** The rateless pacing, or null to offer the estimator mode only. */
  public SessionConfig withPacing(RatelessPacing.Config p) {
    return new SessionConfig(
        clusterId,
        nodeId,
        sessionId,
        partitions,
        limits,
        dryRun,
        repair,
        peerCheck,
        p,
        expectedDifference);
  }

  public SessionConfig withNodeId(String id) {
    return new SessionConfig(
        clusterId,
        id,
        sessionId,
        partitions,
        limits,
        dryRun,
        repair,
        peerCheck,
        pacing,
        expectedDifference);
  }

  /** Initiator: the difference it expects, 0 for none (see the record's parameters). */
  public SessionConfig withExpectedDifference(long d) {
    return new SessionConfig(
        clusterId, nodeId, sessionId, partitions, limits, dryRun, repair, peerCheck, pacing, d);
  }

  public SessionConfig withSessionId(long id) {
    return new SessionConfig(
        clusterId,
        nodeId,
        id,
        partitions,
        limits,
        dryRun,
        repair,
        peerCheck,
        pacing,
        expectedDifference);
  }
}
