package dev.reconcile.cli.replay;

/**
 * One repair round as the initiator reported it.
 *
 * @param protocolBytes the session's frames both ways except the repair stream's record batches
 *     ({@code SessionStats.protocolBytes()}, the agent's {@code reconcile_protocol_bytes_total}):
 *     handshake, fingerprints, estimator, IBLTs or coded symbols, digest lists, results, the
 *     stream's acknowledgements, verification
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
