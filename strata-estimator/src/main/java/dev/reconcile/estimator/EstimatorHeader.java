package dev.reconcile.estimator;

import com.google.protobuf.CodedOutputStream;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.wire.Estimator;

/**
 * What every estimator kind shares about its {@link Estimator} message: the checks it makes first
 * on a remote one, in this order (format version, kind, hash id, seed fingerprint; each message
 * names the remote value and the local one), and its size on the wire.
 */
final class EstimatorHeader {
  private EstimatorHeader() {}

  /**
   * Bytes of the message {@code header} with {@code cellBytes} bytes of cells, computed without
   * serializing the cells.
   */
  static long wireBytes(Estimator.Builder header, long cellBytes) {
    int len = Math.toIntExact(cellBytes);
    return header.build().getSerializedSize()
        + CodedOutputStream.computeTagSize(Estimator.CELLS_FIELD_NUMBER)
        + CodedOutputStream.computeUInt32SizeNoTag(len)
        + (long) len;
  }

  static void check(Estimator remote, int formatVersion, int kind, String kindName, HashSpec spec)
      throws FormatException {
    if (remote.getFormatVersion() != formatVersion) {
      throw new FormatException(
          "estimator format version "
              + Integer.toUnsignedString(remote.getFormatVersion())
              + ", this peer reads "
              + formatVersion);
    }
    if (remote.getParams().getKind() != kind) {
      throw new FormatException(
          "estimator kind "
              + Integer.toUnsignedString(remote.getParams().getKind())
              + ", this peer reads kind "
              + kind
              + " ("
              + kindName
              + ")");
    }
    if (remote.getHashId() != spec.id()) {
      throw new FormatException(
          "estimator hash id "
              + Integer.toUnsignedString(remote.getHashId())
              + ", this peer uses hash id "
              + spec.id());
    }
    if (remote.getSeedFingerprint() != spec.seedFingerprint()) {
      throw new FormatException(
          "estimator seed fingerprint "
              + HashSpec.hex(remote.getSeedFingerprint())
              + ", this peer has "
              + HashSpec.hex(spec.seedFingerprint())
              + " (possible corruption or another seed)");
    }
  }
}
