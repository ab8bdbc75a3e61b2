package dev.reconcile.agent.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ReceiveLimiterTest {
  private static final long RATE = 100_000;

  @Test
  void oneSecondOfBurstThenPausesThatRefillTheDebt() {
    AtomicLong nanos = new AtomicLong(1_000_000_000L);
    ReceiveLimiter l = new ReceiveLimiter(RATE, nanos::get);
    assertThat(l.take(60_000)).isZero();
    assertThat(l.take(40_000)).isZero();
    assertThat(l.take(50_000)).isEqualTo(500); // 50 000 bytes of debt at 100 000 B/s
    nanos.addAndGet(500_000_000L);
    assertThat(l.take(0)).isZero();
    nanos.addAndGet(10_000_000_000L); // idle for long: at most one second is saved up
    assertThat(l.take(RATE)).isZero();
    assertThat(l.take(1)).isEqualTo(1);
    assertThatThrownBy(() -> new ReceiveLimiter(0, nanos::get))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * A reader that obeys the pauses reads at most {@code rate * (t + 1) + one chunk} bytes in t
   * seconds, and no less than 95 % of {@code rate * t} when the peer always has more to send.
   */
  @Test
  void anObedientReaderStaysWithinTheRate() {
    long seed = 20261201L;
    SplittableRandom rnd = new SplittableRandom(seed);
    AtomicLong nanos = new AtomicLong();
    ReceiveLimiter l = new ReceiveLimiter(RATE, nanos::get);
    long read = 0;
    long maxChunk = 65_536;
    while (nanos.get() < 60_000_000_000L) {
      long chunk = 1 + rnd.nextLong(maxChunk);
      read += chunk;
      long pauseMs = l.take(chunk);
      nanos.addAndGet(pauseMs * 1_000_000L + rnd.nextLong(2_000_000L)); // + reading time
      double t = nanos.get() / 1e9;
      assertThat((double) read)
          .as("seed %d at %.3f s", seed, t)
          .isLessThanOrEqualTo(RATE * (t + 1) + maxChunk);
    }
    assertThat((double) read).as("seed %d", seed).isGreaterThan(RATE * 60 * 0.95);
  }
}
