package dev.reconcile.agent;

import dev.reconcile.agent.net.BatchCodec;
import dev.reconcile.agent.net.FrameChannel;
import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.PartitionOutcome;
import dev.reconcile.core.ProtocolException;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SessionFailure;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.FingerprintSet;
import dev.reconcile.core.wire.RecordAck;
import dev.reconcile.core.wire.RecordBatch;
import dev.reconcile.core.wire.Refusal;
import dev.reconcile.core.wire.Refusal.Code;
import dev.reconcile.core.wire.RepairEnd;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One reconciliation round with one peer over one connection, for either role:
 *
 * <ol>
 *   <li><b>session</b>: {@link ReconcileSession} frames until both sides know the difference;
 *   <li><b>repair</b>: each side streams the records the other lacks as {@code RecordBatch} frames
 *       (a window of unacknowledged batches, a byte-rate limit), the receiver applies each batch in
 *       one RocksDB write batch through the conflict rule and acknowledges it; {@code RepairEnd}
 *       closes each direction;
 *   <li><b>verify</b>: the initiator compares partition fingerprints again and reports partitions
 *       that still differ (writes during the round).
 * </ol>
 *
 * <p>Threading: frames arrive and leave on the connection's event loop; everything that touches the
 * store, folds or peels a table runs on this round's own serial worker thread, so work for one
 * round stays ordered and the event loop only moves bytes. Reading from the peer is paused while a
 * frame is being processed, which is the backpressure toward the peer.
 *
 * <p>Progress (initiator): a partition is marked done once its records went both ways: every batch
 * this side sent for it was acknowledged and the responder (which streams in ascending partition
 * order) has moved past it. An interrupted round resumes with the partitions not marked.
 */
final class PeerRound {
  private static final Logger LOG = LoggerFactory.getLogger(PeerRound.class);
  private static final long DRAIN_BUDGET_BYTES = 8L << 20;

  private enum Phase {
    SESSION,
    REPAIR,
    VERIFY,
    DONE
  }

  private final AgentRuntime rt;
  private final ReplicaStore store;
  private final FrameChannel ch;
  private final ReconcileSession session;
  private final boolean initiator;
  private final String peerLabel;
  private final Vertx vertx;
  private final Context context;
  private final ExecutorService worker;
  private final Promise<RoundReport> done = Promise.promise();
  private final RoundReport report = new RoundReport();
  private final long startNanos = System.nanoTime();
  private Phase phase = Phase.SESSION;
  private long lastActivityNanos = System.nanoTime();
  private long idleTimer = -1;
  private long totalTimer = -1;
  // Framing after the session.
  private int outSeq;
  private int inSeq;
  private long sessionId;
  // Repair sender.
  private final ArrayDeque<PartitionOutcome> sendQueue = new ArrayDeque<>();
  private int sendOffset;
  private boolean fetching;
  private int fetchingPartition = -1;
  private int inflight;
  private long nextBatchSeq;
  private final Map<Long, Integer> batchPartition = new HashMap<>();
  private final Map<Integer, Integer> unackedByPartition = new HashMap<>();
  private boolean selfEnded;
  private boolean peerEnded;
  private double tokens;
  private long tokensAtNanos = System.nanoTime();
  private boolean rateTimerSet;
  // Progress (initiator).
  private int peerPartitionSeen = -1;
  private final BitSet marked = new BitSet();
  private Fingerprint[] verifySent;

  PeerRound(AgentRuntime rt, FrameChannel ch, ReconcileSession session, String peerLabel) {
    this.rt = rt;
    this.store = rt.store();
    this.ch = ch;
    this.session = session;
    this.initiator = session.role() == ReconcileSession.Role.INITIATOR;
    this.peerLabel = peerLabel;
    this.vertx = rt.vertx();
    this.context = vertx.getOrCreateContext();
    this.worker =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "round-" + (initiator ? "to-" : "from-") + peerLabel);
              t.setDaemon(true);
              return t;
            });
    report.peer = peerLabel;
    report.role = initiator ? "initiator" : "responder";
    report.startedAtMillis = System.currentTimeMillis();
    tokens = rt.config().rateLimitBytesPerSecond(); // one second of burst
  }

  /** Runs the round; the future completes (never fails) with the report when the round ends. */
  Future<RoundReport> run() {
    rt.metrics().activeSessions.incrementAndGet();
    ch.frameHandler(this::onFrame);
    ch.closed().onComplete(r -> onClosed(r.result()));
    long idleMs = Math.max(100, rt.config().idleTimeout().toMillis());
    idleTimer =
        vertx.setPeriodic(
            Math.min(1000, idleMs),
            id -> {
              if ((System.nanoTime() - lastActivityNanos) / 1_000_000 > idleMs
                  && !done.future().isComplete()) {
                rt.metrics().refused("idle_timeout");
                fail(
                    "idle timeout: nothing from the peer for "
                        + Durations.format(rt.config().idleTimeout()),
                    true);
              }
            });
    totalTimer =
        vertx.setTimer(
            Math.max(1, rt.config().sessionTimeout().toMillis()),
            id -> {
              if (!done.future().isComplete()) {
                rt.metrics().refused("session_timeout");
              }
              fail("session timeout after " + Durations.format(rt.config().sessionTimeout()), true);
            });
    if (initiator) {
      work(
          () -> {
            session.start();
            return drainSession();
          },
          this::afterSessionWork);
    }
    return done.future();
  }

  // ---------------------------------------------------------------- frames in

  private void onFrame(Envelope e) {
    lastActivityNanos = System.nanoTime();
    if (phase == Phase.DONE) {
      return;
    }
    if (phase == Phase.SESSION) {
      ch.pause();
      work(
          () -> {
            session.receive(e);
            return drainSession();
          },
          this::afterSessionWork);
      return;
    }
    try {
      checkFraming(e);
      switch (e.getBodyCase()) {
        case RECORD_BATCH -> onBatch(e.getRecordBatch());
        case RECORD_ACK -> onAck(e.getRecordAck());
        case REPAIR_END -> {
          peerEnded = true;
          updateProgress();
          maybeFinishRepair();
        }
        case FINGERPRINTS -> onVerify(e.getFingerprints());
        case REFUSAL ->
            fail(
                "peer refused ("
                    + e.getRefusal().getCode()
                    + "): "
                    + Wire.peerText(e.getRefusal().getMessage()),
                false);
        default ->
            throw new ProtocolException(
                Code.MALFORMED, "unexpected " + e.getBodyCase() + " after the session");
      }
    } catch (ProtocolException ex) {
      refuse(ex);
    }
  }

  private void checkFraming(Envelope e) throws ProtocolException {
    if (e.getFormatVersion() != Wire.FORMAT_VERSION) {
      throw new ProtocolException(
          Code.VERSION,
          "frame format version "
              + e.getFormatVersion()
              + ", this peer speaks "
              + Wire.FORMAT_VERSION);
    }
    if (e.getSessionId() != sessionId) {
      throw new ProtocolException(
          Code.MALFORMED,
          "frame of session "
              + Long.toUnsignedString(e.getSessionId())
              + " in session "
              + Long.toUnsignedString(sessionId));
    }
    if (e.getSequence() != inSeq) {
      throw new ProtocolException(
          Code.MALFORMED,
          "frame sequence "
              + e.getSequence()
              + " where "
              + inSeq
              + " was expected (replayed, reordered or lost frame)");
    }
    inSeq++;
  }

  // ---------------------------------------------------------------- session phase

  private record Drained(List<Envelope> frames, boolean more) {}

  /** Worker: collects the session's pending frames, up to a byte budget. */
  private Drained drainSession() {
    List<Envelope> out = new ArrayList<>();
    long bytes = 0;
    Envelope e;
    while (bytes < DRAIN_BUDGET_BYTES && (e = session.poll()) != null) {
      out.add(e);
      bytes += e.getSerializedSize();
    }
    return new Drained(out, bytes >= DRAIN_BUDGET_BYTES);
  }

  private void afterSessionWork(Drained d) {
    for (Envelope e : d.frames()) {
      ch.send(e);
    }
    ch.whenWritable(
        v -> {
          if (phase != Phase.SESSION) {
            return;
          }
          if (d.more()) {
            work(this::drainSession, this::afterSessionWork);
          } else if (session.isFinished()) {
            sessionEnded();
          } else {
            ch.resume();
          }
        });
  }

  private void sessionEnded() {
    report.sessionMillis = (System.nanoTime() - startNanos) / 1_000_000;
    report.stats = session.stats();
    report.peerNodeId = session.peerNodeId();
    report.dryRun = session.dryRun();
    report.partitions = session.partitions().length;
    rt.metrics().sessionDuration.record(java.time.Duration.ofMillis(report.sessionMillis));
    SessionFailure f = session.failure().orElse(null);
    if (f != null) {
      rt.metrics().refused(f.code().name().toLowerCase(java.util.Locale.ROOT));
      fail((f.byPeer() ? "" : "refused the peer: ") + f.message(), true);
      return;
    }
    List<PartitionOutcome> outcomes = session.outcomes();
    report.summarize(outcomes);
    rt.metrics()
        .session(
            session.stats(), report.fastPath, report.ibltPartitions, report.fallbackPartitions);
    rt.metrics().differenceSize.record(report.missingLocal + report.missingRemote);
    outSeq = session.nextOutSequence();
    inSeq = session.nextInSequence();
    sessionId = session.sessionId();
    if (session.dryRun()) {
      phase = Phase.DONE;
      if (initiator) {
        // Done is sent; the responder closes once it has read it, so that it no longer counts this
        // round as active when the next one arrives. Don't wait forever for that.
        vertx.setTimer(Math.max(100, rt.config().idleTimeout().toMillis()), id -> finish());
      } else {
        finish();
        ch.whenWritable(v -> ch.close("dry run complete"));
      }
      return;
    }
    phase = Phase.REPAIR;
    for (PartitionOutcome o : outcomes) {
      if (o.missingRemote().length > 0) {
        sendQueue.add(o);
      }
    }
    ch.resume();
    pumpSender();
    updateProgress();
  }

  // ---------------------------------------------------------------- repair: sending

  private void pumpSender() {
    if (phase != Phase.REPAIR || fetching) {
      return;
    }
    if (sendQueue.isEmpty()) {
      if (inflight == 0 && !selfEnded) {
        selfEnded = true;
        send(
            Envelope.newBuilder()
                .setRepairEnd(
                    RepairEnd.newBuilder()
                        .setBatches(nextBatchSeq)
                        .setRecords(report.recordsSent)));
        maybeFinishRepair();
      }
      return;
    }
    if (inflight >= rt.config().repairWindow()) {
      return;
    }
    long rate = rt.config().rateLimitBytesPerSecond();
    if (rate > 0) {
      long now = System.nanoTime();
      tokens = Math.min(rate, tokens + (now - tokensAtNanos) * rate / 1e9);
      tokensAtNanos = now;
      if (tokens < 0) {
        if (!rateTimerSet) {
          rateTimerSet = true;
          long waitMs = Math.max(1, (long) Math.ceil(-tokens * 1000 / rate));
          vertx.setTimer(
              waitMs,
              id -> {
                rateTimerSet = false;
                pumpSender();
              });
        }
        return;
      }
    }
    PartitionOutcome o = sendQueue.peek();
    int p = o.partition();
    long[] all = o.missingRemote();
    int n = Math.min(rt.config().batchRecords(), all.length - sendOffset);
    long[] chunk = java.util.Arrays.copyOfRange(all, sendOffset, sendOffset + n);
    sendOffset += n;
    if (sendOffset == all.length) {
      sendQueue.poll();
      sendOffset = 0;
    }
    fetching = true;
    fetchingPartition = p;
    work(
        () -> splitIntoBatches(store.recordsFor(p, chunk)),
        batches -> {
          fetching = false;
          for (List<ReplicaRecord> b : batches) {
            long seq = nextBatchSeq++;
            RecordBatch rb = BatchCodec.batch(p, seq, b);
            int size = rb.getSerializedSize();
            batchPartition.put(seq, p);
            unackedByPartition.merge(p, 1, Integer::sum);
            inflight++;
            tokens -= size;
            report.batchesSent++;
            report.recordsSent += b.size();
            report.recordBytesSent += size;
            rt.metrics().recordsSent.increment(b.size());
            rt.metrics().recordBytesSent.increment(size);
            send(Envelope.newBuilder().setRecordBatch(rb));
          }
          ch.whenWritable(v -> pumpSender());
          updateProgress();
        });
  }

  private List<List<ReplicaRecord>> splitIntoBatches(List<ReplicaRecord> records) {
    List<List<ReplicaRecord>> out = new ArrayList<>();
    List<ReplicaRecord> cur = new ArrayList<>();
    long bytes = 0;
    long cap = rt.config().batchBytes();
    for (ReplicaRecord r : records) {
      long size = r.key().length + r.value().length + 32L;
      if (!cur.isEmpty() && bytes + size > cap) {
        out.add(cur);
        cur = new ArrayList<>();
        bytes = 0;
      }
      cur.add(r);
      bytes += size;
    }
    if (!cur.isEmpty()) {
      out.add(cur);
    }
    return out;
  }

  private void onAck(RecordAck a) throws ProtocolException {
    Integer p = batchPartition.remove(a.getBatchSeq());
    if (p == null) {
      throw new ProtocolException(
          Code.MALFORMED, "acknowledgement of unknown batch " + a.getBatchSeq());
    }
    inflight--;
    unackedByPartition.merge(p, -1, Integer::sum);
    if (!a.getApplied()) {
      fail(
          "peer could not apply batch " + a.getBatchSeq() + ": " + Wire.peerText(a.getError()),
          true);
      return;
    }
    updateProgress();
    pumpSender();
  }

  // ---------------------------------------------------------------- repair: receiving

  private void onBatch(RecordBatch b) {
    if (phase != Phase.REPAIR) {
      refuse(new ProtocolException(Code.MALFORMED, "record batch in phase " + phase));
      return;
    }
    ch.pause();
    int cap = Math.max(1, rt.config().batchRecords() * 4);
    long skewMillis = rt.config().security().maxClockSkew().toMillis();
    worker.execute(
        () -> {
          List<ReplicaRecord> checked;
          try {
            checked = BatchCodec.read(b, cap);
            checkPartition(b, checked);
          } catch (ProtocolException ex) {
            context.runOnContext(v -> refuse(ex));
            return;
          }
          List<ReplicaRecord> records =
              skewMillis > 0
                  ? notFromTheFuture(checked, store.clock().wallMillis() + skewMillis)
                  : checked;
          int skewed = checked.size() - records.size();
          if (skewed > 0) {
            LOG.warn(
                "round {} {}: refused {} record(s) of batch {} whose version lies more than {} ahead of the local clock (max-clock-skew)",
                initiator ? "to" : "from",
                peerLabel,
                skewed,
                b.getBatchSeq(),
                Durations.format(rt.config().security().maxClockSkew()));
            context.runOnContext(
                v -> {
                  report.clockSkewRefused += skewed;
                  rt.metrics().recordsRefused("clock_skew", skewed);
                });
          }
          ApplyOutcome result;
          try {
            result = store.apply(records);
          } catch (RuntimeException ex) {
            String msg =
                "apply of batch "
                    + b.getBatchSeq()
                    + " failed, nothing of it applied: "
                    + ex.getMessage();
            context.runOnContext(
                v -> {
                  send(
                      Envelope.newBuilder()
                          .setRecordAck(
                              RecordAck.newBuilder()
                                  .setBatchSeq(b.getBatchSeq())
                                  .setApplied(false)
                                  .setError(msg)));
                  fail(msg, true);
                });
            return;
          }
          ApplyOutcome r = result;
          int n = checked.size();
          context.runOnContext(
              v -> {
                lastActivityNanos = System.nanoTime();
                report.recordsReceived += n;
                report.recordBytesReceived += b.getSerializedSize();
                report.applied += r.applied();
                report.stale += r.stale();
                report.duplicate += r.duplicate();
                rt.metrics().recordsReceived.increment(n);
                rt.metrics().recordBytesReceived.increment(b.getSerializedSize());
                rt.metrics().recordsApplied.increment(r.applied());
                rt.metrics().recordsStale.increment(r.stale());
                rt.metrics().recordsDuplicate.increment(r.duplicate());
                send(
                    Envelope.newBuilder()
                        .setRecordAck(
                            RecordAck.newBuilder().setBatchSeq(b.getBatchSeq()).setApplied(true)));
                peerPartitionSeen = Math.max(peerPartitionSeen, b.getPartition());
                updateProgress();
                if (phase == Phase.REPAIR) {
                  ch.resume();
                }
              });
        });
  }

  /**
   * The partition field is outside the checksum and drives progress marks: it must be one of this
   * round's partitions, and every record's key must hash to it.
   */
  private void checkPartition(RecordBatch b, List<ReplicaRecord> records) throws ProtocolException {
    int p = b.getPartition();
    if (java.util.Arrays.binarySearch(session.partitions(), p) < 0) {
      throw new ProtocolException(
          Code.MALFORMED,
          "batch " + b.getBatchSeq() + " of partition " + p + ", not one of this round's");
    }
    dev.reconcile.core.SketchParams sp = store.sketches().params();
    for (ReplicaRecord r : records) {
      int q =
          dev.reconcile.core.HashSpec.partition(sp.spec().keyHash(r.key()), sp.partitionsLog2());
      if (q != p) {
        throw new ProtocolException(
            Code.MALFORMED,
            "batch "
                + b.getBatchSeq()
                + " of partition "
                + p
                + " holds a record of partition "
                + q);
      }
    }
  }

  /**
   * The records whose version's physical time is at most {@code limitMillis}: an authenticated peer
   * carries other nodes' writes and is trusted with them, but a version far in the future would win
   * every conflict and drag this node's hybrid clock along, so it is refused (and counted).
   */
  private static List<ReplicaRecord> notFromTheFuture(List<ReplicaRecord> in, long limitMillis) {
    List<ReplicaRecord> out = null;
    for (int i = 0; i < in.size(); i++) {
      ReplicaRecord r = in.get(i);
      boolean future =
          dev.reconcile.agent.store.HybridClock.physicalMillis(r.version()) > limitMillis;
      if (future && out == null) {
        out = new ArrayList<>(in.subList(0, i));
      } else if (!future && out != null) {
        out.add(r);
      }
    }
    return out == null ? in : out;
  }

  // ---------------------------------------------------------------- progress and verify

  private void updateProgress() {
    if (!initiator || phase != Phase.REPAIR) {
      return;
    }
    int sendingNow = sendQueue.isEmpty() ? Integer.MAX_VALUE : sendQueue.peek().partition();
    List<Integer> newly = new ArrayList<>();
    for (int p : session.partitions()) {
      if (marked.get(p)) {
        continue;
      }
      boolean sentAll =
          p < sendingNow
              && (!fetching || p < fetchingPartition)
              && unackedByPartition.getOrDefault(p, 0) == 0;
      boolean receivedAll = peerEnded || p < peerPartitionSeen;
      if (!(sentAll && receivedAll)) {
        break;
      }
      marked.set(p);
      newly.add(p);
    }
    if (!newly.isEmpty()) {
      String peer = peerLabel;
      worker.execute(
          () -> {
            for (int p : newly) {
              store.markPartitionDone(peer, 0, p);
            }
          });
    }
  }

  private void maybeFinishRepair() {
    if (phase != Phase.REPAIR || !selfEnded || !peerEnded) {
      return;
    }
    phase = Phase.VERIFY;
    if (initiator) {
      int[] parts = session.partitions();
      work(
          () -> fingerprints(parts),
          fps -> {
            verifySent = fps;
            send(Envelope.newBuilder().setFingerprints(fingerprintSet(parts, fps)));
          });
    }
  }

  private Fingerprint[] fingerprints(int[] parts) {
    Fingerprint[] fps = new Fingerprint[parts.length];
    for (int i = 0; i < parts.length; i++) {
      fps[i] = store.sketches().fingerprint(parts[i]);
    }
    return fps;
  }

  private static FingerprintSet fingerprintSet(int[] parts, Fingerprint[] fps) {
    FingerprintSet.Builder b = FingerprintSet.newBuilder().setPacked(Wire.packFingerprints(fps));
    for (int p : parts) {
      b.addPartitions(p);
    }
    return b.build();
  }

  private void onVerify(FingerprintSet fs) throws ProtocolException {
    int[] parts = session.partitions();
    if (fs.getPartitionsCount() != parts.length) {
      throw new ProtocolException(
          Code.MALFORMED,
          "verify fingerprints of "
              + fs.getPartitionsCount()
              + " partitions, round covers "
              + parts.length);
    }
    for (int i = 0; i < parts.length; i++) {
      if (fs.getPartitions(i) != parts[i]) {
        throw new ProtocolException(
            Code.MALFORMED, "verify fingerprint " + i + " is of partition " + fs.getPartitions(i));
      }
    }
    Fingerprint[] theirs = Wire.unpackFingerprints(fs.getPacked(), parts.length);
    if (initiator) {
      if (phase != Phase.VERIFY || verifySent == null) {
        throw new ProtocolException(Code.MALFORMED, "verify fingerprints before this side asked");
      }
      for (int i = 0; i < parts.length; i++) {
        if (!theirs[i].equals(verifySent[i])) {
          report.stillDiffering.add(parts[i]);
        }
      }
      rt.metrics().stillDiffering.increment(report.stillDiffering.size());
      String peer = peerLabel;
      work(
          () -> {
            store.clearProgress(peer);
            return null;
          },
          v -> {
            phase = Phase.DONE;
            finish();
          });
    } else {
      if (phase != Phase.VERIFY) {
        throw new ProtocolException(Code.MALFORMED, "verify fingerprints in phase " + phase);
      }
      work(
          () -> fingerprints(parts),
          fps -> {
            send(Envelope.newBuilder().setFingerprints(fingerprintSet(parts, fps)));
            for (int i = 0; i < parts.length; i++) {
              if (!theirs[i].equals(fps[i])) {
                report.stillDiffering.add(parts[i]);
              }
            }
            phase = Phase.DONE;
            finish();
          });
    }
  }

  // ---------------------------------------------------------------- plumbing

  private void send(Envelope.Builder b) {
    ch.send(
        b.setFormatVersion(Wire.FORMAT_VERSION)
            .setSessionId(sessionId)
            .setSequence(outSeq++)
            .build());
  }

  /**
   * Runs {@code task} on this round's worker; {@code then} on the event loop. Failures fail the
   * round.
   */
  private <T> void work(Callable<T> task, Handler<T> then) {
    try {
      worker.execute(
          () -> {
            T r;
            try {
              r = task.call();
            } catch (Exception | Error ex) {
              LOG.error("round with {}: internal error", peerLabel, ex);
              context.runOnContext(v -> fail("internal error: " + ex, true));
              return;
            }
            context.runOnContext(
                v -> {
                  lastActivityNanos = System.nanoTime();
                  if (!done.future().isComplete()) {
                    then.handle(r);
                  }
                });
          });
    } catch (java.util.concurrent.RejectedExecutionException ex) {
      // The round already ended.
    }
  }

  private void refuse(ProtocolException ex) {
    rt.metrics().refused(ex.code().name().toLowerCase(java.util.Locale.ROOT));
    if (!ch.isClosed()) {
      send(
          Envelope.newBuilder()
              .setRefusal(Refusal.newBuilder().setCode(ex.code()).setMessage(ex.getMessage())));
    }
    fail("refused the peer: " + ex.getMessage(), true);
  }

  private void onClosed(String reason) {
    if (ch.violation() != null && !done.future().isComplete()) {
      rt.metrics().refused(ch.violation());
      fail("refused the peer: " + reason, false);
      return;
    }
    if (phase == Phase.DONE) {
      finish();
    } else {
      fail("connection lost: " + reason, false);
    }
  }

  private void fail(String reason, boolean close) {
    if (done.future().isComplete()) {
      return;
    }
    if (!session.isFinished()) {
      session.abort(reason);
    }
    report.ok = false;
    report.error = reason;
    LOG.warn("round {} {}: {}", initiator ? "to" : "from", peerLabel, reason);
    complete();
    if (close) {
      // Let the refusal or last frame leave before closing.
      ch.whenWritable(v -> ch.close(reason));
    }
  }

  private void finish() {
    if (done.future().isComplete()) {
      return;
    }
    report.ok = true;
    complete();
    if (initiator) {
      ch.whenWritable(v -> ch.close("round complete"));
    }
  }

  private void complete() {
    phase = Phase.DONE;
    vertx.cancelTimer(idleTimer);
    vertx.cancelTimer(totalTimer);
    worker.shutdown();
    report.durationMillis = (System.nanoTime() - startNanos) / 1_000_000;
    rt.metrics().activeSessions.decrementAndGet();
    (report.ok ? rt.metrics().roundsOk : rt.metrics().roundsFailed).increment();
    rt.metrics().roundDuration.record(java.time.Duration.ofMillis(report.durationMillis));
    if (report.ok) {
      LOG.info(
          "round {} {} ok: partitions={} fast={} iblt={} fallback={} estimate={} difference={} sent={} received={} applied={} stillDiffering={} in {} ms (session {} ms)",
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
    }
    done.complete(report);
  }
}
