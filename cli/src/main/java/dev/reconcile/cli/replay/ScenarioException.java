package dev.reconcile.cli.replay;

/** A scenario that cannot be parsed or run; the message names the file and the field. */
public final class ScenarioException extends RuntimeException {
  public ScenarioException(String message) {
    super(message);
  }

  public ScenarioException(String message, Throwable cause) {
    super(message, cause);
  }
}
