package dev.reconcile.cli.replay;

/**
 * One repair round as the initiator reported it.
 *
 * @param protocolBytes reconciliation bytes both ways (handshake, fingerprints, estimator, IBLTs,
 *     digests)
 * @param recordsMoved records sent plus received
 * @param recordBytes record bytes sent plus received
 * @param difference elements found missing on either side
 */
public record RoundResult(
    String from,
    String to,
    boolean ok,
    String error,
    long protocolBytes,
    long recordsMoved,
    long recordBytes,
    long difference,
    int doublings,
    int fallbacks,
    long millis) {}
