package dev.reconcile.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.ProtocolException;
import dev.reconcile.core.RecordBatches;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.RecordBatch;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;

/**
 * A live agent as a {@code diff}/{@code estimate} side ({@code agent:HOST:PORT}, its HTTP address):
 * sketches through {@link RemoteSketches}, keys of differing elements through {@code POST
 * /sketch/records} (which needs the admin token when the agent has tokens).
 *
 * <p>Elements of agent records include version and origin, while file and RocksDB sides use version
 * 0 and origin 0: compare agents with agents; against a file every record differs.
 */
final class AgentSide implements Side {
  private final String label;
  private final AgentSideHttp http;
  private final Duration timeout;
  private String describe;

  AgentSide(String label, String token, Duration timeout) {
    this.label = label;
    this.http = new AgentSideHttp(label, AgentSideHttp.parse(label, false), token, false, timeout);
    this.timeout = timeout;
    this.describe = label + ": not read";
  }

  @Override
  public String label() {
    return label;
  }

  @Override
  public PartitionSketches sketches(SketchParams params, EstimatorFactory estimators) {
    JsonObject s = http.getJson("/status", timeout);
    describe =
        label
            + ": agent "
            + s.getString("nodeId", "?")
            + ", "
            + s.getLong("records", -1L)
            + " records (tombstones included)";
    return RemoteSketches.open(http, params, estimators, timeout);
  }

  @Override
  public KeyList keysOf(long[] sortedElements) {
    KeyList.Builder b = new KeyList.Builder();
    if (sortedElements.length > 0) {
      byte[] body = Wire.packLongs(sortedElements, 0, sortedElements.length).toByteArray();
      List<ReplicaRecord> records;
      try {
        RecordBatch batch = RecordBatch.parseFrom(http.postBytes("/sketch/records", body, timeout));
        records = RecordBatches.read(batch, Integer.MAX_VALUE);
      } catch (InvalidProtocolBufferException | ProtocolException e) {
        throw new CliException(label + ": bad records answer: " + e.getMessage());
      }
      for (ReplicaRecord r : records) {
        b.add(r.key(), 0, r.key().length);
      }
    }
    return b.build();
  }

  @Override
  public String describe() {
    return describe;
  }

  @Override
  public void close() {}
}
