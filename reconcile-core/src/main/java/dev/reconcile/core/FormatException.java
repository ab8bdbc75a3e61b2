package dev.reconcile.core;

/** A serialized sketch or message is malformed, of a wrong version, or exceeds a cap. */
public class FormatException extends Exception {
  public FormatException(String message) {
    super(message);
  }

  public FormatException(String message, Throwable cause) {
    super(message, cause);
  }
}
