package dev.reconcile.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CompileSettleTest {
  @Test
  void settlesOnlyAfterAWholeQuietWindow() {
    AtomicLong clock = new AtomicLong(1_000);
    CompileSettle settle = new CompileSettle(clock::get, 3);
    settle.start();
    // Busy rounds: 40 ms of compiling each.
    for (int i = 0; i < 5; i++) {
      clock.addAndGet(40);
      assertThat(settle.roundEnded()).as("busy round %d", i).isFalse();
    }
    // Quiet rounds: the window of 3 still holds busy ones until the third quiet round.
    clock.addAndGet(1);
    assertThat(settle.roundEnded()).isFalse();
    clock.addAndGet(1);
    assertThat(settle.roundEnded()).isFalse();
    clock.addAndGet(1);
    assertThat(settle.roundEnded()).as("three quiet rounds, 3 ms in all").isTrue();
  }

  @Test
  void aWindowNeedsItsStartReading() {
    AtomicLong clock = new AtomicLong(0);
    CompileSettle settle = new CompileSettle(clock::get, 2);
    settle.start();
    assertThat(settle.roundEnded()).as("one round is not a window of two").isFalse();
    assertThat(settle.roundEnded()).isTrue();
  }

  @Test
  void theBoundIsInclusiveAndSpansTheWindow() {
    AtomicLong clock = new AtomicLong(0);
    CompileSettle settle = new CompileSettle(clock::get, 2);
    settle.start();
    clock.addAndGet(CompileSettle.QUIET_MILLIS);
    assertThat(settle.roundEnded()).isFalse();
    assertThat(settle.roundEnded()).as("exactly the bound over the window").isTrue();
    clock.addAndGet(3);
    assertThat(settle.roundEnded()).as("3 ms over the window").isTrue();
    clock.addAndGet(3);
    assertThat(settle.roundEnded()).as("6 ms over the window (3 + 3)").isFalse();
    assertThat(settle.roundEnded()).as("3 ms over the window (3 + 0)").isTrue();
  }

  @Test
  void anUnknownClockNeverSettles() {
    CompileSettle settle = new CompileSettle(() -> -1L, 1);
    assertThat(settle.available()).isFalse();
    settle.start();
    for (int i = 0; i < 10; i++) {
      assertThat(settle.roundEnded()).isFalse();
    }
  }

  @Test
  void thisJvmReportsItsCompileTime() {
    // HotSpot, the JVM the project builds and runs on, keeps the compilers' time.
    CompileSettle settle = CompileSettle.ofThisJvm(1);
    assertThat(settle.available()).isTrue();
    assertThat(settle.compileMillis()).isPositive();
  }

  @Test
  void refusesAnEmptyWindow() {
    assertThatThrownBy(() -> new CompileSettle(() -> 0L, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("window must be >= 1");
  }
}
