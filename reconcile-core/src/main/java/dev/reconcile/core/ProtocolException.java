package dev.reconcile.core;

import dev.reconcile.core.wire.Refusal;

/** A peer broke the protocol or the parameters differ; carries the refusal code to send. */
public final class ProtocolException extends Exception {
  private final Refusal.Code code;

  public ProtocolException(Refusal.Code code, String message) {
    super(message);
    this.code = code;
  }

  public Refusal.Code code() {
    return code;
  }
}
