package dev.reconcile.agent;

import java.time.Duration;

/**
 * Faults a test or the replay runner injects into one agent; never read from a config file or a
 * command-line flag, so a production agent cannot be started with them. Passed to {@link
 * ReplicaAgent#start(AgentConfig, dev.reconcile.core.EstimatorFactory, AgentTestHooks)}.
 *
 * @param clockOffset added to this agent's wall clock before it feeds the hybrid logical clock
 *     (clock skew between replicas), within +-{@link #MAX_CLOCK_OFFSET}
 * @param estimatorScale multiplies every difference estimate the agent computes, in (0, 1000]:
 *     below 1 forces too-small first tables (doublings), far below with a small largest table
 *     forces the digest-list fallback; the sketches and the wire form are unchanged
 */
public record AgentTestHooks(Duration clockOffset, double estimatorScale) {
  /** Largest clock offset either way (a day: far beyond any {@code max-clock-skew} in use). */
  public static final Duration MAX_CLOCK_OFFSET = Duration.ofDays(1);

  /** No injected fault: the agent as it runs in production (declared after its bound). */
  public static final AgentTestHooks NONE = new AgentTestHooks(Duration.ZERO, 1.0);

  public AgentTestHooks {
    if (clockOffset == null || clockOffset.abs().compareTo(MAX_CLOCK_OFFSET) > 0) {
      throw new IllegalArgumentException(
          "clock offset " + clockOffset + " outside +-" + MAX_CLOCK_OFFSET);
    }
    if (!(estimatorScale > 0 && estimatorScale <= 1000)) {
      throw new IllegalArgumentException(
          "estimator scale " + estimatorScale + " outside (0, 1000]");
    }
  }

  public AgentTestHooks withClockOffset(Duration offset) {
    return new AgentTestHooks(offset, estimatorScale);
  }

  public AgentTestHooks withEstimatorScale(double scale) {
    return new AgentTestHooks(clockOffset, scale);
  }

  /** True when no fault is injected. */
  public boolean none() {
    return clockOffset.isZero() && estimatorScale == 1.0;
  }
}
