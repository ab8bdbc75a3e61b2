package dev.reconcile.cli;

/**
 * A failure the user can act on: missing or corrupt input, bad arguments. Reported as one line
 * {@code reconcile: MESSAGE} on stderr with exit status 2 (diff(1)'s "trouble").
 */
final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  CliException(String message) {
    super(message);
  }

  CliException(String message, Throwable cause) {
    super(message, cause);
  }
}
