package dev.reconcile.core;

import dev.reconcile.core.wire.DigestChunk;
import dev.reconcile.core.wire.DigestRequest;
import dev.reconcile.core.wire.Done;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.EstimatorOffer;
import dev.reconcile.core.wire.FingerprintSet;
import dev.reconcile.core.wire.Hello;
import dev.reconcile.core.wire.HelloAck;
import dev.reconcile.core.wire.IbltOffer;
import dev.reconcile.core.wire.IbltRequest;
import dev.reconcile.core.wire.MissingChunk;
import dev.reconcile.core.wire.Mode;
import dev.reconcile.core.wire.Refusal;
import dev.reconcile.core.wire.Refusal.Code;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The reconciliation protocol as a transport-free state machine: messages in ({@link #receive}),
 * messages out ({@link #poll}). The agent drives it over TCP, the CLI between two local stores, and
 * replay tests in memory; all three run this one implementation.
 *
 * <pre>
 *  Initiator I                                   Responder R
 *  Hello(versions, cluster, params, modes) ----->  checks every parameter, else Refusal
 *                                          <-----  HelloAck
 *  FingerprintSet(I's partitions) -------------->  equal partitions: fast path, done
 *                                          <-----  FingerprintSet(R's), then per unequal partition
 *                                                  EstimatorOffer (or DigestRequest if tiny)
 *  estimate d, size table from Sizing;
 *  IbltOffer(table) (or DigestChunks if the
 *  table would not fit or cost more) ----------->  subtract own table, peel, verify elements
 *                                          <-----  MissingChunk(s)            complete decode
 *                                          <-----  IbltRequest(doubled shape) failed decode
 *                                          <-----  DigestRequest              failed at the largest
 *  DigestChunk(s) (sorted elements) ------------>  merge with own sorted elements
 *                                          <-----  MissingChunk(s) (fallback)
 *  keep the elements own set confirms;
 *  all partitions settled:
 *  Done ---------------------------------------->
 * </pre>
 *
 * Every frame carries the format version, the session id and a per-direction sequence number; a
 * gap, repeat or unknown version is refused. A partial decode is never reported: only a table that
 * peels to all-zero cells settles a partition; anything else doubles the table and past the largest
 * falls back to the sorted digest list. Each side then keeps only the listed elements its own set
 * confirms (what it lacks is absent here, what the peer lacks is present here) and counts the
 * others as {@link SessionStats#unverified()}: a wrong decode or a concurrent write, never acted
 * on.
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
    AWAIT_FINGERPRINTS,
    RECONCILING,
    DONE,
    FAILED
  }

  private enum Phase {
    /** I: waiting for R's estimator or digest request. */
    WAIT_OFFER,
    /**
     * I: table or digests sent, waiting for results, a bigger-table request or a digest request.
     */
    WAIT_RESULT,
    /** R: estimator sent, waiting for a table or digests. */
    WAIT_TABLE,
    /** R: asked for a doubled table. */
    WAIT_DOUBLED,
    /** R: asked for (or receiving) the digest list. */
    COLLECT_DIGESTS,
    SETTLED
  }

  private static final class Part {
    final int partition;
    Phase phase;
    long localCount;
    long remoteCount;
    Group group;
    long estimate = -1;
    int attempts;
    IbltShape lastShape;
    boolean fallback;
    LongList missingLocal = new LongList(16);
    LongList missingRemote = new LongList(16);
    // Responder's merge of a digest stream with its own sorted elements.
    ElementCursor cursor;
    boolean cursorValid;
    boolean sawRemote;
    long lastRemote;

    Part(int partition) {
      this.partition = partition;
    }
  }

  /** Partitions reconciled with one table (the sum of their tables). */
  private static final class Group {
    final int[] partitions;
    final String key;
    int attempts;
    IbltShape lastShape;
    IbltShape requested;
    long estimate;

    Group(int[] partitions) {
      this.partitions = partitions;
      this.key = Arrays.toString(partitions);
    }
  }

  /** Lazily produces the frames of one long stream (digests, results). */
  private interface Producer {
    /** The next body, or null when done. */
    Envelope.Builder next();
  }

  private final Role role;
  private final SessionConfig config;
  private final PartitionSketches local;
  private final SketchParams params;
  private final ArrayDeque<Object> outbox = new ArrayDeque<>();
  private final TreeMap<Integer, Part> parts = new TreeMap<>();
  private final TreeMap<Integer, PartitionOutcome> outcomes = new TreeMap<>();
  private final java.util.HashMap<String, Group> groups = new java.util.HashMap<>();
  private final SessionStats stats = new SessionStats();
  private State state = State.NEW;
  private long sessionId;
  private int outSeq;
  private int inSeq;
  private int[] partitions;
  private String peerNodeId = "";
  private boolean dryRun;
  private SessionFailure failure;

  private ReconcileSession(Role role, SessionConfig config, PartitionSketches local) {
    this.role = role;
    this.config = config;
    this.local = local;
    this.params = local.params();
    this.sessionId = config.sessionId();
    this.dryRun = config.dryRun();
  }

  public static ReconcileSession initiator(SessionConfig config, PartitionSketches local) {
    ReconcileSession s = new ReconcileSession(Role.INITIATOR, config, local);
    s.partitions = s.checkedPartitions(config.partitions());
    return s;
  }

  public static ReconcileSession responder(SessionConfig config, PartitionSketches local) {
    ReconcileSession s = new ReconcileSession(Role.RESPONDER, config, local);
    s.state = State.AWAIT_HELLO;
    return s;
  }

  /** Initiator: queues the Hello. */
  public void start() {
    if (state == State.FAILED) {
      return; // refused or aborted before it started
    }
    if (role != Role.INITIATOR || state != State.NEW) {
      throw new IllegalStateException("start() is for a new initiator");
    }
    Hello.Builder h =
        Hello.newBuilder()
            .setMinVersion(Wire.FORMAT_VERSION)
            .setMaxVersion(Wire.FORMAT_VERSION)
            .setClusterId(config.clusterId())
            .setNodeId(config.nodeId())
            .setParams(params.toProto())
            .addModes(Mode.MODE_ESTIMATOR_IBLT)
            .setDryRun(dryRun);
    if (config.partitions() != null) {
      for (int p : partitions) {
        h.addPartitions(p);
      }
    }
    queue(Envelope.newBuilder().setHello(h));
    state = State.AWAIT_HELLO_ACK;
  }

  /** Processes one frame from the peer; replies are queued for {@link #poll}. */
  public void receive(Envelope e) {
    if (state == State.DONE || state == State.FAILED) {
      return;
    }
    stats.received(e);
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
        Refusal r = e.getRefusal();
        fail(
            r.getCode(),
            "peer refused (" + r.getCode() + "): " + Wire.peerText(r.getMessage()),
            false,
            true);
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
    } catch (ProtocolException ex) {
      fail(ex.code(), ex.getMessage(), true, false);
    } catch (RuntimeException ex) {
      fail(Code.INTERNAL, "internal error: " + ex, true, false);
    }
  }

  /** The next frame to send, or null when nothing is pending. */
  public Envelope poll() {
    while (!outbox.isEmpty()) {
      Object head = outbox.peek();
      Envelope.Builder b;
      if (head instanceof Envelope.Builder eb) {
        outbox.poll();
        b = eb;
      } else {
        b = ((Producer) head).next();
        if (b == null) {
          outbox.poll();
          continue;
        }
      }
      Envelope e =
          b.setFormatVersion(Wire.FORMAT_VERSION)
              .setSessionId(sessionId)
              .setSequence(outSeq++)
              .build();
      stats.sent(e);
      return e;
    }
    return null;
  }

  /** True when the session has ended (done or failed) and every frame has been polled. */
  public boolean isFinished() {
    return (state == State.DONE || state == State.FAILED) && outbox.isEmpty();
  }

  public boolean succeeded() {
    return state == State.DONE;
  }

  public Optional<SessionFailure> failure() {
    return Optional.ofNullable(failure);
  }

  /** Aborts locally (dead peer, timeout, shutdown); nothing more is sent. */
  public void abort(String reason) {
    if (state != State.DONE && state != State.FAILED) {
      fail(Code.INTERNAL, reason, false, false);
    }
  }

  public Role role() {
    return role;
  }

  public long sessionId() {
    return sessionId;
  }

  public String peerNodeId() {
    return peerNodeId;
  }

  /** True when the initiator asked for a report only (known to a responder after the Hello). */
  public boolean dryRun() {
    return dryRun;
  }

  /**
   * Sequence number of the next frame this side sends; a transport continues from it after the
   * session.
   */
  public int nextOutSequence() {
    return outSeq;
  }

  /** Sequence number expected of the peer's next frame. */
  public int nextInSequence() {
    return inSeq;
  }

  public SessionStats stats() {
    return stats;
  }

  /** Outcomes of the settled partitions, by partition. */
  public List<PartitionOutcome> outcomes() {
    return Collections.unmodifiableList(new ArrayList<>(outcomes.values()));
  }

  /** The partitions this session covers (known to a responder after the Hello). */
  public int[] partitions() {
    return partitions == null ? new int[0] : partitions.clone();
  }

  // ---------------------------------------------------------------- dispatch

  private void dispatch(Envelope e) throws ProtocolException {
    switch (e.getBodyCase()) {
      case REFUSAL -> {
        Refusal r = e.getRefusal();
        fail(
            r.getCode(),
            "peer refused (" + r.getCode() + "): " + Wire.peerText(r.getMessage()),
            false,
            true);
      }
      case HELLO -> onHello(e.getHello());
      case HELLO_ACK -> onHelloAck(e.getHelloAck());
      case FINGERPRINTS -> onFingerprints(e.getFingerprints());
      case ESTIMATOR -> onEstimator(e.getEstimator());
      case IBLT -> onIblt(e.getIblt());
      case IBLT_REQUEST -> onIbltRequest(e.getIbltRequest());
      case DIGEST_REQUEST -> onDigestRequest(e.getDigestRequest());
      case DIGEST_CHUNK -> onDigestChunk(e.getDigestChunk());
      case MISSING -> onMissing(e.getMissing());
      case DONE -> onDone();
      default ->
          throw new ProtocolException(
              Code.MALFORMED, "unexpected message " + e.getBodyCase() + " in a reconcile session");
    }
  }

  private void expect(State want, String what) throws ProtocolException {
    if (state != want) {
      throw new ProtocolException(
          Code.MALFORMED, what + " in state " + state + " (expected " + want + ")");
    }
  }

  private void expectRole(Role want, String what) throws ProtocolException {
    if (role != want) {
      throw new ProtocolException(
          Code.MALFORMED, what + " sent to the " + role.name().toLowerCase(java.util.Locale.ROOT));
    }
  }

  // ---------------------------------------------------------------- handshake

  private void onHello(Hello h) throws ProtocolException {
    expectRole(Role.RESPONDER, "Hello");
    expect(State.AWAIT_HELLO, "Hello");
    peerNodeId = Wire.peerText(h.getNodeId());
    dryRun = h.getDryRun();
    if (h.getMinVersion() > Wire.FORMAT_VERSION || h.getMaxVersion() < Wire.FORMAT_VERSION) {
      throw new ProtocolException(
          Code.VERSION,
          "peer speaks protocol versions ["
              + h.getMinVersion()
              + ", "
              + h.getMaxVersion()
              + "], this peer speaks ["
              + Wire.FORMAT_VERSION
              + ", "
              + Wire.FORMAT_VERSION
              + "]");
    }
    if (!h.getClusterId().equals(config.clusterId())) {
      throw new ProtocolException(
          Code.CLUSTER,
          "cluster id mismatch: peer '"
              + h.getClusterId()
              + "', local '"
              + config.clusterId()
              + "'");
    }
    checkParams(h.getParams());
    if (!h.getModesList().contains(Mode.MODE_ESTIMATOR_IBLT)) {
      throw new ProtocolException(
          Code.PARAMS,
          "no common mode: peer offers " + h.getModesList() + ", local MODE_ESTIMATOR_IBLT");
    }
    if (h.getPartitionsCount() == 0) {
      partitions = checkedPartitions(null);
    } else {
      if (h.getPartitionsCount() > params.partitions()) {
        throw new ProtocolException(
            Code.LIMIT,
            h.getPartitionsCount() + " partitions requested, there are " + params.partitions());
      }
      int[] req = new int[h.getPartitionsCount()];
      for (int i = 0; i < req.length; i++) {
        req[i] = h.getPartitions(i);
      }
      try {
        partitions = checkedPartitions(req);
      } catch (IllegalArgumentException ex) {
        throw new ProtocolException(Code.MALFORMED, ex.getMessage());
      }
    }
    queue(
        Envelope.newBuilder()
            .setHelloAck(
                HelloAck.newBuilder()
                    .setVersion(Wire.FORMAT_VERSION)
                    .setNodeId(config.nodeId())
                    .setParams(params.toProto())
                    .setMode(Mode.MODE_ESTIMATOR_IBLT)));
    state = State.AWAIT_FINGERPRINTS;
  }

  private void onHelloAck(HelloAck a) throws ProtocolException {
    expectRole(Role.INITIATOR, "HelloAck");
    expect(State.AWAIT_HELLO_ACK, "HelloAck");
    peerNodeId = a.getNodeId();
    if (a.getVersion() != Wire.FORMAT_VERSION) {
      throw new ProtocolException(
          Code.VERSION,
          "peer chose version " + a.getVersion() + ", this peer speaks " + Wire.FORMAT_VERSION);
    }
    checkParams(a.getParams());
    queue(Envelope.newBuilder().setFingerprints(fingerprintSet()));
    state = State.RECONCILING;
  }

  private void checkParams(dev.reconcile.core.wire.SketchParams p) throws ProtocolException {
    HashSpec spec = params.spec();
    if (p.getHashId() != spec.id()) {
      throw new ProtocolException(
          Code.HASH, "hash id mismatch: peer " + p.getHashId() + ", local " + spec.id());
    }
    if (p.getSeedFingerprint() != spec.seedFingerprint()) {
      throw new ProtocolException(
          Code.SEED,
          "hash seed fingerprint mismatch: peer "
              + HashSpec.hex(p.getSeedFingerprint())
              + ", local "
              + HashSpec.hex(spec.seedFingerprint())
              + " (the peers are configured with different seeds)");
    }
    mismatch("partitions log2", p.getPartitionsLog2(), params.partitionsLog2());
    mismatch("IBLT hash count", p.getIbltHashCount(), params.ibltHashCount());
    mismatch("IBLT max log2", p.getIbltMaxLog2(), params.ibltMaxLog2());
    if (!p.getEstimator().equals(params.estimator())) {
      throw new ProtocolException(
          Code.PARAMS,
          "estimator parameters mismatch: peer {"
              + oneLine(p.getEstimator())
              + "}, local {"
              + oneLine(params.estimator())
              + "}");
    }
  }

  private static String oneLine(Object o) {
    return o.toString().trim().replace('\n', ' ');
  }

  private static void mismatch(String what, int peer, int mine) throws ProtocolException {
    if (peer != mine) {
      throw new ProtocolException(
          Code.PARAMS, what + " mismatch: peer " + peer + ", local " + mine);
    }
  }

  // ---------------------------------------------------------------- fingerprints

  private FingerprintSet fingerprintSet() {
    Fingerprint[] fps = new Fingerprint[partitions.length];
    FingerprintSet.Builder b = FingerprintSet.newBuilder();
    for (int i = 0; i < partitions.length; i++) {
      fps[i] = local.fingerprint(partitions[i]);
      b.addPartitions(partitions[i]);
    }
    return b.setPacked(Wire.packFingerprints(fps)).build();
  }

  private Fingerprint[] readFingerprints(FingerprintSet f) throws ProtocolException {
    if (f.getPartitionsCount() != partitions.length) {
      throw new ProtocolException(
          Code.MALFORMED,
          "fingerprints of "
              + f.getPartitionsCount()
              + " partitions, session covers "
              + partitions.length);
    }
    for (int i = 0; i < partitions.length; i++) {
      if (f.getPartitions(i) != partitions[i]) {
        throw new ProtocolException(
            Code.MALFORMED,
            "fingerprint "
                + i
                + " is of partition "
                + f.getPartitions(i)
                + ", expected "
                + partitions[i]);
      }
    }
    return Wire.unpackFingerprints(f.getPacked(), partitions.length);
  }

  private void onFingerprints(FingerprintSet f) throws ProtocolException {
    Fingerprint[] remote;
    if (role == Role.RESPONDER) {
      expect(State.AWAIT_FINGERPRINTS, "FingerprintSet");
      remote = readFingerprints(f);
      queue(Envelope.newBuilder().setFingerprints(fingerprintSet()));
      state = State.RECONCILING;
    } else {
      expect(State.RECONCILING, "FingerprintSet");
      if (!parts.isEmpty() || !outcomes.isEmpty()) {
        throw new ProtocolException(Code.MALFORMED, "second FingerprintSet");
      }
      remote = readFingerprints(f);
    }
    List<Part> sketched = new ArrayList<>();
    for (int i = 0; i < partitions.length; i++) {
      int p = partitions[i];
      Fingerprint mine = local.fingerprint(p);
      if (mine.equals(remote[i])) {
        stats.fastPath++;
        stats.roundTrips = Math.max(stats.roundTrips, 2);
        outcomes.put(
            p,
            new PartitionOutcome(
                p, PartitionOutcome.Path.FAST, new long[0], new long[0], 0, 0, null));
        continue;
      }
      Part part = new Part(p);
      part.localCount = mine.count();
      part.remoteCount = remote[i].count();
      parts.put(p, part);
      if (role == Role.INITIATOR) {
        part.phase = Phase.WAIT_OFFER;
      } else {
        part.phase = Phase.WAIT_TABLE;
        sketched.add(part);
      }
    }
    if (!sketched.isEmpty()) {
      long remoteTotal = 0;
      for (Part part : sketched) {
        remoteTotal += Math.max(0, part.remoteCount);
      }
      if (remoteTotal * 8 <= estimatorBytes()) {
        // The initiator's whole lists are smaller than one estimator: ask for them.
        for (Part part : sketched) {
          requestDigests(part, 1);
        }
        sketched.clear();
      }
    }
    if (!sketched.isEmpty()) {
      // One estimator for all sketched partitions: estimators are linear, so their sum estimates
      // the total difference over them at the cost of one estimator instead of one per partition.
      DifferenceEstimator sum = local.estimator(sketched.get(0).partition);
      long count = sketched.get(0).localCount;
      EstimatorOffer.Builder offer =
          EstimatorOffer.newBuilder().setPartition(sketched.get(0).partition);
      offer.addPartitions(sketched.get(0).partition);
      for (int j = 1; j < sketched.size(); j++) {
        sum.merge(local.estimator(sketched.get(j).partition));
        count += sketched.get(j).localCount;
        offer.addPartitions(sketched.get(j).partition);
      }
      queue(Envelope.newBuilder().setEstimator(offer.setCount(count).setEstimator(sum.toProto())));
    }
    if (role == Role.INITIATOR) {
      finishIfSettled();
    }
  }

  private long estimatorWireBytes = -1;

  private long estimatorBytes() {
    if (estimatorWireBytes < 0) {
      estimatorWireBytes = local.estimator(partitions[0]).wireBytes();
    }
    return estimatorWireBytes;
  }

  // ---------------------------------------------------------------- initiator

  private Part part(int p, String what) throws ProtocolException {
    Part part = parts.get(p);
    if (part == null) {
      throw new ProtocolException(
          Code.MALFORMED, what + " for partition " + p + ", which is not being reconciled");
    }
    return part;
  }

  private void onEstimator(EstimatorOffer o) throws ProtocolException {
    expectRole(Role.INITIATOR, "EstimatorOffer");
    expect(State.RECONCILING, "EstimatorOffer");
    List<Integer> listed =
        o.getPartitionsCount() == 0 ? List.of(o.getPartition()) : o.getPartitionsList();
    if (listed.size() > parts.size()) {
      throw new ProtocolException(
          Code.MALFORMED,
          "EstimatorOffer lists " + listed.size() + " partitions, " + parts.size() + " differ");
    }
    List<Part> covered = new ArrayList<>(listed.size());
    DifferenceEstimator sum = null;
    for (int p : listed) {
      Part part = part(p, "EstimatorOffer");
      if (part.phase != Phase.WAIT_OFFER) {
        throw new ProtocolException(
            Code.MALFORMED, "EstimatorOffer for partition " + p + " in phase " + part.phase);
      }
      part.phase = Phase.WAIT_RESULT; // also rejects a partition listed twice
      covered.add(part);
      DifferenceEstimator e = local.estimator(p);
      if (sum == null) {
        sum = e;
      } else {
        sum.merge(e);
      }
    }
    Estimate estimate;
    try {
      estimate = sum.estimate(o.getEstimator());
    } catch (FormatException ex) {
      throw new ProtocolException(
          Code.MALFORMED, "estimator of partitions " + listed + ": " + ex.getMessage());
    }
    // Plan: the total with room for the estimator's error (sizing factor), never below the
    // difference in element counts (a lower bound). The fewest groups of partitions whose tables
    // leave room for one doubling below the largest table; with several groups each gets its share
    // plus room for the spread of a random split (3 standard deviations of a Poisson share).
    long countBound = 0;
    for (Part part : covered) {
      countBound += Math.abs(part.localCount - part.remoteCount);
    }
    long total = estimate.value();
    double factor = estimate.exact() ? 1.0 : sum.sizingFactor();
    long planned = Math.max(1, Math.max((long) Math.ceil(total * factor), countBound));
    long room = params.maxShape().cells() / 2;
    int g = 1;
    while (g < covered.size() && Sizing.cellsFor(groupShare(planned, g)) > room) {
      g++;
    }
    List<List<Part>> split = new ArrayList<>();
    for (int j = 0; j < g; j++) {
      split.add(new ArrayList<>());
    }
    for (int j = 0; j < covered.size(); j++) {
      split.get(j % g).add(covered.get(j));
    }
    for (List<Part> members : split) {
      long bound = 0;
      long listBytes = 0;
      for (Part part : members) {
        bound += Math.abs(part.localCount - part.remoteCount);
        listBytes += part.localCount * 8;
        part.estimate = Math.round(total / (double) covered.size());
      }
      long d = Math.max(groupShare(planned, g), bound);
      IbltShape shape = params.shapeWithAtLeast(Sizing.cellsFor(d));
      if (shape == null || shape.cells() * CellLayout.WIDE.cellBytes() >= listBytes) {
        // The table would not fit, or would cost more than the sorted lists themselves.
        for (Part part : members) {
          sendDigests(part);
        }
      } else {
        Group group = newGroup(members);
        group.estimate = Math.round(total * (double) members.size() / covered.size());
        sendTable(group, shape);
      }
    }
  }

  /** Planned difference of one of {@code g} groups sharing {@code planned}. */
  private static long groupShare(long planned, int g) {
    if (g == 1) {
      return planned;
    }
    double share = planned / (double) g;
    return (long) Math.ceil(share + 3 * Math.sqrt(share) + 1);
  }

  private Group newGroup(List<Part> members) {
    int[] ps = new int[members.size()];
    for (int j = 0; j < ps.length; j++) {
      ps[j] = members.get(j).partition;
    }
    Arrays.sort(ps);
    Group group = new Group(ps);
    for (Part part : members) {
      part.group = group;
    }
    groups.put(group.key, group);
    return group;
  }

  private void sendTable(Group group, IbltShape shape) {
    group.attempts++;
    group.lastShape = shape;
    stats.ibltCells += shape.cells();
    Iblt t = local.iblt(group.partitions[0], shape);
    for (int j = 1; j < group.partitions.length; j++) {
      t.add(local.iblt(group.partitions[j], shape));
    }
    IbltOffer.Builder b =
        IbltOffer.newBuilder()
            .setPartition(group.partitions[0])
            .setAttempt(group.attempts)
            .setEstimate(Math.max(0, group.estimate))
            .setTable(Wire.toProto(t));
    for (int p : group.partitions) {
      b.addPartitions(p);
    }
    queue(Envelope.newBuilder().setIblt(b));
  }

  private void sendDigests(Part part) {
    part.fallback = true;
    stats.fallbacks++;
    int chunk = config.limits().chunkElements();
    int p = part.partition;
    ElementCursor cursor = local.sortedElements(p);
    long[] buf = new long[chunk];
    outbox.add(
        new Producer() {
          boolean finished;

          @Override
          public Envelope.Builder next() {
            if (finished) {
              return null;
            }
            int n = 0;
            while (n < chunk && cursor.next()) {
              buf[n++] = cursor.element();
            }
            boolean last = n < chunk;
            if (last) {
              finished = true;
              cursor.close();
            }
            return Envelope.newBuilder()
                .setDigestChunk(
                    DigestChunk.newBuilder()
                        .setPartition(p)
                        .setElements(Wire.packLongs(buf, 0, n))
                        .setLast(last));
          }
        });
  }

  private void onIbltRequest(IbltRequest r) throws ProtocolException {
    expectRole(Role.INITIATOR, "IbltRequest");
    expect(State.RECONCILING, "IbltRequest");
    int[] listed = listedPartitions(r.getPartitionsList(), r.getPartition(), "IbltRequest");
    IbltShape want = Wire.fromProto(r.getShape());
    Group outstanding = null;
    for (int p : listed) {
      Part part = part(p, "IbltRequest");
      if (part.phase != Phase.WAIT_RESULT || part.group == null || part.fallback) {
        throw new ProtocolException(
            Code.MALFORMED, "IbltRequest for partition " + p + " with no table outstanding");
      }
      if (outstanding == null) {
        outstanding = part.group;
      } else if (outstanding != part.group) {
        throw new ProtocolException(
            Code.MALFORMED, "IbltRequest spans several groups: " + Arrays.toString(listed));
      }
    }
    Group group;
    if (Arrays.equals(listed, outstanding.partitions)) {
      IbltShape next = nextShape(outstanding.lastShape);
      if (!want.equals(next)) {
        throw new ProtocolException(
            Code.MALFORMED,
            "IbltRequest for shape "
                + want
                + ", the next shape after "
                + outstanding.lastShape
                + " is "
                + next);
      }
      group = outstanding;
    } else {
      // A split of a group whose largest table failed: the same largest shape for a part of it.
      if (!outstanding.lastShape.equals(params.maxShape()) || !want.equals(params.maxShape())) {
        throw new ProtocolException(
            Code.MALFORMED,
            "IbltRequest splits group " + outstanding.key + " before its largest table failed");
      }
      List<Part> members = new ArrayList<>();
      for (int p : listed) {
        members.add(parts.get(p));
      }
      group = newGroup(members);
      group.attempts = outstanding.attempts;
      group.estimate = outstanding.estimate * listed.length / outstanding.partitions.length;
    }
    if (group.attempts >= MAX_ATTEMPTS) {
      throw new ProtocolException(
          Code.LIMIT, "more than " + MAX_ATTEMPTS + " tables asked for partitions " + group.key);
    }
    stats.decodeFailures++;
    stats.doublings++;
    sendTable(group, want);
  }

  /** Most tables one partition may be sent (doublings and splits): bounds a hostile responder. */
  static final int MAX_ATTEMPTS = 64;

  private int[] listedPartitions(List<Integer> list, int single, String what)
      throws ProtocolException {
    int[] ps;
    if (list.isEmpty()) {
      ps = new int[] {single};
    } else {
      if (list.size() > parts.size()) {
        throw new ProtocolException(
            Code.MALFORMED,
            what + " lists " + list.size() + " partitions, " + parts.size() + " differ");
      }
      ps = new int[list.size()];
      for (int j = 0; j < ps.length; j++) {
        ps[j] = list.get(j);
      }
    }
    for (int j = 1; j < ps.length; j++) {
      if (ps[j] <= ps[j - 1]) {
        throw new ProtocolException(
            Code.MALFORMED, what + " partitions are not ascending: " + Arrays.toString(ps));
      }
    }
    return ps;
  }

  private void onDigestRequest(DigestRequest r) throws ProtocolException {
    expectRole(Role.INITIATOR, "DigestRequest");
    expect(State.RECONCILING, "DigestRequest");
    Part part = part(r.getPartition(), "DigestRequest");
    if (part.phase == Phase.WAIT_OFFER) {
      part.phase = Phase.WAIT_RESULT;
    } else if (part.phase != Phase.WAIT_RESULT || part.fallback) {
      throw new ProtocolException(
          Code.MALFORMED,
          "DigestRequest for partition " + part.partition + " in phase " + part.phase);
    } else {
      stats.decodeFailures++;
    }
    sendDigests(part);
  }

  private void onMissing(MissingChunk m) throws ProtocolException {
    expectRole(Role.INITIATOR, "MissingChunk");
    expect(State.RECONCILING, "MissingChunk");
    Part part = part(m.getPartition(), "MissingChunk");
    if (part.phase != Phase.WAIT_RESULT) {
      throw new ProtocolException(
          Code.MALFORMED,
          "MissingChunk for partition " + part.partition + " in phase " + part.phase);
    }
    int cap = config.limits().maxMissingPerPartition();
    int room = cap - part.missingLocal.size() - part.missingRemote.size();
    long[] atI = Wire.unpackLongs(m.getMissingAtInitiator(), Math.max(0, room), "MissingChunk");
    long[] atR =
        Wire.unpackLongs(m.getMissingAtResponder(), Math.max(0, room - atI.length), "MissingChunk");
    part.missingLocal.addAll(atI);
    part.missingRemote.addAll(atR);
    if (!m.getLast()) {
      return;
    }
    // Verify against our own set: what we lack must be absent here, what they lack present.
    part.missingRemote = verified(part.partition, part.missingRemote, true);
    part.missingLocal = verified(part.partition, part.missingLocal, false);
    settle(
        part,
        m.getFallback() || part.fallback
            ? PartitionOutcome.Path.FALLBACK
            : PartitionOutcome.Path.IBLT);
    finishIfSettled();
  }

  /**
   * Keeps the listed elements that are present here ({@code present}) or absent here (not {@code
   * present}); counts the others as unverified. An element fails this check when the decode was
   * wrong (a random element is never present) or when a write changed the set during the session;
   * either way nothing may be done with it, and the next round sees any difference that remains.
   */
  private LongList verified(int p, LongList list, boolean present) {
    long[] xs = list.toArray();
    boolean[] here = xs.length == 0 ? new boolean[0] : local.containsAll(p, xs);
    LongList out = new LongList(xs.length);
    for (int i = 0; i < xs.length; i++) {
      if (here[i] == present) {
        out.add(xs[i]);
      } else {
        stats.unverified++;
      }
    }
    return out;
  }

  private void finishIfSettled() {
    if (parts.values().stream().allMatch(x -> x.phase == Phase.SETTLED)) {
      queue(Envelope.newBuilder().setDone(Done.getDefaultInstance()));
      state = State.DONE;
    }
  }

  // ---------------------------------------------------------------- responder

  private void requestDigests(Part part, int reason) {
    part.phase = Phase.COLLECT_DIGESTS;
    part.fallback = true;
    if (role == Role.RESPONDER) {
      stats.fallbacks++;
    }
    queue(
        Envelope.newBuilder()
            .setDigestRequest(
                DigestRequest.newBuilder().setPartition(part.partition).setReason(reason)));
  }

  private void onIblt(IbltOffer o) throws ProtocolException {
    expectRole(Role.RESPONDER, "IbltOffer");
    expect(State.RECONCILING, "IbltOffer");
    int[] listed = listedPartitions(o.getPartitionsList(), o.getPartition(), "IbltOffer");
    Group group;
    IbltShape expected;
    if (o.getAttempt() == 1) {
      List<Part> members = new ArrayList<>();
      for (int p : listed) {
        Part part = part(p, "IbltOffer");
        if (part.phase != Phase.WAIT_TABLE || part.group != null) {
          throw new ProtocolException(
              Code.MALFORMED, "IbltOffer attempt 1 for partition " + p + " in phase " + part.phase);
        }
        members.add(part);
      }
      group = newGroup(members);
      group.estimate = o.getEstimate();
      expected = null;
    } else {
      group = groups.get(Arrays.toString(listed));
      if (group == null || group.requested == null || o.getAttempt() != group.attempts + 1) {
        throw new ProtocolException(
            Code.MALFORMED,
            "IbltOffer attempt "
                + o.getAttempt()
                + " for partitions "
                + Arrays.toString(listed)
                + " was not asked for");
      }
      expected = group.requested;
    }
    Iblt table = Wire.readIblt(o.getTable(), params, expected);
    stats.ibltCells += table.cells();
    group.attempts = o.getAttempt();
    group.lastShape = table.shape();
    group.requested = null;
    for (int p : group.partitions) {
      Part part = parts.get(p);
      part.estimate = Math.round(group.estimate / (double) group.partitions.length);
      table.subtract(local.iblt(p, table.shape()));
    }
    PeelResult r = table.peel();
    // Table = I - R: onlyHere = only at the initiator (missing here), onlyThere = only here.
    if (r.complete()) {
      for (int p : group.partitions) {
        Part part = parts.get(p);
        part.missingLocal = new LongList(16);
        part.missingRemote = new LongList(16);
      }
      distribute(group, r.onlyHere(), true);
      distribute(group, r.onlyThere(), false);
      for (int p : group.partitions) {
        Part part = parts.get(p);
        part.missingLocal = verified(p, part.missingLocal, false);
        part.missingRemote = verified(p, part.missingRemote, true);
        settle(part, PartitionOutcome.Path.IBLT);
        sendResult(part);
      }
      return;
    }
    stats.decodeFailures++;
    IbltShape next = nextShape(table.shape());
    if (next != null) {
      stats.doublings++;
      requestTable(group, next);
    } else if (group.partitions.length > 1) {
      // The largest table failed for several partitions: split the group, each half at the
      // largest shape again (each holds about half of the difference).
      stats.doublings++;
      int half = group.partitions.length / 2;
      for (int[] ps :
          new int[][] {
            Arrays.copyOfRange(group.partitions, 0, half),
            Arrays.copyOfRange(group.partitions, half, group.partitions.length)
          }) {
        List<Part> members = new ArrayList<>();
        for (int p : ps) {
          members.add(parts.get(p));
        }
        Group g = newGroup(members);
        g.attempts = group.attempts;
        g.estimate = group.estimate * ps.length / group.partitions.length;
        requestTable(g, next == null ? params.maxShape() : next);
      }
    } else {
      requestDigests(parts.get(group.partitions[0]), 2);
    }
  }

  private void requestTable(Group group, IbltShape shape) {
    group.requested = shape;
    IbltRequest.Builder b =
        IbltRequest.newBuilder().setPartition(group.partitions[0]).setShape(Wire.toProto(shape));
    for (int p : group.partitions) {
      b.addPartitions(p);
      parts.get(p).phase = Phase.WAIT_DOUBLED;
    }
    queue(Envelope.newBuilder().setIbltRequest(b));
  }

  /**
   * Files decoded elements under their partitions; an element of no group partition is unverified.
   */
  private void distribute(Group group, long[] elements, boolean missingHere) {
    for (long x : elements) {
      Part part = parts.get(HashSpec.partitionOfElement(x, params.partitionsLog2()));
      if (part == null || part.group != group) {
        stats.unverified++;
        continue;
      }
      (missingHere ? part.missingLocal : part.missingRemote).add(x);
    }
  }

  private void onDigestChunk(DigestChunk c) throws ProtocolException {
    expectRole(Role.RESPONDER, "DigestChunk");
    expect(State.RECONCILING, "DigestChunk");
    Part part = part(c.getPartition(), "DigestChunk");
    if (part.phase == Phase.WAIT_TABLE) {
      // The initiator chose the list itself: the table would not fit or would cost more.
      part.phase = Phase.COLLECT_DIGESTS;
      part.fallback = true;
      stats.fallbacks++;
    } else if (part.phase != Phase.COLLECT_DIGESTS) {
      throw new ProtocolException(
          Code.MALFORMED,
          "DigestChunk for partition " + part.partition + " in phase " + part.phase);
    }
    long[] remote =
        Wire.unpackLongs(c.getElements(), config.limits().chunkElements(), "DigestChunk");
    if (part.cursor == null) {
      part.cursor = local.sortedElements(part.partition);
      part.cursorValid = part.cursor.next();
      part.sawRemote = false;
    }
    int cap = config.limits().maxMissingPerPartition();
    ElementCursor cur = part.cursor;
    for (long r : remote) {
      if (part.sawRemote && Long.compareUnsigned(r, part.lastRemote) < 0) {
        closeCursor(part);
        throw new ProtocolException(
            Code.MALFORMED, "DigestChunk of partition " + part.partition + " is not sorted");
      }
      part.sawRemote = true;
      part.lastRemote = r;
      while (part.cursorValid && Long.compareUnsigned(cur.element(), r) < 0) {
        part.missingRemote.add(cur.element()); // only here: the initiator lacks it
        part.cursorValid = cur.next();
      }
      if (part.cursorValid && cur.element() == r) {
        part.cursorValid = cur.next();
      } else {
        part.missingLocal.add(r);
      }
      if (part.missingLocal.size() + part.missingRemote.size() > cap) {
        closeCursor(part);
        throw new ProtocolException(
            Code.LIMIT,
            "partition " + part.partition + " differs by more than " + cap + " elements");
      }
    }
    if (!c.getLast()) {
      return;
    }
    while (part.cursorValid) {
      part.missingRemote.add(cur.element());
      part.cursorValid = cur.next();
    }
    closeCursor(part);
    settle(part, PartitionOutcome.Path.FALLBACK);
    sendResult(part);
  }

  private static void closeCursor(Part part) {
    if (part.cursor != null) {
      part.cursor.close();
      part.cursor = null;
    }
  }

  private void sendResult(Part part) {
    // Responder side: what the initiator lacks is what only this side has.
    long[] atI = part.missingRemote.toArray();
    long[] atR = part.missingLocal.toArray();
    int chunk = config.limits().chunkElements();
    int p = part.partition;
    int attempts = part.attempts;
    boolean fallback = part.fallback;
    outbox.add(
        new Producer() {
          int i;
          int r;
          boolean finished;

          @Override
          public Envelope.Builder next() {
            if (finished) {
              return null;
            }
            int ni = Math.min(chunk, atI.length - i);
            int nr = Math.min(chunk - ni, atR.length - r);
            MissingChunk.Builder m =
                MissingChunk.newBuilder()
                    .setPartition(p)
                    .setMissingAtInitiator(Wire.packLongs(atI, i, i + ni))
                    .setMissingAtResponder(Wire.packLongs(atR, r, r + nr))
                    .setAttempts(attempts)
                    .setFallback(fallback);
            i += ni;
            r += nr;
            finished = i == atI.length && r == atR.length;
            return Envelope.newBuilder().setMissing(m.setLast(finished));
          }
        });
  }

  private void onDone() throws ProtocolException {
    expectRole(Role.RESPONDER, "Done");
    expect(State.RECONCILING, "Done");
    for (Part part : parts.values()) {
      if (part.phase != Phase.SETTLED) {
        throw new ProtocolException(
            Code.MALFORMED,
            "Done while partition " + part.partition + " is in phase " + part.phase);
      }
    }
    state = State.DONE;
  }

  // ---------------------------------------------------------------- common

  private void settle(Part part, PartitionOutcome.Path path) {
    part.phase = Phase.SETTLED;
    // Hello and fingerprints (which carry the estimator back), then one per table or list sent.
    if (part.group != null) {
      part.attempts = part.group.attempts;
      part.lastShape = part.group.lastShape;
    }
    stats.roundTrips = Math.max(stats.roundTrips, 2 + part.attempts + (part.fallback ? 1 : 0));
    outcomes.put(
        part.partition,
        new PartitionOutcome(
            part.partition,
            path,
            part.missingLocal.toArray(),
            part.missingRemote.toArray(),
            part.estimate,
            part.attempts,
            path == PartitionOutcome.Path.IBLT ? part.lastShape : null));
  }

  /**
   * The table to ask for after {@code s} failed: at least twice the cells, capped at the largest.
   */
  IbltShape nextShape(IbltShape s) {
    IbltShape max = params.maxShape();
    if (s.cells() >= max.cells()) {
      return null;
    }
    IbltShape n = params.shapeWithAtLeast(2 * s.cells());
    return n == null ? max : n;
  }

  private void queue(Envelope.Builder b) {
    outbox.add(b);
  }

  private void fail(Code code, String message, boolean tellPeer, boolean byPeer) {
    for (Part part : parts.values()) {
      closeCursor(part);
    }
    outbox.clear();
    failure = new SessionFailure(code, message, byPeer);
    state = State.FAILED;
    if (tellPeer) {
      queue(
          Envelope.newBuilder().setRefusal(Refusal.newBuilder().setCode(code).setMessage(message)));
    }
  }

  private int[] checkedPartitions(int[] requested) {
    int n = params.partitions();
    if (requested == null) {
      int[] all = new int[n];
      for (int i = 0; i < n; i++) {
        all[i] = i;
      }
      return all;
    }
    int[] s = requested.clone();
    Arrays.sort(s);
    for (int i = 0; i < s.length; i++) {
      if (s[i] < 0 || s[i] >= n) {
        throw new IllegalArgumentException("partition " + s[i] + " outside [0, " + n + ")");
      }
      if (i > 0 && s[i] == s[i - 1]) {
        throw new IllegalArgumentException("partition " + s[i] + " listed twice");
      }
    }
    return s;
  }
}
