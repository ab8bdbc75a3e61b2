package dev.reconcile.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RoundWorkerTest {
  private final ExecutorService pool = RoundWorker.pool();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  @Test
  void runsOneRoundsTasksOneAtATimeInOrderUnderTheRoundsName() throws Exception {
    RoundWorker w = new RoundWorker(pool, "round-to-peer");
    List<Integer> seen = new ArrayList<>();
    AtomicInteger running = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    List<String> names = new ArrayList<>();
    CountDownLatch done = new CountDownLatch(1);
    for (int i = 0; i < 2000; i++) {
      int n = i;
      w.execute(
          () -> {
            if (running.incrementAndGet() > 1) {
              overlaps.incrementAndGet();
            }
            seen.add(n); // unsynchronized on purpose: the worker runs one task at a time
            if (n % 500 == 0) {
              names.add(Thread.currentThread().getName());
            }
            running.decrementAndGet();
            if (n == 1999) {
              done.countDown();
            }
          });
    }
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(overlaps.get()).isZero();
    assertThat(seen).hasSize(2000);
    for (int i = 0; i < 2000; i++) {
      assertThat(seen.get(i)).isEqualTo(i);
    }
    assertThat(names).containsOnly("round-to-peer");
    // Idle again, the pooled thread takes back its own name.
    String[] after = new String[1];
    CountDownLatch probe = new CountDownLatch(1);
    Thread.sleep(50);
    pool.execute(
        () -> {
          after[0] = Thread.currentThread().getName();
          probe.countDown();
        });
    assertThat(probe.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(after[0]).startsWith("idle-round-worker-");
  }

  @Test
  void twoRoundsRunAtOnceOnThePool() throws Exception {
    RoundWorker a = new RoundWorker(pool, "round-to-a");
    RoundWorker b = new RoundWorker(pool, "round-to-b");
    CountDownLatch both = new CountDownLatch(2);
    CountDownLatch finished = new CountDownLatch(2);
    Runnable meet =
        () -> {
          both.countDown();
          try {
            if (both.await(10, TimeUnit.SECONDS)) {
              finished.countDown();
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        };
    a.execute(meet);
    b.execute(meet);
    assertThat(finished.await(15, TimeUnit.SECONDS)).as("a round waits for no other").isTrue();
  }

  @Test
  void aFailedTaskDoesNotStopTheNextAndShutdownRejectsOnlyLaterTasks() throws Exception {
    RoundWorker w = new RoundWorker(pool, "round-from-peer");
    CountDownLatch gate = new CountDownLatch(1);
    AtomicInteger ran = new AtomicInteger();
    w.execute(
        () -> {
          try {
            gate.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    w.execute(
        () -> {
          throw new IllegalStateException("a step failed");
        });
    CountDownLatch last = new CountDownLatch(1);
    w.execute(
        () -> {
          ran.incrementAndGet();
          last.countDown();
        });
    w.shutdown();
    assertThatThrownBy(() -> w.execute(ran::incrementAndGet))
        .isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("round round-from-peer has ended");
    gate.countDown();
    assertThat(last.await(10, TimeUnit.SECONDS)).as("queued before shutdown: still runs").isTrue();
    Thread.sleep(50);
    assertThat(ran.get()).isEqualTo(1);
  }
}
