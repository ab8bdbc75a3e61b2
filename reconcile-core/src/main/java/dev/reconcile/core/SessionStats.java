package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;

/** Byte and event counters of one session, by kind of message. Frames include the 4-byte header. */
public final class SessionStats {
  long bytesSent;
  long bytesReceived;
  long framesSent;
  long framesReceived;
  long handshakeBytes;
  long fingerprintBytes;
  long estimatorBytes;
  long ibltBytes;
  long digestBytes;
  long resultBytes;
  long symbolBytes;
  long recordBytes;
  long repairBytes;
  long verifyBytes;
  int fastPath;
  int decodeFailures;
  int doublings;
  int fallbacks;
  int splits;
  int unverified;
  int checkedByFingerprint;
  int roundTrips;
  long ibltCells;

  void sent(Envelope e) {
    long n = e.getSerializedSize() + 4L;
    bytesSent += n;
    framesSent++;
    account(e, n);
  }

  void received(Envelope e) {
    long n = e.getSerializedSize() + 4L;
    bytesReceived += n;
    framesReceived++;
    account(e, n);
  }

  private void account(Envelope e, long n) {
    switch (e.getBodyCase()) {
      case HELLO, HELLO_ACK, REFUSAL, DONE -> handshakeBytes += n;
      case SYMBOLS, SYMBOL_REQUEST, RATELESS_FALLBACK -> symbolBytes += n;
      case FINGERPRINTS -> fingerprintBytes += n;
      case VERIFY_DIGEST, VERIFY_REPLY -> verifyBytes += n;
      case RECORD_REQUEST -> resultBytes += n;
      case ESTIMATOR -> estimatorBytes += n;
      case IBLT, IBLT_REQUEST -> ibltBytes += n;
      case DIGEST_CHUNK, DIGEST_REQUEST -> digestBytes += n;
      case MISSING -> resultBytes += n;
      case RECORD_BATCH, ROW_BATCH -> recordBytes += n;
      case RECORD_ACK, REPAIR_END -> repairBytes += n;
      default -> {}
    }
  }

  public long bytesSent() {
    return bytesSent;
  }

  public long bytesReceived() {
    return bytesReceived;
  }

  /** Every byte both ways, record batches included. */
  public long bytesTotal() {
    return bytesSent + bytesReceived;
  }

  /** Every byte both ways except the record batches of the repair stream. */
  public long protocolBytes() {
    return bytesTotal() - recordBytes;
  }

  /** Bytes of the rateless mode's symbol chunks and requests, both ways. */
  public long symbolBytes() {
    return symbolBytes;
  }

  /** Bytes of the repair stream's record batches, both ways. */
  public long recordBytes() {
    return recordBytes;
  }

  /** Bytes of the repair stream's acknowledgements and ends, both ways. */
  public long repairBytes() {
    return repairBytes;
  }

  /** Bytes of the closing fingerprints, both ways. */
  public long verifyBytes() {
    return verifyBytes;
  }

  public long framesSent() {
    return framesSent;
  }

  public long framesReceived() {
    return framesReceived;
  }

  public long handshakeBytes() {
    return handshakeBytes;
  }

  public long fingerprintBytes() {
    return fingerprintBytes;
  }

  public long estimatorBytes() {
    return estimatorBytes;
  }

  public long ibltBytes() {
    return ibltBytes;
  }

  public long digestBytes() {
    return digestBytes;
  }

  public long resultBytes() {
    return resultBytes;
  }

  public int fastPath() {
    return fastPath;
  }

  public int decodeFailures() {
    return decodeFailures;
  }

  public int doublings() {
    return doublings;
  }

  public int fallbacks() {
    return fallbacks;
  }

  /**
   * Rateless group streams this side split into streams of their partitions (estimate too large).
   */
  public int splits() {
    return splits;
  }

  /** Cells of every IBLT this side sent or received (each table counted once). */
  public long ibltCells() {
    return ibltCells;
  }

  /**
   * Listed elements this side's own set contradicted (a wrong decode, a lying peer, or a write
   * during the session); dropped, never acted on. Elements a peer asks records for are checked by
   * the repair stream instead ({@link RepairStats#listedNotFound}).
   */
  public int unverified() {
    return unverified;
  }

  /**
   * Partitions whose decoded lists this side checked against the peer's snapshot fingerprint
   * instead of looking each element up (RatelessExchange, "checking a decode").
   */
  public int checkedByFingerprint() {
    return checkedByFingerprint;
  }

  /**
   * Round trips of the protocol's longest dependency chain: hello, fingerprints (answered with the
   * estimator), then one per table or digest list a partition needed. Partitions proceed in
   * parallel.
   */
  public int roundTrips() {
    return roundTrips;
  }

  @Override
  public String toString() {
    return String.format(
        "bytes sent=%d received=%d (handshake=%d fingerprints=%d estimator=%d iblt=%d digests=%d"
            + " results=%d) fastPath=%d decodeFailures=%d doublings=%d fallbacks=%d splits=%d"
            + " unverified=%d checkedByFingerprint=%d roundTrips=%d",
        bytesSent,
        bytesReceived,
        handshakeBytes,
        fingerprintBytes,
        estimatorBytes,
        ibltBytes,
        digestBytes,
        resultBytes,
        fastPath,
        decodeFailures,
        doublings,
        fallbacks,
        splits,
        unverified,
        checkedByFingerprint,
        roundTrips);
  }
}
