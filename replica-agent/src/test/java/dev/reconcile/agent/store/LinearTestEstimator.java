package dev.reconcile.agent.store;

import com.google.protobuf.ByteString;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Test-only linear sketch with deterministic wire bytes (unlike {@code ExactEstimator}, whose bytes
 * follow HashMap order): 16 buckets of (count, sum, xor of a hash). Its "estimate" is the sum of
 * absolute count differences, a lower bound of the difference; good enough for store tests, which
 * compare sketches, not estimates.
 */
final class LinearTestEstimator implements DifferenceEstimator {
  static final int KIND = 98;
  static final int BUCKETS = 16;
  private final HashSpec spec;
  private final long[] counts = new long[BUCKETS];
  private final long[] sums = new long[BUCKETS];
  private final long[] xors = new long[BUCKETS];

  LinearTestEstimator(HashSpec spec) {
    this.spec = spec;
  }

  static EstimatorFactory factory() {
    EstimatorParams p = EstimatorParams.newBuilder().setKind(KIND).setStrata(BUCKETS).build();
    return new EstimatorFactory() {
      @Override
      public EstimatorParams params() {
        return p;
      }

      @Override
      public DifferenceEstimator create(HashSpec spec) {
        return new LinearTestEstimator(spec);
      }
    };
  }

  private int bucket(long x) {
    return (int) (spec.stratumHash(x) & (BUCKETS - 1));
  }

  @Override
  public void add(long element) {
    int b = bucket(element);
    counts[b]++;
    sums[b] += element;
    xors[b] ^= spec.checkHash(element);
  }

  @Override
  public void remove(long element) {
    int b = bucket(element);
    counts[b]--;
    sums[b] -= element;
    xors[b] ^= spec.checkHash(element);
  }

  @Override
  public Estimator toProto() {
    ByteBuffer b = ByteBuffer.allocate(BUCKETS * 24).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < BUCKETS; i++) {
      b.putLong(counts[i]).putLong(sums[i]).putLong(xors[i]);
    }
    return Estimator.newBuilder()
        .setFormatVersion(1)
        .setHashId(spec.id())
        .setSeedFingerprint(spec.seedFingerprint())
        .setParams(EstimatorParams.newBuilder().setKind(KIND).setStrata(BUCKETS))
        .setCells(ByteString.copyFrom(b.array()))
        .build();
  }

  @Override
  public long estimate(Estimator remote) throws FormatException {
    if (remote.getParams().getKind() != KIND || remote.getCells().size() != BUCKETS * 24) {
      throw new FormatException("not a linear test estimator");
    }
    ByteBuffer b = remote.getCells().asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    long d = 0;
    for (int i = 0; i < BUCKETS; i++) {
      d += Math.abs(counts[i] - b.getLong());
      b.getLong();
      b.getLong();
    }
    return d;
  }

  @Override
  public double sizingFactor() {
    return 1.0;
  }

  @Override
  public DifferenceEstimator copy() {
    LinearTestEstimator e = new LinearTestEstimator(spec);
    System.arraycopy(counts, 0, e.counts, 0, BUCKETS);
    System.arraycopy(sums, 0, e.sums, 0, BUCKETS);
    System.arraycopy(xors, 0, e.xors, 0, BUCKETS);
    return e;
  }
}
