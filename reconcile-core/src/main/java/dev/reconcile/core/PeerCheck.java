package dev.reconcile.core;

/**
 * A transport's word on who the peer may be: called in the handshake with the node id the peer
 * claims, before anything else is exchanged. The agent checks it against the names of the peer's
 * TLS certificate, so that a certificate issued for one node cannot be used to speak for another.
 */
@FunctionalInterface
public interface PeerCheck {
  /** Accepts everyone. */
  PeerCheck ANYONE = nodeId -> null;

  /**
   * Null when {@code claimedNodeId} is acceptable, else why not (sent in an UNAUTHORIZED refusal).
   */
  String refusal(String claimedNodeId);
}
