package dev.reconcile.agent.net;

import java.util.function.LongSupplier;

/**
 * A token bucket over the bytes read from one peer connection ({@code receive-rate-limit}): {@code
 * rate} tokens per second, at most one second's worth saved up. Reading never waits for tokens:
 * every chunk the socket delivers is taken at once and may leave the bucket in debt, and the caller
 * then pauses the socket for the time the debt takes to refill ({@link #take} returns it). So over
 * any interval of t seconds at most {@code rate * (t + 1) + one chunk} bytes are read.
 *
 * <p>Not thread-safe: used on the connection's event loop only.
 */
final class ReceiveLimiter {
  private final long rate;
  private final LongSupplier nanos;
  private double tokens;
  private long atNanos;

  ReceiveLimiter(long bytesPerSecond, LongSupplier nanos) {
    if (bytesPerSecond <= 0) {
      throw new IllegalArgumentException("rate " + bytesPerSecond + " must be positive");
    }
    this.rate = bytesPerSecond;
    this.nanos = nanos;
    this.tokens = bytesPerSecond;
    this.atNanos = nanos.getAsLong();
  }

  /**
   * Takes {@code bytes} just read; returns how many milliseconds reading must pause for the bucket
   * to be out of debt again (0 when it is not in debt).
   */
  long take(long bytes) {
    long now = nanos.getAsLong();
    tokens = Math.min(rate, tokens + (now - atNanos) * (double) rate / 1e9);
    atNanos = now;
    tokens -= bytes;
    return tokens >= 0 ? 0 : (long) Math.ceil(-tokens * 1000 / rate);
  }
}
