package dev.reconcile.cli;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.ElementCursor;
import dev.reconcile.core.Estimate;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.ProtocolException;
import dev.reconcile.core.SketchParams;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.IbltProto;
import dev.reconcile.core.wire.SketchParamsProto;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * A live agent as the local half of a session run in the CLI: every {@link PartitionSketches} call
 * is answered by the agent's read-only {@code /sketch/...} endpoints (replica-agent {@code
 * SketchApi}). Fingerprints are fetched once; tables per request; a partition's element list is
 * downloaded once (8 B per element) the first time the session asks for it or verifies an element
 * against it, then cached. Estimators stay on the agent: {@link RemoteEstimator} merges partitions
 * by name and asks the agent to serialize or to estimate.
 */
final class RemoteSketches implements PartitionSketches {
  private final AgentSideHttp http;
  private final SketchParams params;
  private final double sizingFactor;
  private final long estimatorWireBytes;
  private final Duration timeout;
  private Fingerprint[] fingerprints;
  private final Map<Integer, long[]> flipped =
      new HashMap<>(); // element ^ MIN_VALUE, sorted signed

  private RemoteSketches(
      AgentSideHttp http, SketchParams params, EstimatorFactory estimators, Duration timeout) {
    this.http = http;
    this.params = params;
    DifferenceEstimator probe = estimators.create(params.spec());
    this.sizingFactor = probe.sizingFactor();
    this.estimatorWireBytes = probe.wireBytes();
    this.timeout = timeout;
  }

  /**
   * Connects and checks that the agent's sketch parameters are {@code expected} (hash, seed
   * fingerprint, partitions, table sizes, estimator): the session could not combine anything else.
   */
  static RemoteSketches open(
      AgentSideHttp http, SketchParams expected, EstimatorFactory estimators, Duration timeout) {
    byte[] b = http.getBytes("/sketch/params", timeout);
    SketchParamsProto remote;
    try {
      remote = SketchParamsProto.parseFrom(b);
    } catch (InvalidProtocolBufferException e) {
      throw new CliException(http.label() + ": /sketch/params is not a SketchParams message");
    }
    SketchParamsProto mine = expected.toProto();
    if (!remote.equals(mine)) {
      throw new CliException(
          http.label()
              + ": the agent's sketch parameters {"
              + oneLine(remote)
              + "} differ from this side's {"
              + oneLine(mine)
              + "}; pass the agent's --hash-seed, --partitions-log2 and --iblt-max-log2");
    }
    return new RemoteSketches(http, expected, estimators, timeout);
  }

  private static String oneLine(com.google.protobuf.MessageOrBuilder m) {
    return m.toString().replace('\n', ' ').trim();
  }

  @Override
  public SketchParams params() {
    return params;
  }

  @Override
  public Fingerprint fingerprint(int partition) {
    if (fingerprints == null) {
      try {
        fingerprints =
            Wire.unpackFingerprints(
                ByteString.copyFrom(http.getBytes("/sketch/fingerprints", timeout)),
                params.partitions());
      } catch (ProtocolException e) {
        throw new CliException(http.label() + ": bad fingerprints: " + e.getMessage());
      }
    }
    return fingerprints[partition];
  }

  @Override
  public DifferenceEstimator estimator(int partition) {
    BitSet b = new BitSet();
    b.set(partition);
    return new RemoteEstimator(b);
  }

  @Override
  public Iblt iblt(int partition, IbltShape shape) {
    byte[] b =
        http.getBytes(
            "/sketch/iblt?partition="
                + partition
                + "&base="
                + shape.base()
                + "&log2="
                + shape.log2(),
            timeout);
    try {
      return Wire.readIblt(IbltProto.parseFrom(b), params, shape);
    } catch (InvalidProtocolBufferException | ProtocolException e) {
      throw new CliException(
          http.label() + ": bad table for partition " + partition + ": " + e.getMessage());
    }
  }

  @Override
  public boolean contains(int partition, long element) {
    return Arrays.binarySearch(elements(partition), element ^ Long.MIN_VALUE) >= 0;
  }

  @Override
  public ElementCursor sortedElements(int partition) {
    return ElementCursor.ofFlipped(elements(partition));
  }

  private long[] elements(int partition) {
    return flipped.computeIfAbsent(
        partition,
        p -> {
          long[] a =
              Wire.unpackLongsUnchecked(
                  ByteString.copyFrom(http.getBytes("/sketch/elements?partition=" + p, timeout)));
          for (int i = 0; i < a.length; i++) {
            a[i] ^= Long.MIN_VALUE;
          }
          Arrays.sort(a);
          return a;
        });
  }

  /** The agent's estimator of a set of partitions, merged and serialized by the agent. */
  private final class RemoteEstimator implements DifferenceEstimator {
    private final BitSet partitions;

    RemoteEstimator(BitSet partitions) {
      this.partitions = partitions;
    }

    private String list() {
      StringBuilder b = new StringBuilder();
      partitions.stream().forEach(p -> b.append(b.length() == 0 ? "" : ",").append(p));
      return b.toString();
    }

    @Override
    public void add(long element) {
      throw new UnsupportedOperationException("a live agent's estimator is read-only");
    }

    @Override
    public void remove(long element) {
      throw new UnsupportedOperationException("a live agent's estimator is read-only");
    }

    @Override
    public void merge(DifferenceEstimator other) {
      if (!(other instanceof RemoteEstimator o) || o.outer() != RemoteSketches.this) {
        throw new IllegalArgumentException("can only merge estimators of the same agent");
      }
      partitions.or(o.partitions);
    }

    private RemoteSketches outer() {
      return RemoteSketches.this;
    }

    @Override
    public Estimator toProto() {
      try {
        return Estimator.parseFrom(
            http.getBytes("/sketch/estimator?partitions=" + list(), timeout));
      } catch (InvalidProtocolBufferException e) {
        throw new CliException(http.label() + ": /sketch/estimator is not an Estimator message");
      }
    }

    @Override
    public Estimate estimate(Estimator remote) throws FormatException {
      byte[] b =
          http.postBytes("/sketch/estimate?partitions=" + list(), remote.toByteArray(), timeout);
      JsonObject j;
      try {
        j = new JsonObject(new String(b, StandardCharsets.UTF_8));
      } catch (RuntimeException e) {
        throw new FormatException("agent's estimate is not JSON");
      }
      Long e = j.getLong("estimate");
      if (e == null) {
        throw new FormatException("agent's answer has no estimate");
      }
      if (e < 0) {
        throw new FormatException("agent's estimate is negative: " + e);
      }
      return new Estimate(e, Boolean.TRUE.equals(j.getBoolean("exact")));
    }

    @Override
    public double sizingFactor() {
      return sizingFactor;
    }

    @Override
    public DifferenceEstimator copy() {
      return new RemoteEstimator((BitSet) partitions.clone());
    }

    @Override
    public long wireBytes() {
      return estimatorWireBytes;
    }
  }
}
