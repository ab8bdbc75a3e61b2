package dev.reconcile.estimator;

import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.wire.Estimator;

/**
 * The checks every estimator kind makes first on a remote {@link Estimator}, in this order: format
 * version, kind, hash id, seed fingerprint. Each message names the remote value and the local one.
 */
final class EstimatorHeader {
  private EstimatorHeader() {}

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
