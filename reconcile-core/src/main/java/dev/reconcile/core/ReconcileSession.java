package dev.reconcile.core;

import dev.reconcile.core.wire.Done;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.RecordAck;
import dev.reconcile.core.wire.Refusal;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * One reconciliation round with one peer, as a transport-free state machine: messages in ({@link
 * #receive}), messages out ({@link #poll}). The agent drives it over TCP, the CLI and tests between
 * two local replicas ({@link LocalRound}); all run this one implementation. This class owns the
 * frames (format version, session id, per-direction sequence numbers) and the order of the phases;
 * each phase is a class of its own.
 *
 * <pre>
 *  Initiator I                                   Responder R
 *  Hello(versions, cluster, params, modes,
 *        compact fingerprints) --------------->  {@link Handshake}: every parameter checked, else
 *                                                Refusal; {@link FingerprintExchange}: equal
 *                                          <-----  HelloAck(unequal partitions, R's counts)
 *  a partition empty on one side: bulk (the other streams all of it, nothing is listed)
 *                                          <-----  EstimatorOffer or DigestRequest
 *  {@link TableExchange}: estimate, plan ({@link TablePlanner}),
 *  IbltOffer per group (or DigestChunks) ------->  subtract own table, peel
 *                                          <-----  IbltRequest (doubled, or a split), or
 *                                          <-----  DigestRequest            ({@link DigestMerge})
 *                                          <-----  RecordRequest: what R lacks, how many it sends
 *                                                  (dry run: MissingChunk lists, {@link
 *                                                  ResultStream})
 *  all partitions settled: Done ---------------->
 *  dry run:                                <-----  Done
 *  else {@link RepairExchange}, both ways at once:
 *  RecordBatch ... / RecordAck ... / RepairEnd <-> RecordBatch ... / RecordAck ... / RepairEnd
 *  {@link Verify}: VerifyDigest ---------------->
 *                                          <-----  VerifyReply
 * </pre>
 *
 * <p>A gap, repeat or unknown version of a frame is refused. A partial decode is never used: only a
 * table that peels to all-zero cells settles a partition; anything else doubles the table and past
 * the largest falls back to the sorted digest list. Each side keeps only the listed elements its
 * own set confirms and counts the others as {@link SessionStats#unverified()}: a wrong decode or a
 * concurrent write, never acted on; the elements a peer asks records for are confirmed by the
 * repair stream that reads them ({@link RepairStats#listedNotFound()}).
 *
 * <p>The store is reached through ports: {@link PartitionSketches} (fingerprints, estimators,
 * tables, element lookups), {@link RecordStore} (records to send, batches to apply) and {@link
 * RoundProgress} (resumable progress). Calls to them may block; drive a session from one thread at
 * a time.
 */
public final class ReconcileSession {
  /** Which side this is. */
  public enum Role {
    INITIATOR,
    RESPONDER
  }

  private enum State {
    NEW,
    AWAIT_HELLO,
    AWAIT_HELLO_ACK,
    RECONCILING,
    /** Initiator of a dry run: Done sent, waiting for the responder's. */
    CLOSING,
    REPAIRING,
    VERIFYING,
    DONE,
    FAILED
  }

  private final SessionContext ctx;
  private final Handshake handshake;
  private final FingerprintExchange fingerprints;
  private final DigestMerge digests;
  private final ResultStream results;
  private final TableExchange tables;
  private final RepairExchange repair;
  private final RatelessExchange rateless;
  private final Verify verify;
  private State state = State.NEW;
  private long sessionId;
  private int outSeq;
  private int inSeq;
  private long reconciledNanos = -1;
  private SessionFailure failure;

  private ReconcileSession(
      Role role,
      SessionConfig config,
      PartitionSketches local,
      RecordStore records,
      RoundProgress progress) {
    this.ctx = new SessionContext(role, config, local, records, progress);
    this.handshake = new Handshake(ctx);
    this.fingerprints = new FingerprintExchange(ctx);
    this.results = new ResultStream(ctx, this::onAllSettled);
    this.digests = new DigestMerge(ctx, results);
    this.tables = new TableExchange(ctx, digests, results);
    this.rateless = new RatelessExchange(ctx, tables, results, this::onAllSettled);
    this.repair = new RepairExchange(ctx, this::repaired);
    this.verify = new Verify(ctx, fingerprints);
    this.sessionId = config.sessionId();
  }

  /** An initiator that only compares: it reports what differs and streams no records. */
  public static ReconcileSession initiator(SessionConfig config, PartitionSketches local) {
    return initiator(config, local, null, null);
  }

  /**
   * An initiator that repairs through {@code records} (unless {@link SessionConfig#dryRun()}),
   * recording resumable progress in {@code progress} (may be null).
   */
  public static ReconcileSession initiator(
      SessionConfig config, PartitionSketches local, RecordStore records, RoundProgress progress) {
    ReconcileSession s = new ReconcileSession(Role.INITIATOR, config, local, records, progress);
    int n = local.params().partitions();
    s.ctx.partitions =
        config.partitions() == null
            ? Handshake.allPartitions(n)
            : Handshake.checkedPartitions(config.partitions(), n);
    return s;
  }

  /** A responder that only compares: it refuses a peer that asks for a repair. */
  public static ReconcileSession responder(SessionConfig config, PartitionSketches local) {
    return responder(config, local, null);
  }

  /** A responder that repairs through {@code records} when the initiator asks for it. */
  public static ReconcileSession responder(
      SessionConfig config, PartitionSketches local, RecordStore records) {
    ReconcileSession s = new ReconcileSession(Role.RESPONDER, config, local, records, null);
    s.state = State.AWAIT_HELLO;
    return s;
  }

  /** Initiator: queues the Hello. */
  public void start() {
    if (state == State.FAILED) {
      return; // refused or aborted before it started
    }
    if (ctx.role != Role.INITIATOR || state != State.NEW) {
      throw new IllegalStateException("start() is for a new initiator");
    }
    ctx.queue(handshake.hello(fingerprints.digest(), offersRateless()));
    state = State.AWAIT_HELLO_ACK;
  }

  /** Processes one frame from the peer; replies are queued for {@link #poll}. */
  public void receive(Envelope e) {
    if (state == State.DONE || state == State.FAILED) {
      return;
    }
    ctx.stats.received(e);
    try {
      if (e.getFormatVersion() != Wire.FORMAT_VERSION) {
        throw new ProtocolException(
            Code.VERSION,
            "frame format version "
                + e.getFormatVersion()
                + ", this peer speaks "
                + Wire.FORMAT_VERSION);
      }
      if (e.hasRefusal() && state != State.AWAIT_HELLO) {
        // A refusal ends the session whatever its numbering: a busy responder refuses before it
        // has read the Hello, so it cannot know the session id.
        onRefusal(e.getRefusal());
        return;
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
      if (state == State.AWAIT_HELLO) {
        sessionId = e.getSessionId();
      } else if (e.getSessionId() != sessionId) {
        throw new ProtocolException(
            Code.MALFORMED,
            "frame of session "
                + Long.toUnsignedString(e.getSessionId())
                + " in session "
                + Long.toUnsignedString(sessionId));
      }
      dispatch(e);
    } catch (RepairExchange.PeerApplyFailure ex) {
      fail(Code.INTERNAL, ex.getMessage(), false, true, null);
    } catch (ProtocolException ex) {
      fail(ex.code(), ex.getMessage(), true, false, null);
    } catch (RepairExchange.ApplyFailure ex) {
      // Tell the peer which batch failed; it ends its side on that acknowledgement.
      Envelope.Builder nack =
          Envelope.newBuilder()
              .setRecordAck(
                  RecordAck.newBuilder()
                      .setBatchSeq(ex.batchSeq)
                      .setApplied(false)
                      .setError(ex.getMessage()));
      fail(Code.INTERNAL, ex.getMessage(), false, false, nack);
    } catch (RuntimeException ex) {
      fail(Code.INTERNAL, "internal error: " + ex, true, false, null);
    }
  }

  /** The next frame to send, or null when nothing can be sent now. */
  public Envelope poll() {
    Envelope.Builder b;
    try {
      b = ctx.out.next();
    } catch (RuntimeException ex) {
      // A port failed while producing a frame (a record read): end the round and say so.
      fail(Code.INTERNAL, "internal error: " + ex, true, false, null);
      b = ctx.out.next();
    }
    if (b == null) {
      return null;
    }
    Envelope e =
        b.setFormatVersion(Wire.FORMAT_VERSION)
            .setSessionId(sessionId)
            .setSequence(outSeq++)
            .build();
    ctx.stats.sent(e);
    return e;
  }

  private void dispatch(Envelope e)
      throws ProtocolException, RepairExchange.ApplyFailure, RepairExchange.PeerApplyFailure {
    switch (e.getBodyCase()) {
      case HELLO -> {
        expect(Role.RESPONDER, State.AWAIT_HELLO, "Hello");
        handshake.onHello(e.getHello(), offersRateless());
        List<Part> unequal = fingerprints.compare(e.getHello().getDigest());
        handshake.ack(unequal);
        state = State.RECONCILING;
        List<Part> rest = settleBulk(unequal);
        if (ctx.rateless) {
          rateless.start(rest);
        } else {
          tables.start(rest);
        }
      }
      case HELLO_ACK -> {
        expect(Role.INITIATOR, State.AWAIT_HELLO_ACK, "HelloAck");
        handshake.onHelloAck(e.getHelloAck(), offersRateless());
        state = State.RECONCILING;
        List<Part> rest = settleBulk(fingerprints.unequal(e.getHelloAck()));
        if (ctx.rateless) {
          rateless.expect(rest);
        } else {
          for (Part part : rest) {
            part.phase = Part.Phase.WAIT_OFFER;
          }
        }
        if (ctx.allSettled()) {
          onAllSettled();
        }
      }
      case ESTIMATOR -> {
        expect(Role.INITIATOR, State.RECONCILING, "EstimatorOffer");
        tables.onEstimator(e.getEstimator());
      }
      case IBLT -> {
        expect(Role.RESPONDER, State.RECONCILING, "IbltOffer");
        tables.onIblt(e.getIblt());
      }
      case IBLT_REQUEST -> {
        expect(Role.INITIATOR, State.RECONCILING, "IbltRequest");
        tables.onIbltRequest(e.getIbltRequest());
      }
      case DIGEST_REQUEST -> {
        expect(Role.INITIATOR, State.RECONCILING, "DigestRequest");
        digests.onDigestRequest(e.getDigestRequest());
      }
      case DIGEST_CHUNK -> {
        expect(Role.RESPONDER, State.RECONCILING, "DigestChunk");
        digests.onDigestChunk(e.getDigestChunk());
      }
      case MISSING -> {
        expect(Role.INITIATOR, State.RECONCILING, "MissingChunk");
        results.onMissing(e.getMissing());
      }
      case SYMBOLS -> {
        expect(Role.INITIATOR, State.RECONCILING, "SymbolChunk");
        rateless.onSymbols(e.getSymbols());
      }
      case SYMBOL_REQUEST -> {
        expect(Role.RESPONDER, State.RECONCILING, "SymbolRequest");
        rateless.onRequest(e.getSymbolRequest());
      }
      case RATELESS_FALLBACK -> {
        expect(Role.RESPONDER, State.RECONCILING, "RatelessFallback");
        rateless.onFallback(e.getRatelessFallback());
      }
      case RECORD_REQUEST -> {
        expectState(State.RECONCILING, "RecordRequest");
        results.onRecordRequest(e.getRecordRequest());
      }
      case DONE -> onDone();
      case RECORD_BATCH -> {
        expectState(State.REPAIRING, "RecordBatch");
        repair.onBatch(e.getRecordBatch());
      }
      case ROW_BATCH -> {
        expectState(State.REPAIRING, "RowBatch");
        repair.onRowBatch(e.getRowBatch());
      }
      case RECORD_ACK -> {
        expectState(State.REPAIRING, "RecordAck");
        repair.onAck(e.getRecordAck());
      }
      case REPAIR_END -> {
        expectState(State.REPAIRING, "RepairEnd");
        repair.onRepairEnd(e.getRepairEnd());
      }
      case VERIFY_DIGEST -> {
        expect(Role.RESPONDER, State.VERIFYING, "VerifyDigest");
        verify.onDigest(e.getVerifyDigest());
        state = State.DONE;
      }
      case VERIFY_REPLY -> {
        expect(Role.INITIATOR, State.VERIFYING, "VerifyReply");
        verify.onReply(e.getVerifyReply());
        state = State.DONE;
      }
      case REFUSAL -> onRefusal(e.getRefusal());
      default ->
          throw new ProtocolException(
              Code.MALFORMED, "unexpected message " + e.getBodyCase() + " in a reconcile session");
    }
  }

  /**
   * Settles the unequal partitions that one side holds nothing of, in a repair round: the other
   * side streams all of it and nothing is listed (a new or wiped replica catches up at the speed of
   * a scan). Returns the others.
   */
  private List<Part> settleBulk(List<Part> unequal) {
    if (ctx.dryRun) {
      return unequal;
    }
    List<Part> rest = new ArrayList<>(unequal.size());
    for (Part part : unequal) {
      if (part.oneSideEmpty()) {
        part.lacksHere = part.localCount == 0 ? part.remoteCount : 0;
        part.lacksThere = part.localCount == 0 ? 0 : part.localCount;
        ctx.settle(part, PartitionOutcome.Path.BULK);
      } else {
        rest.add(part);
      }
    }
    return rest;
  }

  /** True when this side maintains coded symbols and its configuration offers the mode. */
  private boolean offersRateless() {
    return rateless.available() && ctx.local.hasSymbols();
  }

  /** Initiator: every unequal partition is settled. */
  private void onAllSettled() {
    rateless.release();
    ctx.queue(Envelope.newBuilder().setDone(Done.getDefaultInstance()));
    reconciledNanos = System.nanoTime();
    if (ctx.dryRun) {
      state = State.CLOSING;
    } else {
      state = State.REPAIRING;
      repair.start();
    }
  }

  private void onDone() throws ProtocolException {
    if (ctx.initiator()) {
      expectState(State.CLOSING, "Done");
      state = State.DONE;
      return;
    }
    expectState(State.RECONCILING, "Done");
    if (ctx.dryRun) {
      rateless.settleStreamsOfADryRun();
    }
    rateless.release();
    for (Part part : ctx.parts.values()) {
      if (part.phase != Part.Phase.SETTLED) {
        throw new ProtocolException(
            Code.MALFORMED,
            "Done while partition " + part.partition + " is in phase " + part.phase);
      }
    }
    reconciledNanos = System.nanoTime();
    if (ctx.dryRun) {
      // Answered, so that the initiator's round ends only after this side's has.
      ctx.queue(Envelope.newBuilder().setDone(Done.getDefaultInstance()));
      state = State.DONE;
    } else {
      state = State.REPAIRING;
      repair.start();
    }
  }

  /** Both sides have sent everything: verify. */
  private void repaired() {
    state = State.VERIFYING;
    if (ctx.initiator()) {
      verify.start();
    }
  }

  private void onRefusal(Refusal r) {
    fail(
        r.getCode(),
        "peer refused (" + r.getCode() + "): " + Wire.peerText(r.getMessage()),
        false,
        true,
        null);
  }

  private void expect(Role role, State want, String what) throws ProtocolException {
    if (ctx.role != role) {
      throw new ProtocolException(
          Code.MALFORMED, what + " sent to the " + ctx.role.name().toLowerCase(Locale.ROOT));
    }
    expectState(want, what);
  }

  private void expectState(State want, String what) throws ProtocolException {
    if (state != want) {
      throw new ProtocolException(
          Code.MALFORMED, what + " in state " + state + " (expected " + want + ")");
    }
  }

  private void fail(
      Code code, String message, boolean tellPeer, boolean byPeer, Envelope.Builder lastWords) {
    failure = new SessionFailure(code, message, byPeer);
    state = State.FAILED;
    // The outbox is emptied and every stream closed even if closing one throws; the session is
    // failed, its last words queued and every cursor released before any such exception reaches
    // the caller.
    RuntimeException first = Releases.run(ctx.out::clear, null);
    if (lastWords != null) {
      ctx.queue(lastWords);
    }
    if (tellPeer) {
      ctx.queue(
          Envelope.newBuilder().setRefusal(Refusal.newBuilder().setCode(code).setMessage(message)));
    }
    first = Releases.run(digests::closeAll, first);
    first = Releases.run(rateless::release, first);
    first = Releases.run(repair::release, first);
    Releases.rethrow(first);
  }

  /** Aborts locally (dead peer, timeout, shutdown); nothing more is sent. */
  public void abort(String reason) {
    if (state != State.DONE && state != State.FAILED) {
      fail(Code.INTERNAL, reason, false, false, null);
    }
  }

  /** True when the session has ended (done or failed) and every frame has been polled. */
  public boolean isFinished() {
    return (state == State.DONE || state == State.FAILED) && ctx.out.isEmpty();
  }

  public boolean succeeded() {
    return state == State.DONE;
  }

  public Optional<SessionFailure> failure() {
    return Optional.ofNullable(failure);
  }

  /** True once every unequal partition is settled: {@link #outcomes()} is complete. */
  public boolean reconciled() {
    return reconciledNanos >= 0;
  }

  /** {@link System#nanoTime()} when the difference was known, or -1. */
  public long reconciledAtNanos() {
    return reconciledNanos;
  }

  public Role role() {
    return ctx.role;
  }

  public long sessionId() {
    return sessionId;
  }

  public String peerNodeId() {
    return ctx.peerNodeId;
  }

  /** True when no records are streamed (known to a responder after the Hello). */
  public boolean dryRun() {
    return ctx.dryRun;
  }

  /**
   * The difference the rateless streams' first batches were sized for, as both sides agreed in the
   * handshake ({@link SessionConfig#expectedDifference}; 0 for none, or when the peer does not know
   * the field).
   */
  public long expectedDifference() {
    return ctx.expectedDifference;
  }

  /** Protocol counters of this side. */
  public SessionStats stats() {
    return ctx.stats;
  }

  /** Repair and verification counters of this side. */
  public RepairStats repairStats() {
    return ctx.repair;
  }

  /** Outcomes of the settled partitions, by partition. */
  public List<PartitionOutcome> outcomes() {
    return Collections.unmodifiableList(new ArrayList<>(ctx.outcomes.values()));
  }

  /** The partitions this session covers (known to a responder after the Hello). */
  public int[] partitions() {
    return ctx.partitions == null ? new int[0] : ctx.partitions.clone();
  }
}
