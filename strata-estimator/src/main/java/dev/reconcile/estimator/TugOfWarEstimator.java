package dev.reconcile.estimator;

import com.google.protobuf.ByteString;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.Estimate;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.CellLayoutProto;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Tug-of-war estimator of the size of a set difference: the second moment sketch of Alon, Matias
 * and Szegedy [1] with the bucket hashing of Thorup and Zhang [2] (one signed counter update per
 * element), as used for set reconciliation by Gong et al. [3].
 *
 * <h2>Maths</h2>
 *
 * {@code b} signed counters. Element {@code x} has one bucket and one sign, both read from {@code h
 * = stratumHash(x)} of the frozen {@link HashSpec} (no new derivation):
 *
 * <pre>
 *   bucket(x) = ((h >>> 32) * b) >>> 32          sign(x) = 1 - 2 * (h & 1)      (+1 or -1)
 *   C_i(S)    = sum of sign(x) over x in S with bucket(x) = i                     (mod 2^(8w))
 * </pre>
 *
 * Counters are linear: {@code C(A) - C(B) = C(A \ B) - C(B \ A)}, so for the subtracted counters
 * {@code Z_i} of two replicas only the {@code d} differing elements remain, each contributing
 * {@code +-1}. The estimate is
 *
 * <pre>
 *   est = sum_i Z_i^2 = d + 2 * sum over pairs {x, y} sharing a bucket of (+-1)
 *   E[est] = d        Var[est] = 2 d (d - 1) / b        (relative standard deviation sqrt(2/b))
 * </pre>
 *
 * unbiased at every {@code d}, with the same relative error from {@code d = 10^2} to far beyond
 * {@code 10^7}; for small {@code d} the estimate is exactly {@code d} unless two differing elements
 * share a bucket (probability about {@code d^2 / 2b}), and then off by 2 per such pair. Unlike the
 * strata estimator it never says that it is exact ({@link #estimate} returns {@code exact =
 * false}): the session applies the sizing factor always.
 *
 * <p>A counter of {@code w} bytes holds {@code Z_i} modulo {@code 2^(8w)}; the subtracted value is
 * read back sign-extended, which is right while {@code |Z_i| < 2^(8w-1)}. {@code Z_i} is a sum of
 * about {@code d/b} random signs, so with {@code w = 2} and {@code b = 2016} a wrap needs a
 * 30-sigma excursion below {@code d = 10^9}. The absolute counters of one replica (sums over all of
 * its {@code n} elements) may wrap freely: only their difference is ever read.
 *
 * <h2>Memory and cost</h2>
 *
 * One {@code int[b]} (8 KiB for the defaults); {@link #add}/{@link #remove} = one XXH3 call and one
 * counter update, nothing allocates. Merging (groups of partitions) adds the arrays.
 *
 * <h2>Wire layout</h2>
 *
 * Protobuf {@code reconcile.v1.Estimator}: {@code format_version = 1}, {@code hash_id}, {@code
 * seed_fingerprint}, {@code params {kind = 2, strata = 1, cells_per_stratum = b, hash_count = 1}},
 * {@code layout {count_bytes = w, key_bytes = 0, check_bytes = 0}} and {@code cells}: {@code b * w}
 * bytes, counter {@code i} at offset {@code i * w}, little-endian, modulo {@code 2^(8w)}. Defaults
 * ({@code b = 2016}, {@code w = 2}): 4 032 cell bytes, {@value #DEFAULT_WIRE_BYTES} bytes in all. A
 * remote estimator is validated field by field before anything is read; its size always comes from
 * the local parameters.
 *
 * <p>References: [1] N. Alon, Y. Matias, M. Szegedy, "The Space Complexity of Approximating the
 * Frequency Moments", STOC 1996. [2] M. Thorup, Y. Zhang, "Tabulation-Based 5-Independent Hashing
 * with Applications to Linear Probing and Second Moment Estimation", SIAM J. Comput. 2012. [3] L.
 * Gong, Z. Liu, L. Liu, J. Xu, M. Ogihara, T. Yang, "Space- and Computationally-Efficient Set
 * Reconciliation via Parity Bitmap Sketch (PBS)", VLDB 2020 (the tug-of-war estimator, section 6).
 *
 * <p>Not thread-safe.
 */
public final class TugOfWarEstimator implements DifferenceEstimator {
  /** {@code EstimatorParams.kind} of the tug-of-war estimator. */
  static final int KIND = 2;

  static final int FORMAT_VERSION = Wire.SKETCH_VERSION;

  /** Serialized size of the defaults (checked by a test). */
  static final int DEFAULT_WIRE_BYTES = 4059;

  private final HashSpec spec;
  private final TugOfWarEstimatorFactory factory;
  private final int[] counters;

  TugOfWarEstimator(HashSpec spec, TugOfWarEstimatorFactory factory) {
    this.spec = spec;
    this.factory = factory;
    this.counters = new int[factory.buckets()];
  }

  private TugOfWarEstimator(TugOfWarEstimator from) {
    this.spec = from.spec;
    this.factory = from.factory;
    this.counters = from.counters.clone();
  }

  public HashSpec spec() {
    return spec;
  }

  public EstimatorParams params() {
    return factory.params();
  }

  @Override
  public void add(long element) {
    update(element, 1);
  }

  @Override
  public void remove(long element) {
    update(element, -1);
  }

  private void update(long element, int delta) {
    long h = spec.stratumHash(element);
    int i = (int) (((h >>> 32) * counters.length) >>> 32);
    counters[i] += (h & 1) == 0 ? delta : -delta;
  }

  /** Bucket of {@code element} (see the class comment). */
  int bucketOf(long element) {
    return (int) (((spec.stratumHash(element) >>> 32) * counters.length) >>> 32);
  }

  @Override
  public void merge(DifferenceEstimator other) {
    if (!(other instanceof TugOfWarEstimator t)) {
      throw new IllegalArgumentException(
          "cannot merge " + other.getClass().getSimpleName() + " into a tug-of-war estimator");
    }
    requireCompatible(t);
    for (int i = 0; i < counters.length; i++) {
      counters[i] += t.counters[i];
    }
  }

  /** {@code this -= other}. */
  public void subtract(TugOfWarEstimator other) {
    requireCompatible(other);
    for (int i = 0; i < counters.length; i++) {
      counters[i] -= other.counters[i];
    }
  }

  /** True when both hold the same counters modulo the wire width. */
  public boolean sameCounters(TugOfWarEstimator o) {
    if (!o.factory.params().equals(factory.params()) || !o.spec.equals(spec)) {
      return false;
    }
    for (int i = 0; i < counters.length; i++) {
      if (wrap(counters[i] - o.counters[i]) != 0) {
        return false;
      }
    }
    return true;
  }

  @Override
  public Estimator toProto() {
    int w = factory.counterBytes();
    ByteBuffer b = ByteBuffer.allocate(counters.length * w).order(ByteOrder.LITTLE_ENDIAN);
    for (int c : counters) {
      if (w == 1) {
        b.put((byte) c);
      } else {
        b.putShort((short) c);
      }
    }
    return header().setCells(ByteString.copyFrom(b.array())).build();
  }

  private Estimator.Builder header() {
    return Estimator.newBuilder()
        .setFormatVersion(FORMAT_VERSION)
        .setHashId(spec.id())
        .setSeedFingerprint(spec.seedFingerprint())
        .setParams(factory.params())
        .setLayout(factory.layout());
  }

  @Override
  public Estimate estimate(Estimator remote) throws FormatException {
    ByteBuffer cells = validate(remote).order(ByteOrder.LITTLE_ENDIAN);
    int w = factory.counterBytes();
    long sum = 0;
    for (int i = 0; i < counters.length; i++) {
      int r = w == 1 ? cells.get() : cells.getShort();
      long z = wrap(r - counters[i]);
      sum += z * z;
    }
    return Estimate.approximate(sum);
  }

  /** Sign-extends the low {@code 8 * counterBytes} bits of {@code v}. */
  private int wrap(int v) {
    int shift = 32 - 8 * factory.counterBytes();
    return (v << shift) >> shift;
  }

  /**
   * Checks {@code remote} against the local parameters, in a fixed order, before anything is read,
   * and returns its counters. Each message names the remote value and the local one.
   */
  ByteBuffer validate(Estimator remote) throws FormatException {
    EstimatorHeader.check(remote, FORMAT_VERSION, KIND, "tug-of-war estimator", spec);
    EstimatorParams p = remote.getParams();
    EstimatorParams mine = factory.params();
    if (!p.equals(mine)) {
      throw new FormatException(
          "estimator parameters mismatch: peer {"
              + TugOfWarEstimatorFactory.describe(p)
              + "}, local {"
              + TugOfWarEstimatorFactory.describe(mine)
              + "}");
    }
    CellLayoutProto l = remote.getLayout();
    if (!l.equals(factory.layout())) {
      throw new FormatException(
          "estimator cell layout {count_bytes="
              + Integer.toUnsignedString(l.getCountBytes())
              + ", key_bytes="
              + Integer.toUnsignedString(l.getKeyBytes())
              + ", check_bytes="
              + Integer.toUnsignedString(l.getCheckBytes())
              + "}, this peer reads {count_bytes="
              + factory.counterBytes()
              + ", key_bytes=0, check_bytes=0}");
    }
    long want = cellBytes();
    int got = remote.getCells().size();
    if (got != want) {
      throw new FormatException(
          "estimator cells: expected "
              + want
              + " bytes, got "
              + got
              + " ("
              + TugOfWarEstimatorFactory.describe(mine)
              + ")");
    }
    return remote.getCells().asReadOnlyByteBuffer();
  }

  long cellBytes() {
    return (long) counters.length * factory.counterBytes();
  }

  @Override
  public double sizingFactor() {
    return factory.sizingFactor();
  }

  @Override
  public TugOfWarEstimator copy() {
    return new TugOfWarEstimator(this);
  }

  @Override
  public long wireBytes() {
    return EstimatorHeader.wireBytes(header(), cellBytes());
  }

  private void requireCompatible(TugOfWarEstimator other) {
    if (!other.factory.params().equals(factory.params())) {
      throw new IllegalArgumentException(
          "estimator parameters mismatch: {"
              + TugOfWarEstimatorFactory.describe(factory.params())
              + "} vs {"
              + TugOfWarEstimatorFactory.describe(other.factory.params())
              + "}");
    }
    if (!other.spec.equals(spec)) {
      throw new IllegalArgumentException("hash spec mismatch: " + spec + " vs " + other.spec);
    }
  }

  @Override
  public String toString() {
    return "TugOfWarEstimator{" + TugOfWarEstimatorFactory.describe(factory.params()) + "}";
  }
}
