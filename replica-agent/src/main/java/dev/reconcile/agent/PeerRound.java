package dev.reconcile.agent;

import dev.reconcile.agent.net.FrameChannel;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.SessionFailure;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Envelope;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transport of one round with one peer over one connection: it moves the frames of a {@link
 * ReconcileSession} (which holds the whole protocol, repair and verification included) between the
 * socket and the session, and adds what only a transport knows: timers (idle, total), a
 * token-bucket byte-rate limit on what it sends, and the hop to a worker thread.
 *
 * <p>Threading: frames arrive and leave on the connection's event loop; the session (which reads
 * and writes the store, folds and peels tables) runs on this round's own serial worker, so its work
 * stays ordered and the event loop only moves bytes. Reading from the peer is paused while a frame
 * is processed: backpressure toward the peer.
 *
 * <p>The end: when the session has finished, the round is completed (the agent stops counting it as
 * active) before its last frames are written, so a peer that starts the next round on reading them
 * is never refused as busy. Then, when the connection is to be kept for the next round ({@code
 * keepOpen}, peer-keepalive) and the round succeeded, it is left open with reading paused for its
 * owner ({@link PeerService}) to take over; otherwise the initiator closes it, and the responder
 * once the peer has closed (or after a grace period).
 */
final class PeerRound {
  private static final Logger LOG = LoggerFactory.getLogger(PeerRound.class);
  private static final long DRAIN_BUDGET_BYTES = 8L << 20;

  /**
   * The least a step drains. A step drains at most what the round has drained so far, from this up
   * to {@link #DRAIN_BUDGET_BYTES} ({@link #drainBudget}): the first batches of a repair stream
   * leave one by one and the budget doubles from there. With the whole budget from the start, a
   * just-started sender read and serialized a window of batches (8 of 1 MiB) before its first frame
   * left: 64 ms after the session against 25 ms (docs/benchmarks.md, section 3, "stop 57").
   */
  private static final long FIRST_DRAIN_BYTES = 64L << 10;

  private final AgentRuntime rt;
  private final FrameChannel ch;
  private final ReconcileSession session;
  private final boolean initiator;
  private final String peerLabel;
  private final Vertx vertx;
  private final Context context;
  private final RoundWorker worker;
  private final Promise<RoundReport> done = Promise.promise();
  private final long startNanos = System.nanoTime();
  private final long rate;
  private final boolean keepOpen;
  private final boolean onKeptConnection;
  private boolean heardFromPeer;
  private long lastActivityNanos = System.nanoTime();
  private long idleTimer = -1;
  private long totalTimer = -1;
  private double tokens;
  private long tokensAtNanos = System.nanoTime();
  private long drainedBytes;
  private int pendingSteps;
  private boolean failing;

  /** Why the peer closed, while frames it sent before closing are still being processed. */
  private String closedWhileBusy;

  /**
   * @param keepOpen leave the connection open, reading paused, when the round succeeds (its owner
   *     keeps it for the next round); a failed round always closes it
   * @param onKeptConnection the connection carried an earlier round: if it is lost before the peer
   *     answers, the owner runs the round again on a new one ({@link #lostKeptConnection}), so this
   *     attempt is neither counted nor logged as a failed round
   */
  PeerRound(
      AgentRuntime rt,
      FrameChannel ch,
      ReconcileSession session,
      String peerLabel,
      boolean keepOpen,
      boolean onKeptConnection) {
    this.rt = rt;
    this.keepOpen = keepOpen;
    this.onKeptConnection = onKeptConnection;
    this.ch = ch;
    this.session = session;
    this.initiator = session.role() == ReconcileSession.Role.INITIATOR;
    this.peerLabel = peerLabel;
    this.vertx = rt.vertx();
    this.context = vertx.getOrCreateContext();
    this.worker =
        new RoundWorker(rt.roundThreads(), "round-" + (initiator ? "to-" : "from-") + peerLabel);
    this.rate = rt.config().rateLimitBytesPerSecond();
    this.tokens = rate; // one second of burst
  }

  /** Runs the round; the future completes (never fails) with the report when the round ends. */
  Future<RoundReport> run() {
    return run(null);
  }

  /**
   * Runs the round, {@code first} (if not null) being the peer's first frame, already read from the
   * connection (a Hello on a kept-open connection).
   */
  Future<RoundReport> run(Envelope first) {
    rt.metrics().activeSessions.incrementAndGet();
    ch.frameHandler(this::onFrame);
    ch.closeHandler(this::onClosed);
    long idleMs = Math.max(100, rt.config().idleTimeout().toMillis());
    idleTimer =
        vertx.setPeriodic(
            Math.min(1000, idleMs),
            id -> {
              if ((System.nanoTime() - lastActivityNanos) / 1_000_000 > idleMs) {
                rt.metrics().refused("idle_timeout");
                fail(
                    "idle timeout: nothing from the peer for "
                        + Durations.format(rt.config().idleTimeout())
                        + (pendingSteps > 0 ? " (a step of this side was still running)" : ""));
              }
            });
    totalTimer =
        vertx.setTimer(
            Math.max(1, rt.config().sessionTimeout().toMillis()),
            id -> {
              rt.metrics().refused("session_timeout");
              fail("session timeout after " + Durations.format(rt.config().sessionTimeout()));
            });
    if (initiator) {
      step(session::start);
    }
    if (first != null) {
      onFrame(first);
    }
    return done.future();
  }

  /**
   * True when the round failed on a kept connection before any frame of the peer arrived: the peer
   * had closed the connection (a restart, a shorter keep-alive) and never saw the Hello.
   */
  boolean lostKeptConnection() {
    return done.future().isComplete() && lostKeptConnection(done.future().result());
  }

  private void onFrame(Envelope e) {
    heardFromPeer = true;
    lastActivityNanos = System.nanoTime();
    if (!done.future().isComplete()) {
      ch.pause();
      step(() -> session.receive(e));
    }
  }

  /**
   * What one worker step produced: frames to send, whether the session has more, and the report
   * once it has finished.
   */
  private record Drained(List<byte[]> frames, long bytes, boolean more, RoundReport finished) {}

  /**
   * Runs {@code input} (may be null) and then drains the session, on the worker. Output is drained
   * only while the socket's write queue has room and the rate allows: what stays in the session is
   * produced later ({@code more}), so a peer that does not read cannot make this side buffer.
   */
  private void step(Runnable input) {
    long allowance = rate > 0 ? Math.max(0, (long) refill()) : DRAIN_BUDGET_BYTES;
    if (input == null && allowance == 0) {
      waitForTokens();
      return;
    }
    long budget = ch.writeQueueFull() ? 0 : Math.min(allowance, drainBudget(drainedBytes));
    pendingSteps++;
    try {
      worker.execute(
          () -> {
            try {
              if (input != null) {
                input.run();
              }
            } catch (RuntimeException | Error ex) {
              if (session.failure().isEmpty()) {
                internalError(ex);
                return;
              }
              // The session failed and then releasing what it held threw: it has still ended
              // its own way (failure recorded, last words queued), which is what the round
              // reports; the release error is logged.
              LOG.error(
                  "round with {}: releasing after the session failed ({}) threw",
                  peerLabel,
                  session.failure().get().message(),
                  ex);
            }
            Drained d;
            try {
              d = drain(budget);
            } catch (RuntimeException | Error ex) {
              internalError(ex);
              return;
            }
            onContext(() -> afterStep(d));
          });
    } catch (RejectedExecutionException ex) {
      pendingSteps--; // the round already ended
    }
  }

  /** The most a step drains once the round has drained {@code drained} bytes. */
  static long drainBudget(long drained) {
    return Math.max(FIRST_DRAIN_BYTES, Math.min(drained, DRAIN_BUDGET_BYTES));
  }

  /**
   * Worker: the session's pending frames, up to {@code budget} bytes (at least one frame when the
   * budget is positive, none when it is 0). The round is finished only once its last frame is out.
   */
  private Drained drain(long budget) {
    List<byte[]> out = new ArrayList<>();
    long bytes = 0;
    boolean exhausted = false;
    while (budget > 0 && bytes < budget) {
      Envelope e = session.poll();
      if (e == null) {
        exhausted = true;
        break;
      }
      byte[] frame = Wire.frame(e); // serialized here, not on the event loop
      out.add(frame);
      bytes += frame.length;
    }
    boolean finished = exhausted && session.isFinished();
    return new Drained(out, bytes, !exhausted, finished ? report() : null);
  }

  private void afterStep(Drained d) {
    pendingSteps--;
    lastActivityNanos = System.nanoTime();
    tokens -= d.bytes();
    drainedBytes += d.bytes();
    if (done.future().isComplete()) {
      return;
    }
    if (d.finished() != null) {
      boolean keep = keepOpen && session.succeeded();
      if (keep) {
        // Nothing read from here on is this round's: it waits for the connection's owner.
        ch.pause();
      }
      // Complete first: the peer may start its next round as soon as it reads these frames.
      complete(d.finished());
      for (byte[] f : d.frames()) {
        ch.sendFrame(f);
      }
      if (keep) {
        // Left open for the next round: the owner took it over when the round completed.
      } else if (initiator && d.finished().ok) {
        ch.whenWritable(v -> ch.close("round complete"));
      } else {
        lingerThenClose(d.finished().ok ? "round complete" : "round failed");
      }
      // Logged last: a log line costs a write to stderr, which the peer need not wait for.
      logRound(d.finished());
      return;
    }
    if (closedWhileBusy != null) {
      if (pendingSteps == 0) {
        fail("connection lost: " + closedWhileBusy);
      }
      return;
    }
    for (byte[] f : d.frames()) {
      ch.sendFrame(f);
    }
    // Reading never waits for this side's writes to drain: both directions stream at once, and two
    // sides that each stopped reading until their own writes drained would wait for each other.
    // Memory stays bounded because output is only drained while the write queue has room.
    if (pendingSteps == 0) {
      ch.resume();
    }
    if (d.more()) {
      ch.whenWritable(
          v -> {
            if (!done.future().isComplete() && pendingSteps == 0) {
              step(null);
            }
          });
    }
  }

  /**
   * Closes once the peer has closed, or after a grace period: the peer closes when it has read the
   * last frames. Closing at once with the peer's frames still unread would make TCP reset the
   * connection, and a reset can destroy the last frames sent (a refusal, a failed-apply
   * acknowledgement) before the peer reads them; meanwhile whatever arrives is read and dropped.
   */
  private void lingerThenClose(String why) {
    ch.frameHandler(e -> {});
    ch.resume();
    vertx.setTimer(
        Math.max(100, Math.min(2000, rt.config().idleTimeout().toMillis())), id -> ch.close(why));
  }

  private double refill() {
    long now = System.nanoTime();
    tokens = Math.min(rate, tokens + (now - tokensAtNanos) * rate / 1e9);
    tokensAtNanos = now;
    return tokens;
  }

  private void waitForTokens() {
    long waitMs = Math.max(1, (long) Math.ceil(-tokens * 1000 / rate));
    vertx.setTimer(
        waitMs,
        id -> {
          if (!done.future().isComplete() && pendingSteps == 0) {
            step(null);
          }
        });
  }

  /**
   * Worker: runs {@code action} on the round's event loop. When the loop has stopped (the agent is
   * closing) nothing more of the round can run: the agent's close ends it ({@link
   * PeerService#abandonRounds}), and this says so instead of failing the worker's task.
   */
  private void onContext(Runnable action) {
    try {
      context.runOnContext(v -> action.run());
    } catch (RejectedExecutionException ex) {
      LOG.info("round with {}: the agent closed during a step; the round ends with it", peerLabel);
    }
  }

  /** A step threw with the session not failed: a bug or a store failure; ends the round. */
  private void internalError(Throwable ex) {
    LOG.error("round with {}: internal error", peerLabel, ex);
    onContext(() -> fail("internal error: " + ex));
  }

  private void onClosed(String reason) {
    if (done.future().isComplete()) {
      return;
    }
    if (ch.violation() != null) {
      rt.metrics().refused(ch.violation());
      fail("refused the peer: " + reason);
    } else if (pendingSteps > 0) {
      // Frames the peer sent before closing (a refusal, a failed-apply acknowledgement) are still
      // being processed: the session's own ending, if they bring one, is the better report.
      closedWhileBusy = reason;
    } else {
      fail("connection lost: " + reason);
    }
  }

  /**
   * Ends the round without the session's consent (timeout, lost peer, internal error). When no step
   * is running the session is aborted here and the round completes at once (so the peer's next
   * round is not refused as busy); otherwise after the running step, on the worker.
   */
  private void fail(String reason) {
    if (done.future().isComplete() || failing) {
      return;
    }
    failing = true;
    ch.close(reason);
    if (pendingSteps == 0) {
      failWith(abortAndReport(reason), reason);
      return;
    }
    try {
      worker.execute(
          () -> {
            RoundReport report = abortAndReport(reason);
            onContext(() -> failWith(report, reason));
          });
    } catch (RejectedExecutionException ex) {
      // The round already ended.
    }
  }

  /**
   * Aborts the session and reports it. An abort that throws (a store that fails while the session
   * releases what it holds) is logged and the round still ends: its report is what the caller and
   * the agent's count of active rounds wait for.
   */
  private RoundReport abortAndReport(String reason) {
    try {
      session.abort(reason);
    } catch (RuntimeException | Error ex) {
      LOG.error("round with {}: abort failed", peerLabel, ex);
    }
    return report();
  }

  private void failWith(RoundReport report, String reason) {
    if (!done.future().isComplete()) {
      report.ok = false;
      report.error = reason;
      finishReport(report);
      logRound(report);
    }
  }

  /** The session finished (done or failed): report it. */
  private void complete(RoundReport report) {
    SessionFailure f = session.failure().orElse(null);
    if (f != null) {
      rt.metrics().refused(f.code().name().toLowerCase(Locale.ROOT));
      report.ok = false;
      report.error = (f.byPeer() ? "" : "refused the peer: ") + f.message();
    } else {
      report.ok = true;
      rt.metrics().recordRound(report, session);
    }
    finishReport(report);
  }

  /** The report of the session as it stands (on the worker, or while no step runs). */
  private RoundReport report() {
    return RoundReport.of(session, peerLabel, startNanos);
  }

  private void finishReport(RoundReport report) {
    vertx.cancelTimer(idleTimer);
    vertx.cancelTimer(totalTimer);
    worker.shutdown();
    rt.metrics().activeSessions.decrementAndGet();
    if (!lostKeptConnection(report)) {
      (report.ok ? rt.metrics().roundsOk : rt.metrics().roundsFailed).increment();
      rt.metrics().roundDuration.record(java.time.Duration.ofMillis(report.durationMillis));
    }
    done.complete(report);
  }

  private boolean lostKeptConnection(RoundReport report) {
    return onKeptConnection && !heardFromPeer && !report.ok;
  }

  private void logRound(RoundReport report) {
    if (lostKeptConnection(report)) {
      LOG.debug("round to {} on a kept connection: {}", peerLabel, report.error);
    } else if (report.ok) {
      LOG.info(
          "round {} {} ok: partitions={} fast={} iblt={} fallback={} estimate={} difference={}"
              + " sent={} received={} applied={} stillDiffering={} in {} ms (session {} ms)",
          initiator ? "to" : "from",
          peerLabel,
          report.partitions,
          report.fastPath,
          report.ibltPartitions,
          report.fallbackPartitions,
          report.estimate,
          report.missingLocal + report.missingRemote,
          report.recordsSent,
          report.recordsReceived,
          report.applied,
          report.stillDiffering,
          report.durationMillis,
          report.sessionMillis);
    } else {
      LOG.warn("round {} {}: {}", initiator ? "to" : "from", peerLabel, report.error);
    }
  }
}
