package dev.reconcile.core;

import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.RecordAck;
import dev.reconcile.core.wire.RecordBatch;
import dev.reconcile.core.wire.Refusal.Code;
import dev.reconcile.core.wire.RepairEnd;
import dev.reconcile.core.wire.RowBatch;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The repair stream, both ways at once: each side sends the records of the elements the peer lacks
 * as {@link RecordBatch} frames, in ascending partition order, with at most {@link
 * RepairConfig#window()} batches unacknowledged; the receiver checks each batch whole (checksum,
 * caps, every record of the batch's partition, no version from the future), applies it through its
 * {@link RecordStore} (only a whole, checked batch; each record atomically) and acknowledges it. A
 * side that has sent everything and had it acknowledged sends {@code RepairEnd}; once both have,
 * the session verifies ({@link Verify}).
 *
 * <p>Progress (initiator): a partition is marked repaired once its records went both ways: every
 * batch this side sent for it was acknowledged (for a partition sent whole, which the peer may load
 * and make visible only at the partition's end, also a batch of a later partition) and the
 * responder (which streams in ascending order) has moved past it. An interrupted round resumes with
 * the partitions not marked.
 */
final class RepairExchange {
  private final SessionContext ctx;
  private final RepairConfig config;
  private final Runnable bothEnded;

  /**
   * What to send of one partition: listed elements ({@link RecordStore#scanListed}: looked up, or
   * read by a filtered range scan), or every record (a bulk partition, read by a range scan of the
   * store without a lookup per element).
   */
  private static final class Source {
    final int partition;

    /** The listed elements, ascending; null for a bulk partition. */
    final long[] elements;

    RecordStore.PartitionScan scan;

    /** Records the scan returned so far. */
    long read;

    /** Bytes of this source's last batch of rows; 0 before the first. */
    int lastRowBytes;

    Source(int partition, long[] elements, RecordStore.PartitionScan scan) {
      this.partition = partition;
      this.elements = elements;
      this.scan = scan;
    }

    /** The next records of a bulk source as rows; 0 when done (and the scan closed). */
    int nextRows(RowBatches.Builder out, int maxRecords, long maxBytes) {
      int n = scan.nextRows(out, maxRecords, maxBytes);
      read += n;
      if (n == 0) {
        close();
      }
      return n;
    }

    /** The next records; empty when done (and the scan closed). */
    List<ReplicaRecord> nextRecords(int maxRecords, long maxBytes) {
      List<ReplicaRecord> out = scan.next(maxRecords, maxBytes);
      read += out.size();
      if (out.isEmpty()) {
        close();
      }
      return out;
    }

    /**
     * Of a listed source read to its end: the listed elements it found no record of (a request for
     * what this side does not hold, or a write since the round compared). An element shared by
     * several keys yields a record each, so this may count too few, never too many.
     */
    long unfound() {
      if (elements == null) {
        return 0;
      }
      long distinct = elements.length == 0 ? 0 : 1;
      for (int i = 1; i < elements.length; i++) {
        if (elements[i] != elements[i - 1]) {
          distinct++;
        }
      }
      return Math.max(0, distinct - read);
    }

    void close() {
      if (scan != null) {
        RecordStore.PartitionScan s = scan;
        scan = null;
        s.close();
      }
    }

    boolean done() {
      return scan == null;
    }
  }

  private final ArrayDeque<Source> sendQueue = new ArrayDeque<>();

  /** One batch to send: listed records, or the rows of a bulk partition. */
  private record Outgoing(List<ReplicaRecord> records, RowBatches.Builder rows) {}

  private final ArrayDeque<Outgoing> fetched = new ArrayDeque<>();
  private int fetchedPartition = -1;
  private long nextBatchSeq;
  private int inflight;
  private final Map<Long, Integer> batchPartition = new HashMap<>();
  private final Map<Integer, Integer> unackedByPartition = new HashMap<>();
  private boolean selfEnded;
  private boolean peerEnded;
  private int peerPartitionSeen = -1;

  /** The highest partition of a batch the peer acknowledged as applied. */
  private int maxAckedPartition = -1;

  private int marked; // partitions [0, marked) of ctx.partitions are marked

  /** The bulk partition being received, or null. */
  private RecordStore.PartitionLoad load;

  private int loadPartition = -1;

  /** {@code bothEnded} runs once both sides have sent {@code RepairEnd}. */
  RepairExchange(SessionContext ctx, Runnable bothEnded) {
    this.ctx = ctx;
    this.config = ctx.config.repair();
    this.bothEnded = bothEnded;
  }

  /** Starts streaming the records the peer lacks: listed ones, or whole bulk partitions. */
  void start() {
    for (PartitionOutcome o : ctx.outcomes.values()) {
      if (o.path() == PartitionOutcome.Path.BULK && o.lacksThere() > 0) {
        sendQueue.add(new Source(o.partition(), null, ctx.records.scan(o.partition(), ctx.local)));
      } else if (o.missingRemote().length > 0) {
        // In ascending order, each chunk of listed elements is a narrow range of the store's
        // index, which its lookups walk rather than seek (the agent's IndexWalk).
        long[] elements = o.missingRemote().clone();
        Arrays.sort(elements);
        sendQueue.add(
            new Source(o.partition(), elements, ctx.records.scanListed(o.partition(), elements)));
      }
    }
    ctx.out.add(
        new Outbox.Stream() {
          @Override
          public Envelope.Builder next() {
            return nextFrame();
          }

          @Override
          public boolean finished() {
            return selfEnded;
          }

          @Override
          public void close() {
            RuntimeException first = null;
            for (Source src : sendQueue) {
              first = Releases.run(src::close, first);
            }
            Releases.rethrow(first);
          }
        });
    updateProgress();
  }

  /** The next batch, the closing RepairEnd, or null while the window is full or acks are due. */
  private Envelope.Builder nextFrame() {
    if (selfEnded) {
      return null;
    }
    if (fetched.isEmpty() && !fetchMore()) {
      if (inflight > 0) {
        return null; // RepairEnd once every batch is acknowledged
      }
      selfEnded = true;
      Envelope.Builder end =
          Envelope.newBuilder()
              .setRepairEnd(
                  RepairEnd.newBuilder()
                      .setBatches(nextBatchSeq)
                      .setRecords(ctx.repair.recordsSent));
      updateProgress();
      maybeBothEnded();
      return end;
    }
    if (inflight >= config.window()) {
      return null;
    }
    Outgoing next = fetched.poll();
    int p = fetchedPartition;
    long seq = nextBatchSeq++;
    batchPartition.put(seq, p);
    unackedByPartition.merge(p, 1, Integer::sum);
    inflight++;
    ctx.repair.batchesSent++;
    if (next.rows() != null) {
      RowBatch rb = next.rows().build(p, seq);
      ctx.repair.rowBatchesSent++;
      ctx.repair.recordsSent += rb.getCount();
      ctx.repair.recordBytesSent += rb.getSerializedSize();
      return Envelope.newBuilder().setRowBatch(rb);
    }
    RecordBatch rb = RecordBatches.batch(p, seq, next.records());
    ctx.repair.recordsSent += next.records().size();
    ctx.repair.recordBytesSent += rb.getSerializedSize();
    return Envelope.newBuilder().setRecordBatch(rb);
  }

  /** Reads the records of the next elements to send into batches; false when nothing is left. */
  private boolean fetchMore() {
    while (fetched.isEmpty()) {
      Source src = sendQueue.peek();
      if (src == null) {
        return false;
      }
      if (ctx.rowBatches && (src.elements == null || src.scan.ranged() || src.scan.storedRows())) {
        // Rows: a bulk partition's, a list the store filters in place, or a list it looks up and
        // copies as stored (all read as stored rows); one batch per read, closed at the same caps
        // as records. A store whose lookups decode records keeps records: rows would cost its
        // sender an encoding, a value hash and a CRC per record (0.74 x at 64 KiB, benchmarks.md
        // section 3, "stop 37").
        RowBatches.Builder rows =
            new RowBatches.Builder(
                ctx.params.spec(),
                (int) Math.min(config.batchBytes() + (64 << 10), 1 << 30),
                src.lastRowBytes);
        src.nextRows(rows, batchRecords(src), config.batchBytes());
        src.lastRowBytes = rows.bytes();
        if (src.done()) {
          finished(sendQueue.poll());
        }
        if (rows.count() > 0) {
          fetchedPartition = src.partition;
          fetched.add(new Outgoing(null, rows));
        }
        continue;
      }
      List<ReplicaRecord> records = src.nextRecords(batchRecords(src), config.batchBytes());
      if (src.done()) {
        finished(sendQueue.poll());
      }
      if (!records.isEmpty()) {
        fetchedPartition = src.partition;
        splitIntoBatches(records);
      }
    }
    return true;
  }

  /**
   * A source read to its end: its listed elements without a record are counted ({@link
   * RepairStats#listedNotFound}). This is the check of a peer's request ({@link
   * ResultStream#onRecordRequest}), which looks nothing up before the stream does.
   */
  private void finished(Source src) {
    ctx.repair.listedNotFound += src.unfound();
  }

  /**
   * The most records of a batch of {@code src}: records read by a range scan (a bulk partition's,
   * or a list filtered in place) go in batches as large as a bulk partition's, looked-up ones in
   * batches of {@code batchRecords} (the elements looked up at once); all close at {@code
   * batchBytes}, so the bytes in flight stay {@code window x batchBytes} (see RepairConfig).
   */
  private int batchRecords(Source src) {
    return src.elements == null || src.scan.ranged()
        ? config.bulkBatchRecords()
        : config.batchRecords();
  }

  private void splitIntoBatches(List<ReplicaRecord> records) {
    List<ReplicaRecord> cur = new ArrayList<>();
    long bytes = 0;
    for (ReplicaRecord r : records) {
      long size = r.key().length + r.value().length + 32L;
      if (!cur.isEmpty() && bytes + size > config.batchBytes()) {
        fetched.add(new Outgoing(cur, null));
        cur = new ArrayList<>();
        bytes = 0;
      }
      cur.add(r);
      bytes += size;
    }
    if (!cur.isEmpty()) {
      fetched.add(new Outgoing(cur, null));
    }
  }

  /**
   * A batch from the peer: checked whole, applied (or taken by the load of a bulk partition,
   * visible once the partition's batches have all come), acknowledged.
   */
  void onBatch(RecordBatch b) throws ProtocolException, ApplyFailure {
    List<ReplicaRecord> checked = RecordBatches.read(b, config.maxBatchRecords());
    checkPartition(b, checked);
    List<ReplicaRecord> records = notFromTheFuture(checked);
    take(
        b.getPartition(),
        b.getBatchSeq(),
        l -> l != null ? l.add(records) : ctx.records.apply(records));
    ctx.repair.recordsReceived += checked.size();
    ctx.repair.recordBytesReceived += b.getSerializedSize();
    acknowledge(b.getPartition(), b.getBatchSeq());
  }

  /**
   * A batch of rows from the peer (a bulk partition, when both offered row batches): checked whole
   * ({@link RowBatches#read}), then taken as {@link #onBatch} takes records.
   */
  void onRowBatch(RowBatch b) throws ProtocolException, ApplyFailure {
    if (!ctx.rowBatches) {
      throw new ProtocolException(
          Code.MALFORMED, "RowBatch " + b.getBatchSeq() + " in a session without row batches");
    }
    checkRoundPartition(b.getPartition(), b.getBatchSeq());
    RowBatches.Rows checked =
        RowBatches.read(
            b, config.maxBatchRecords(), ctx.params.spec(), ctx.params.partitionsLog2());
    RowBatches.Rows rows = notFromTheFuture(checked);
    take(
        b.getPartition(),
        b.getBatchSeq(),
        l -> l != null ? l.addRows(rows) : ctx.records.applyRows(rows));
    ctx.repair.rowBatchesReceived++;
    ctx.repair.recordsReceived += checked.size();
    ctx.repair.recordBytesReceived += b.getSerializedSize();
    acknowledge(b.getPartition(), b.getBatchSeq());
  }

  /**
   * Applies batch {@code seq} of partition {@code p} through {@code write}, given the open load of
   * the partition (null when it is not received whole): through {@link RecordStore#apply}, or taken
   * by the load and visible once the partition's batches have all come.
   */
  private void take(int p, long seq, Function<RecordStore.PartitionLoad, ApplyOutcome> write)
      throws ApplyFailure {
    if (load != null && loadPartition != p) {
      int loaded = loadPartition;
      try {
        finishLoad();
      } catch (RuntimeException e) {
        throw new ApplyFailure(
            seq,
            "loading partition "
                + loaded
                + " failed before batch "
                + seq
                + ", nothing of that batch applied: "
                + e.getMessage());
      }
    }
    try {
      if (load == null && receivesWhole(p)) {
        load = ctx.records.load(p);
        loadPartition = p;
      }
      count(write.apply(load));
    } catch (RuntimeException e) {
      // The store's message says what it kept: nothing, or the slices before the failure.
      throw new ApplyFailure(seq, "apply of batch " + seq + " failed: " + e.getMessage());
    }
  }

  private void acknowledge(int p, long seq) {
    ctx.repair.batchesReceived++;
    ctx.out.addUrgent(
        Envelope.newBuilder()
            .setRecordAck(RecordAck.newBuilder().setBatchSeq(seq).setApplied(true)));
    peerPartitionSeen = Math.max(peerPartitionSeen, p);
    updateProgress();
  }

  /** True when this side streams partition {@code p} whole because the peer held none of it. */
  private boolean sentWhole(int p) {
    PartitionOutcome o = ctx.outcomes.get(p);
    return o != null && o.path() == PartitionOutcome.Path.BULK && o.lacksThere() > 0;
  }

  /** True when the peer streams partition {@code p} whole because this side held none of it. */
  private boolean receivesWhole(int p) {
    PartitionOutcome o = ctx.outcomes.get(p);
    return o != null && o.path() == PartitionOutcome.Path.BULK && o.lacksHere() > 0;
  }

  private void count(ApplyOutcome r) {
    ctx.repair.applied += r.applied();
    ctx.repair.stale += r.stale();
    ctx.repair.duplicate += r.duplicate();
  }

  /** Makes the open load's records visible and closes it. */
  private void finishLoad() {
    RecordStore.PartitionLoad l = load;
    load = null;
    loadPartition = -1;
    try (l) {
      count(l.finish());
    }
  }

  /** Drops the open load, if any (the session failed): what it had not made visible is lost. */
  void release() {
    if (load != null) {
      RecordStore.PartitionLoad l = load;
      load = null;
      loadPartition = -1;
      l.close();
    }
  }

  /** A received batch could not be applied; the session ends after telling the peer. */
  static final class ApplyFailure extends Exception {
    final long batchSeq;

    ApplyFailure(long batchSeq, String message) {
      super(message);
      this.batchSeq = batchSeq;
    }
  }

  /**
   * The partition field drives progress marks: it must be one of this round's partitions, and every
   * record's key must hash to it.
   */
  private void checkPartition(RecordBatch b, List<ReplicaRecord> records) throws ProtocolException {
    int p = b.getPartition();
    checkRoundPartition(p, b.getBatchSeq());
    HashSpec spec = ctx.params.spec();
    for (ReplicaRecord r : records) {
      int q = HashSpec.partition(spec.keyHash(r.key()), ctx.params.partitionsLog2());
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

  private void checkRoundPartition(int p, long seq) throws ProtocolException {
    if (Arrays.binarySearch(ctx.partitions, p) < 0) {
      throw new ProtocolException(
          Code.MALFORMED, "batch " + seq + " of partition " + p + ", not one of this round's");
    }
  }

  /** {@link #notFromTheFuture(List)} for rows. */
  private RowBatches.Rows notFromTheFuture(RowBatches.Rows in) {
    if (config.maxClockSkewMillis() == 0) {
      return in;
    }
    long limit = config.wallMillis().getAsLong() + config.maxClockSkewMillis();
    if (ReplicaRecord.physicalMillis(in.maxVersion()) <= limit) {
      return in; // none from the future: no walk over the rows
    }
    boolean[] drop = null;
    for (int i = 0; i < in.size(); i++) {
      if (ReplicaRecord.physicalMillis(in.version(i)) > limit) {
        ctx.repair.clockSkewRefused++;
        if (ctx.repair.clockSkewKeys.size() < RepairStats.SAMPLE_KEYS) {
          ctx.repair.clockSkewKeys.add(in.key(i));
        }
        if (drop == null) {
          drop = new boolean[in.size()];
        }
        drop[i] = true;
      }
    }
    return drop == null ? in : in.without(drop);
  }

  /**
   * The records whose version's physical time is at most the local wall clock plus the allowed
   * skew: a peer carries other nodes' writes and is trusted with them, but a version far in the
   * future would win every conflict and drag this node's clock along, so it is refused and counted.
   */
  private List<ReplicaRecord> notFromTheFuture(List<ReplicaRecord> in) {
    if (config.maxClockSkewMillis() == 0) {
      return in;
    }
    long limit = config.wallMillis().getAsLong() + config.maxClockSkewMillis();
    List<ReplicaRecord> out = null;
    for (int i = 0; i < in.size(); i++) {
      ReplicaRecord r = in.get(i);
      boolean future = ReplicaRecord.physicalMillis(r.version()) > limit;
      if (future) {
        ctx.repair.clockSkewRefused++;
        if (ctx.repair.clockSkewKeys.size() < RepairStats.SAMPLE_KEYS) {
          ctx.repair.clockSkewKeys.add(r.key());
        }
        if (out == null) {
          out = new ArrayList<>(in.subList(0, i));
        }
      } else if (out != null) {
        out.add(r);
      }
    }
    return out == null ? in : out;
  }

  /** The peer applied (or could not apply) one of this side's batches. */
  void onAck(RecordAck a) throws ProtocolException, PeerApplyFailure {
    Integer p = batchPartition.remove(a.getBatchSeq());
    if (p == null) {
      throw new ProtocolException(
          Code.MALFORMED, "acknowledgement of unknown batch " + a.getBatchSeq());
    }
    inflight--;
    unackedByPartition.merge(p, -1, Integer::sum);
    if (!a.getApplied()) {
      throw new PeerApplyFailure(
          "peer could not apply batch " + a.getBatchSeq() + ": " + Wire.peerText(a.getError()));
    }
    maxAckedPartition = Math.max(maxAckedPartition, p);
    updateProgress();
  }

  /** The peer reports that it could not apply a batch: the session ends, blamed on the peer. */
  static final class PeerApplyFailure extends Exception {
    PeerApplyFailure(String message) {
      super(message);
    }
  }

  /** The peer has sent all it had. */
  void onRepairEnd(RepairEnd e) throws ProtocolException {
    if (peerEnded) {
      throw new ProtocolException(Code.MALFORMED, "second RepairEnd");
    }
    if (e.getBatches() != ctx.repair.batchesReceived) {
      throw new ProtocolException(
          Code.MALFORMED,
          "RepairEnd after "
              + e.getBatches()
              + " batches, "
              + ctx.repair.batchesReceived
              + " were received");
    }
    if (load != null) {
      int loaded = loadPartition;
      try {
        finishLoad();
      } catch (RuntimeException ex) {
        // Every batch is acknowledged already: the peer hears it as a refusal, not as a batch.
        throw new ProtocolException(
            Code.INTERNAL,
            "loading partition "
                + loaded
                + " failed after its last batch, its records not applied: "
                + ex.getMessage());
      }
    }
    try {
      ctx.records.repairReceived();
    } catch (RuntimeException ex) {
      throw new ProtocolException(
          Code.INTERNAL,
          "the peer's "
              + ctx.repair.batchesReceived
              + " batches are applied but could not be made durable: "
              + ex.getMessage());
    }
    peerEnded = true;
    updateProgress();
    maybeBothEnded();
  }

  private void maybeBothEnded() {
    if (selfEnded && peerEnded) {
      bothEnded.run();
    }
  }

  private void updateProgress() {
    if (!ctx.initiator()) {
      return;
    }
    int sendingNow = Integer.MAX_VALUE;
    if (!fetched.isEmpty()) {
      sendingNow = fetchedPartition;
    } else if (!sendQueue.isEmpty()) {
      sendingNow = sendQueue.peek().partition;
    }
    int[] ps = ctx.partitions;
    while (marked < ps.length) {
      int p = ps[marked];
      // A partition sent whole may sit in the peer's load until the peer takes a batch of a later
      // partition (or this side's RepairEnd): only then are its acknowledged batches visible there.
      boolean sentAll =
          p < sendingNow
              && unackedByPartition.getOrDefault(p, 0) == 0
              && (!sentWhole(p) || p < maxAckedPartition);
      boolean receivedAll = peerEnded || p < peerPartitionSeen;
      if (!(sentAll && receivedAll)) {
        break;
      }
      ctx.progress.partitionRepaired(p);
      marked++;
    }
  }
}
