package dev.reconcile.cli;

import java.io.PrintWriter;

/**
 * A one-line progress indicator on stderr, redrawn with {@code \r} at most five times a second.
 * Only enabled when stderr is a terminal ({@code System.console() != null}), so redirected or
 * captured stderr never sees it.
 */
final class Progress {
  private static final long INTERVAL_NANOS = 200_000_000L;
  private final PrintWriter err;
  private final boolean enabled;
  private long last = System.nanoTime();
  private int shown;

  Progress(PrintWriter err, boolean enabled) {
    this.err = err;
    this.enabled = enabled;
  }

  @SuppressWarnings("SystemConsoleNull") // Java 17: null when not a terminal
  static Progress forTerminal(PrintWriter err) {
    return new Progress(err, System.console() != null);
  }

  static Progress none() {
    return new Progress(null, false);
  }

  /** Cheap enough to call per record: checks the clock every 4096 calls. */
  void reading(String label, long records, long bytes) {
    if (!enabled || (records & 4095) != 0) {
      return;
    }
    long now = System.nanoTime();
    if (now - last < INTERVAL_NANOS) {
      return;
    }
    last = now;
    String s =
        String.format("reading %s: %,d records, %.1f MiB", label, records, bytes / 1048576.0);
    err.print("\r" + s + " ".repeat(Math.max(0, shown - s.length())));
    err.flush();
    shown = s.length();
  }

  /** Erases the line, if one was drawn. */
  void clear() {
    if (enabled && shown > 0) {
      err.print("\r" + " ".repeat(shown) + "\r");
      err.flush();
      shown = 0;
    }
  }
}
