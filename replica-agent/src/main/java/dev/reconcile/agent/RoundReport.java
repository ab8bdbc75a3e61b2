package dev.reconcile.agent;

import dev.reconcile.core.PartitionOutcome;
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
  public int partitions;
  public int resumedFrom;
  public int fastPath;
  public int ibltPartitions;
  public int fallbackPartitions;
  public long estimate;
  public long missingLocal;
  public long missingRemote;
  public SessionStats stats;
  public long recordsSent;
  public long recordsReceived;
  public long recordBytesSent;
  public long recordBytesReceived;
  public long batchesSent;
  public long applied;
  public long stale;
  public long duplicate;

  /** Received records refused because their version lies more than max-clock-skew in the future. */
  public long clockSkewRefused;

  public final List<Integer> stillDiffering = new ArrayList<>();
  public final List<PartitionOutcome> outcomes = new ArrayList<>();

  /** Outcome counts and totals from the session's outcomes. */
  void summarize(List<PartitionOutcome> os) {
    outcomes.clear();
    outcomes.addAll(os);
    fastPath = 0;
    ibltPartitions = 0;
    fallbackPartitions = 0;
    estimate = 0;
    missingLocal = 0;
    missingRemote = 0;
    for (PartitionOutcome o : os) {
      switch (o.path()) {
        case FAST -> fastPath++;
        case IBLT -> ibltPartitions++;
        case FALLBACK -> fallbackPartitions++;
      }
      estimate += Math.max(0, o.estimate());
      missingLocal += o.missingLocal().length;
      missingRemote += o.missingRemote().length;
    }
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
            .put("partitions", partitions)
            .put("resumedFrom", resumedFrom)
            .put("fastPath", fastPath)
            .put("ibltPartitions", ibltPartitions)
            .put("fallbackPartitions", fallbackPartitions)
            .put("estimatedDifference", estimate)
            .put("difference", missingLocal + missingRemote)
            .put("missingLocal", missingLocal)
            .put("missingRemote", missingRemote)
            .put("recordsSent", recordsSent)
            .put("recordsReceived", recordsReceived)
            .put("recordBytesSent", recordBytesSent)
            .put("recordBytesReceived", recordBytesReceived)
            .put("batchesSent", batchesSent)
            .put("applied", applied)
            .put("stale", stale)
            .put("duplicate", duplicate)
            .put("clockSkewRefused", clockSkewRefused)
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
              .put("handshakeBytes", stats.handshakeBytes())
              .put("fingerprintBytes", stats.fingerprintBytes())
              .put("estimatorBytes", stats.estimatorBytes())
              .put("ibltBytes", stats.ibltBytes())
              .put("digestBytes", stats.digestBytes())
              .put("resultBytes", stats.resultBytes())
              .put("decodeFailures", stats.decodeFailures())
              .put("doublings", stats.doublings())
              .put("fallbacks", stats.fallbacks())
              .put("ibltCells", stats.ibltCells())
              .put("unverified", stats.unverified())
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
                .put("missingLocal", o.missingLocal().length)
                .put("missingRemote", o.missingRemote().length));
      }
    }
    j.put("unequalPartitions", parts);
    return j;
  }
}
