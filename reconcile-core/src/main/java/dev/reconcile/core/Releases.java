package dev.reconcile.core;

/**
 * Releasing several things (cursors, scans, streams) when releasing one may throw: each release
 * runs, the first exception is kept and the later ones are added to it as suppressed, and it is
 * thrown once everything was released.
 */
final class Releases {
  private Releases() {}

  /**
   * Runs {@code release}; returns {@code first}, or the exception it threw when {@code first} is
   * null (otherwise that exception is suppressed into {@code first}).
   */
  static RuntimeException run(Runnable release, RuntimeException first) {
    try {
      release.run();
      return first;
    } catch (RuntimeException e) {
      if (first == null) {
        return e;
      }
      if (e != first) {
        first.addSuppressed(e);
      }
      return first;
    }
  }

  /** Throws {@code first} when it is not null. */
  static void rethrow(RuntimeException first) {
    if (first != null) {
      throw first;
    }
  }
}
