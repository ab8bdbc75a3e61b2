package dev.reconcile.cli.replay;

import java.util.List;
import java.util.Locale;

/**
 * What one scenario run did and whether each expectation held.
 *
 * @param rounds repair rounds started (timeline, background excluded, and the runner's settling
 *     rounds)
 * @param convergeMillis from the start of the timeline until every group was seen converged (-1:
 *     never)
 */
public record ScenarioReport(
    String name,
    String mode,
    int replicas,
    long initialRecords,
    long acks,
    List<Check> checks,
    int rounds,
    int failedRounds,
    long protocolBytes,
    long recordsMoved,
    long recordBytes,
    int doublings,
    int fallbacks,
    long convergeMillis,
    long wallMillis) {

  /** One expectation (or an event's expected outcome). */
  public record Check(String name, boolean ok, String detail) {}

  public boolean passed() {
    return !checks.isEmpty() && checks.stream().allMatch(Check::ok);
  }

  public String text() {
    StringBuilder sb = new StringBuilder();
    sb.append(
        String.format(
            Locale.ROOT,
            "scenario %s (%s, %d replicas): %s%n",
            name,
            mode,
            replicas,
            passed() ? "PASS" : "FAIL"));
    sb.append(
        String.format(
            Locale.ROOT,
            "  rounds %d (%d failed), protocol %s, records moved %d (%s), doublings %d, fallbacks %d, converged %s, wall %s%n",
            rounds,
            failedRounds,
            bytes(protocolBytes),
            recordsMoved,
            bytes(recordBytes),
            doublings,
            fallbacks,
            convergeMillis < 0 ? "never" : "after " + millis(convergeMillis),
            millis(wallMillis)));
    for (Check c : checks) {
      sb.append("  [")
          .append(c.ok() ? "ok" : "FAIL")
          .append("] ")
          .append(c.name())
          .append(": ")
          .append(c.detail())
          .append('\n');
    }
    return sb.toString();
  }

  static String bytes(long b) {
    if (b < 1024) {
      return b + " B";
    }
    if (b < 1024 * 1024) {
      return String.format(Locale.ROOT, "%.1f KiB", b / 1024.0);
    }
    return String.format(Locale.ROOT, "%.2f MiB", b / (1024.0 * 1024));
  }

  static String millis(long ms) {
    return ms < 1000 ? ms + " ms" : String.format(Locale.ROOT, "%.2f s", ms / 1000.0);
  }

  /** The header of {@link #markdownRow()}. */
  public static String markdownHeader() {
    return "| scenario | mode | replicas | initial records | acked writes | rounds (failed) | protocol bytes | records moved | record bytes | doublings | fallbacks | time to converge | wall time | result |\n"
        + "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|";
  }

  public String markdownRow() {
    return String.format(
        Locale.ROOT,
        "| %s | %s | %d | %d | %d | %d (%d) | %d | %d | %d | %d | %d | %s | %s | %s |",
        name,
        mode,
        replicas,
        initialRecords,
        acks,
        rounds,
        failedRounds,
        protocolBytes,
        recordsMoved,
        recordBytes,
        doublings,
        fallbacks,
        convergeMillis < 0 ? "never" : millis(convergeMillis),
        millis(wallMillis),
        passed() ? "pass" : "FAIL");
  }
}
