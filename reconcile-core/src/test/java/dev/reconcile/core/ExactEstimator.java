package dev.reconcile.core;

import com.google.protobuf.ByteString;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Test double: an "estimator" that ships its whole element multiset and returns the exact
 * difference times a factor. Lets session tests force every path (too-low estimates, fallback)
 * independently of the real strata estimator, which lives in another module. Linear, and its wire
 * bytes depend only on the multiset (sorted, zero counts dropped), so store tests can compare a
 * maintained one with a rebuilt one.
 */
public final class ExactEstimator implements DifferenceEstimator {
  public static final int KIND = 99;
  private final TreeMap<Long, Integer> counts = new TreeMap<>();
  private final double factor;
  private final long claimedWireBytes;

  public ExactEstimator(double factor) {
    this(factor, 64);
  }

  /**
   * @param claimedWireBytes what {@link #wireBytes} claims: the session compares it with the lists
   *     and with a small first table (a real estimator costs about 4 KiB)
   */
  public ExactEstimator(double factor, long claimedWireBytes) {
    this.factor = factor;
    this.claimedWireBytes = claimedWireBytes;
  }

  public static EstimatorFactory factory(double factor) {
    return factory(factor, 64);
  }

  /** Estimators that claim {@code claimedWireBytes} on the wire. */
  public static EstimatorFactory factory(double factor, long claimedWireBytes) {
    EstimatorParams p = EstimatorParams.newBuilder().setKind(KIND).build();
    return new EstimatorFactory() {
      @Override
      public EstimatorParams params() {
        return p;
      }

      @Override
      public DifferenceEstimator create(HashSpec spec) {
        return new ExactEstimator(factor, claimedWireBytes);
      }
    };
  }

  @Override
  public void add(long element) {
    counts.merge(element, 1, ExactEstimator::sumOrDrop);
  }

  /** Merge function that drops an entry whose count returns to zero. */
  private static Integer sumOrDrop(Integer a, Integer b) {
    int s = a + b;
    return s == 0 ? null : s;
  }

  @Override
  public void remove(long element) {
    counts.merge(element, -1, ExactEstimator::sumOrDrop);
  }

  @Override
  public void merge(DifferenceEstimator other) {
    ((ExactEstimator) other)
        .counts.forEach((k, v) -> counts.merge(k, v, ExactEstimator::sumOrDrop));
  }

  @Override
  public Estimator toProto() {
    ByteBuffer b = ByteBuffer.allocate(counts.size() * 12).order(ByteOrder.LITTLE_ENDIAN);
    for (Map.Entry<Long, Integer> e : counts.entrySet()) {
      b.putLong(e.getKey()).putInt(e.getValue());
    }
    return Estimator.newBuilder()
        .setFormatVersion(1)
        .setParams(EstimatorParams.newBuilder().setKind(KIND))
        .setCells(ByteString.copyFrom(b.array()))
        .build();
  }

  @Override
  public Estimate estimate(Estimator remote) throws FormatException {
    if (remote.getParams().getKind() != KIND) {
      throw new FormatException("not an exact estimator");
    }
    HashMap<Long, Integer> diff = new HashMap<>(counts);
    ByteBuffer b = remote.getCells().asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    while (b.remaining() >= 12) {
      diff.merge(b.getLong(), -b.getInt(), Integer::sum);
    }
    long d = 0;
    for (int c : diff.values()) {
      d += Math.abs(c);
    }
    return Estimate.approximate((long) Math.floor(d * factor));
  }

  @Override
  public double sizingFactor() {
    return 1.0;
  }

  @Override
  public DifferenceEstimator copy() {
    ExactEstimator e = new ExactEstimator(factor, claimedWireBytes);
    e.counts.putAll(counts);
    return e;
  }

  @Override
  public long wireBytes() {
    return claimedWireBytes;
  }
}
