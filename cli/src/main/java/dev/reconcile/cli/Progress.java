package dev.reconcile.cli;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A one-line progress indicator on stderr, redrawn with {@code \r} at most five times a second.
 * Only enabled when stderr is a terminal ({@code System.console() != null}), so redirected or
 * captured stderr never sees it. Safe to call from the threads that read the two sides at once: the
 * line shows every input being read.
 */
final class Progress {
  private static final long INTERVAL_NANOS = 200_000_000L;
  private final PrintWriter err;
  private final boolean enabled;
  private final Map<String, String> inputs = new LinkedHashMap<>();
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

  /** Cheap enough to call per record: looks further only every 4096 records. */
  void reading(String label, long records, long bytes) {
    if (!enabled || (records & 4095) != 0) {
      return;
    }
    report(label, records, bytes);
  }

  /** For callers that report once per block of records. */
  void report(String label, long records, long bytes) {
    if (!enabled) {
      return;
    }
    synchronized (this) {
      inputs.put(
          label, String.format("%s: %,d records, %.1f MiB", label, records, bytes / 1048576.0));
      long now = System.nanoTime();
      if (now - last < INTERVAL_NANOS) {
        return;
      }
      last = now;
      String s = "reading " + String.join("; ", inputs.values());
      err.print("\r" + s + " ".repeat(Math.max(0, shown - s.length())));
      err.flush();
      shown = s.length();
    }
  }

  /** {@code label} is read: drops it from the line, and erases the line when nothing is left. */
  synchronized void finished(String label) {
    inputs.remove(label);
    if (inputs.isEmpty()) {
      clear();
    }
  }

  /** Erases the line, if one was drawn. */
  synchronized void clear() {
    inputs.clear();
    if (enabled && shown > 0) {
      err.print("\r" + " ".repeat(shown) + "\r");
      err.flush();
      shown = 0;
    }
  }
}
