package dev.reconcile.agent;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses durations such as {@code 0}, {@code 250ms}, {@code 30s}, {@code 5m}, {@code 2h}, {@code
 * 7d} or ISO-8601.
 */
public final class Durations {
  private static final Pattern SIMPLE = Pattern.compile("(\\d+)(ms|s|m|h|d)?");

  private Durations() {}

  public static Duration parse(String s) {
    String t = s.trim();
    Matcher m = SIMPLE.matcher(t);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      String u = m.group(2) == null ? (n == 0 ? "s" : null) : m.group(2);
      if (u == null) {
        throw new IllegalArgumentException("duration '" + s + "' needs a unit (ms, s, m, h, d)");
      }
      return switch (u) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
    try {
      return Duration.parse(t);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "'" + s + "' is not a duration (examples: 0, 250ms, 30s, 5m, 2h, 7d)");
    }
  }

  public static String format(Duration d) {
    long ms = d.toMillis();
    if (ms == 0) {
      return "0";
    }
    if (ms % 86_400_000 == 0) {
      return ms / 86_400_000 + "d";
    }
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }
}
