package dev.reconcile.core;

import dev.reconcile.core.wire.Refusal;

/**
 * Why a session ended without settling.
 *
 * @param byPeer true when the peer refused; false when this side refused the peer or aborted
 */
public record SessionFailure(Refusal.Code code, String message, boolean byPeer) {
  @Override
  public String toString() {
    return code + ": " + message;
  }
}
