package dev.reconcile.agent;

import dev.reconcile.core.OutcomeSummary;
import dev.reconcile.core.PartitionOutcome;
import dev.reconcile.core.ReconcileSession;
import dev.reconcile.core.RepairStats;
import dev.reconcile.core.SessionStats;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/** What one reconciliation round with one peer did; served as JSON by {@code POST /repair}. */
public final class RoundReport {
  public String peer = "";
  public String peerNodeId = "";
  public String role = "";
  public boolean dryRun;
  public boolean ok;
  public String error;
  public long startedAtMillis;
  public long sessionMillis;
  public long durationMillis;

  /** {@link #sessionMillis} in microseconds (truncated): for timings finer than a millisecond. */
  public long sessionMicros;

  /** {@link #durationMillis} in microseconds (truncated). */
  public long durationMicros;

  public int partitions;
  public int resumedFrom;
  public int fastPath;
  public int ibltPartitions;
  public int fallbackPartitions;
  public int ratelessPartitions;
  public int bulkPartitions;
  public int partialPartitions;
  public long estimate;
  public long expectedDifference;
  public long missingLocal;
  public long missingRemote;
  public SessionStats stats;
  public long recordsSent;
  public long recordsReceived;
  public long recordBytesSent;
  public long recordBytesReceived;
  public long batchesSent;

  /** Of the batches, those sent and received as rows (bulk partitions, wire-format.md). */
  public long rowBatchesSent;

  public long rowBatchesReceived;
  public long applied;
  public long stale;
  public long duplicate;

  /** Received records refused because their version lies more than max-clock-skew in the future. */
  public long clockSkewRefused;

  /** The first keys of those records, percent-encoded as in the HTTP API. */
  public final List<String> clockSkewKeys = new ArrayList<>();

  /** Elements the peer asked records for that this side held none of when it read them. */
  public long listedNotFound;

  public final List<Integer> stillDiffering = new ArrayList<>();
  public final List<PartitionOutcome> outcomes = new ArrayList<>();

  /** The report of a round this agent started with {@code peer} that failed with {@code error}. */
  static RoundReport initiatorFailure(String peer, String error) {
    RoundReport r = new RoundReport();
    r.peer = peer;
    r.role = "initiator";
    r.error = error;
    return r;
  }

  /** The report of {@code session} as it stands, for a round that started at {@code startNanos}. */
  static RoundReport of(ReconcileSession session, String peer, long startNanos) {
    RoundReport r = new RoundReport();
    long now = System.nanoTime();
    r.peer = peer;
    r.role = session.role() == ReconcileSession.Role.INITIATOR ? "initiator" : "responder";
    r.startedAtMillis = System.currentTimeMillis() - (now - startNanos) / 1_000_000;
    r.durationMicros = (now - startNanos) / 1_000;
    r.durationMillis = r.durationMicros / 1_000;
    long reconciled = session.reconciledAtNanos();
    r.sessionMicros = ((reconciled >= 0 ? reconciled : now) - startNanos) / 1_000;
    r.sessionMillis = r.sessionMicros / 1_000;
    r.peerNodeId = session.peerNodeId();
    r.dryRun = session.dryRun();
    r.partitions = session.partitions().length;
    r.stats = session.stats();
    r.outcomes.addAll(session.outcomes());
    OutcomeSummary sum = OutcomeSummary.of(r.outcomes);
    r.fastPath = sum.fastPath();
    r.ibltPartitions = sum.iblt();
    r.fallbackPartitions = sum.fallback();
    r.ratelessPartitions = sum.rateless();
    r.bulkPartitions = sum.bulk();
    r.partialPartitions = sum.partial();
    r.estimate = sum.estimate();
    r.expectedDifference = session.expectedDifference();
    r.missingLocal = sum.missingLocal();
    r.missingRemote = sum.missingRemote();
    RepairStats rs = session.repairStats();
    r.recordsSent = rs.recordsSent();
    r.recordsReceived = rs.recordsReceived();
    r.recordBytesSent = rs.recordBytesSent();
    r.recordBytesReceived = rs.recordBytesReceived();
    r.batchesSent = rs.batchesSent();
    r.rowBatchesSent = rs.rowBatchesSent();
    r.rowBatchesReceived = rs.rowBatchesReceived();
    r.applied = rs.applied();
    r.stale = rs.stale();
    r.duplicate = rs.duplicate();
    r.clockSkewRefused = rs.clockSkewRefused();
    r.listedNotFound = rs.listedNotFound();
    for (byte[] k : rs.clockSkewKeys()) {
      r.clockSkewKeys.add(KeyCodec.encode(k));
    }
    r.stillDiffering.addAll(rs.stillDiffering());
    return r;
  }

  public JsonObject toJson() {
    JsonObject j =
        new JsonObject()
            .put("peer", peer)
            .put("peerNodeId", peerNodeId)
            .put("role", role)
            .put("dryRun", dryRun)
            .put("ok", ok)
            .put("error", error)
            .put("startedAtMillis", startedAtMillis)
            .put("sessionMillis", sessionMillis)
            .put("durationMillis", durationMillis)
            .put("sessionMicros", sessionMicros)
            .put("durationMicros", durationMicros)
            .put("partitions", partitions)
            .put("resumedFrom", resumedFrom)
            .put("fastPath", fastPath)
            .put("ibltPartitions", ibltPartitions)
            .put("fallbackPartitions", fallbackPartitions)
            .put("ratelessPartitions", ratelessPartitions)
            .put("bulkPartitions", bulkPartitions)
            .put("partialPartitions", partialPartitions)
            .put("estimatedDifference", estimate)
            .put("expectedDifference", expectedDifference)
            .put("difference", missingLocal + missingRemote)
            .put("missingLocal", missingLocal)
            .put("missingRemote", missingRemote)
            .put("recordsSent", recordsSent)
            .put("recordsReceived", recordsReceived)
            .put("recordBytesSent", recordBytesSent)
            .put("recordBytesReceived", recordBytesReceived)
            .put("batchesSent", batchesSent)
            .put("rowBatchesSent", rowBatchesSent)
            .put("rowBatchesReceived", rowBatchesReceived)
            .put("applied", applied)
            .put("stale", stale)
            .put("duplicate", duplicate)
            .put("clockSkewRefused", clockSkewRefused)
            .put("listedNotFound", listedNotFound)
            .put("clockSkewKeys", new JsonArray(new ArrayList<>(clockSkewKeys)))
            .put("stillDiffering", new JsonArray(new ArrayList<>(stillDiffering)));
    if (dryRun) {
      j.put("wouldSend", missingRemote).put("wouldReceive", missingLocal);
    }
    if (stats != null) {
      j.put(
          "protocol",
          new JsonObject()
              .put("bytesSent", stats.bytesSent())
              .put("bytesReceived", stats.bytesReceived())
              .put("protocolBytes", stats.protocolBytes())
              .put("handshakeBytes", stats.handshakeBytes())
              .put("fingerprintBytes", stats.fingerprintBytes())
              .put("estimatorBytes", stats.estimatorBytes())
              .put("ibltBytes", stats.ibltBytes())
              .put("digestBytes", stats.digestBytes())
              .put("resultBytes", stats.resultBytes())
              .put("symbolBytes", stats.symbolBytes())
              .put("decodeFailures", stats.decodeFailures())
              .put("doublings", stats.doublings())
              .put("fallbacks", stats.fallbacks())
              .put("ratelessSplits", stats.splits())
              .put("ibltCells", stats.ibltCells())
              .put("unverified", stats.unverified())
              .put("checkedByFingerprint", stats.checkedByFingerprint())
              .put("roundTrips", stats.roundTrips()));
    }
    JsonArray parts = new JsonArray();
    for (PartitionOutcome o : outcomes) {
      if (o.path() != PartitionOutcome.Path.FAST) {
        parts.add(
            new JsonObject()
                .put("partition", o.partition())
                .put("path", o.path().name().toLowerCase(java.util.Locale.ROOT))
                .put("estimate", o.estimate())
                .put("attempts", o.attempts())
                .put("tableCells", o.finalShape() == null ? 0 : o.finalShape().cells())
                .put("missingLocal", o.lacksHere())
                .put("missingRemote", o.lacksThere())
                .put("partial", o.partial()));
      }
    }
    j.put("unequalPartitions", parts);
    return j;
  }
}
