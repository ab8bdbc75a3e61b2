package dev.reconcile.cli.replay;

import dev.reconcile.agent.AgentTestHooks;
import dev.reconcile.agent.Durations;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The scenario keys that are test hooks ({@link AgentTestHooks}), not agent config keys: a
 * scenario's {@code config} may set {@code clock-offset} and {@code estimator-scale} beside the
 * agent's keys (docs/replay.md); the runner hands them to the agent programmatically, in one JVM,
 * or as arguments of {@code dev.reconcile.cli.HookedAgentMain} in a process or container.
 */
public final class TestHookKeys {
  public static final String CLOCK_OFFSET = "clock-offset";
  public static final String ESTIMATOR_SCALE = "estimator-scale";
  public static final Set<String> KEYS = Set.of(CLOCK_OFFSET, ESTIMATOR_SCALE);

  private TestHookKeys() {}

  /**
   * The hooks set in {@code values} (other keys are ignored); a bad value is an {@link
   * IllegalArgumentException} whose message starts with the key.
   */
  public static AgentTestHooks parse(Map<String, String> values) {
    AgentTestHooks h = AgentTestHooks.NONE;
    String offset = values.get(CLOCK_OFFSET);
    if (offset != null) {
      h = h.withClockOffset(signedDuration(offset.trim()));
    }
    String scale = values.get(ESTIMATOR_SCALE);
    if (scale != null) {
      double x;
      try {
        x = Double.parseDouble(scale.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(ESTIMATOR_SCALE + " '" + scale + "' is not a number", e);
      }
      if (!(x > 0 && x <= 1000)) {
        throw new IllegalArgumentException(ESTIMATOR_SCALE + " " + x + " outside (0, 1000]");
      }
      h = h.withEstimatorScale(x);
    }
    return h;
  }

  /** A duration with an optional leading minus sign ({@code -5s}), within +-1 day. */
  private static Duration signedDuration(String s) {
    boolean negative = s.startsWith("-");
    Duration d;
    try {
      d = Durations.parse(negative ? s.substring(1) : s);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(CLOCK_OFFSET + ": " + e.getMessage(), e);
    }
    if (d.compareTo(AgentTestHooks.MAX_CLOCK_OFFSET) > 0) {
      throw new IllegalArgumentException(
          CLOCK_OFFSET
              + " "
              + s
              + " outside +-"
              + Durations.format(AgentTestHooks.MAX_CLOCK_OFFSET));
    }
    return negative ? d.negated() : d;
  }

  /** The same hooks as arguments {@code --clock-offset D --estimator-scale X} (none when none). */
  public static List<String> args(AgentTestHooks h) {
    if (h.none()) {
      return List.of();
    }
    return List.of(
        "--" + CLOCK_OFFSET,
        (h.clockOffset().isNegative() ? "-" : "") + h.clockOffset().abs().toMillis() + "ms",
        "--" + ESTIMATOR_SCALE,
        Double.toString(h.estimatorScale()));
  }
}
