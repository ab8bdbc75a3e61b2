package dev.reconcile.agent.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class HybridClockTest {
  @Test
  void followsTheWallClockAndCountsWithinAMillisecond() {
    AtomicLong ms = new AtomicLong(1000);
    HybridClock c = new HybridClock(ms::get);
    long v1 = c.now();
    assertThat(HybridClock.physicalMillis(v1)).isEqualTo(1000);
    assertThat(HybridClock.logical(v1)).isZero();
    long v2 = c.now();
    assertThat(v2).isEqualTo(v1 + 1);
    ms.set(1005);
    long v3 = c.now();
    assertThat(v3).isEqualTo(HybridClock.version(1005, 0));
  }

  @Test
  void neverGoesBackwardsWhenTheWallClockDoes() {
    AtomicLong ms = new AtomicLong(5000);
    HybridClock c = new HybridClock(ms::get);
    long v1 = c.now();
    ms.set(10);
    long v2 = c.now();
    assertThat(v2).isGreaterThan(v1);
    assertThat(HybridClock.physicalMillis(v2)).isEqualTo(5000);
  }

  @Test
  void observedRemoteVersionIsExceeded() {
    AtomicLong ms = new AtomicLong(1000);
    HybridClock c = new HybridClock(ms::get);
    long remote = HybridClock.version(9000, 7);
    c.observe(remote);
    assertThat(c.now()).isEqualTo(remote + 1);
    c.observe(HybridClock.version(10, 0)); // an older version changes nothing
    assertThat(c.now()).isEqualTo(remote + 2);
  }

  @Test
  void logicalOverflowCarriesIntoPhysical() {
    HybridClock c = new HybridClock(() -> 1);
    c.observe(HybridClock.version(1, 0xFFFF));
    long v = c.now();
    assertThat(HybridClock.physicalMillis(v)).isEqualTo(2);
    assertThat(HybridClock.logical(v)).isZero();
  }

  @Test
  void concurrentCallersGetDistinctIncreasingVersions() throws Exception {
    HybridClock c = new HybridClock(() -> 77);
    ConcurrentHashMap<Long, Boolean> seen = new ConcurrentHashMap<>();
    Thread[] ts = new Thread[4];
    for (int t = 0; t < ts.length; t++) {
      ts[t] =
          new Thread(
              () -> {
                long prev = 0;
                for (int i = 0; i < 20_000; i++) {
                  long v = c.now();
                  assertThat(v).isGreaterThan(prev);
                  prev = v;
                  seen.put(v, true);
                }
              });
      ts[t].start();
    }
    for (Thread t : ts) {
      t.join();
    }
    assertThat(seen).hasSize(80_000);
  }
}
