package dev.reconcile.estimator;

import com.google.protobuf.ByteString;
import dev.reconcile.core.CellLayout;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.Estimate;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PeelResult;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.CellLayoutProto;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.nio.ByteBuffer;

/**
 * Strata estimator of the size of a set difference (Eppstein, Goodrich, Uyeda, Varghese [1], §3.2).
 *
 * <h2>Maths</h2>
 *
 * {@code L} strata, each a small invertible Bloom lookup table [2] of {@code c} cells in {@code k}
 * hash subtables. Element {@code x} goes to stratum
 *
 * <pre>
 *   s(x) = min(L - 1, trailingZeros(stratumHash(x)))     P(s = i)     = 2^-(i+1)   (i < L - 1)
 *                                                       P(s = L - 1) = 2^-(L-1)
 * </pre>
 *
 * so stratum {@code i} samples about {@code 2^-(i+1)} of any set. Every stratum is linear, hence so
 * is the estimator: {@code E(A) - E(B) = E(A \ B) - E(B \ A)}, and stratum {@code i} of the
 * subtracted estimator holds only the {@code ~d / 2^(i+1)} differing elements that hashed there,
 * whatever {@code |A|} and {@code |B|}. Decoding peels the strata from the top down, summing the
 * elements recovered; the first stratum {@code i} that fails to peel ends it with the paper's rule
 *
 * <pre>
 *   estimate = 2^(i+1) * (elements decoded in strata > i)
 * </pre>
 *
 * (together the strata above {@code i} sample {@code 2^-(i+1)} of the difference). When every
 * stratum peels the count is exact, which is the common case for small {@code d} (a difference of 1
 * always decodes; with the defaults every {@code d <= 100} measured was exact). When even the top
 * stratum fails the difference is beyond the estimator's range ({@code >> 2^(L-1) c}) and the
 * estimate saturates at {@code min(c * 2^L, 2^48)}. For large {@code d} the count {@code m} above
 * the failed stratum is about one stratum's peeling capacity, so the relative error is about {@code
 * 1/sqrt(m)}: with the 18 x 128 parameters estimate/d has median 0.95..1.03, p99 <= 1.25 and p1 >=
 * 0.75 for d in [10^3, 10^5] (asserted by {@code StrataAccuracyTest}). No correction factor is
 * applied: the median bias (0 to -3 %) is small beside the spread and is covered by {@link
 * #sizingFactor()} (1.35). Since the tug-of-war estimator ({@link TugOfWarEstimator}, kind 2) is
 * the default, this kind stays for peers that negotiate it. Numbers and method: {@code
 * docs/estimator.md}.
 *
 * <h2>Memory layout</h2>
 *
 * One {@link Iblt} per stratum with {@link CellLayout#NARROW} cells (parallel {@code int} count,
 * {@code long} key sum masked to 32 bits, {@code int} check sum masked to 16 bits: 16 bytes per
 * cell in memory, {@code 16 * L * c} = 36 KiB for the defaults, plus headers). An add costs one
 * stratum hash plus the stratum table's {@code k + 1} hashes and {@code k} cell updates; nothing
 * allocates.
 *
 * <h2>Wire layout</h2>
 *
 * Protobuf {@code reconcile.v1.Estimator}: {@code format_version = 1}, {@code hash_id}, {@code
 * seed_fingerprint}, {@code params {kind = 1, strata = L, cells_per_stratum = c, hash_count = k}},
 * {@code layout {1, 4, 2}} and {@code cells}: {@code L * c * 7} bytes, stratum-major (stratum 0
 * first), each stratum as {@link Iblt#writeCells} writes it (per cell: count mod 256, low 32 bits
 * of the key sum little-endian, 16-bit check sum little-endian). The defaults (18 strata x 128
 * cells, 4 hashes) are 16 128 cell bytes and 16 159 bytes in all, under the 16 KiB budget. A remote
 * estimator is validated field by field (format version, kind, hash id, seed fingerprint,
 * parameters, layout, exact byte length) before anything is allocated; its shape always comes from
 * the local parameters, never from its claims.
 *
 * <p>References: [1] D. Eppstein, M. T. Goodrich, F. Uyeda, G. Varghese, "What's the Difference?
 * Efficient Set Reconciliation without Prior Context", SIGCOMM 2011. [2] M. T. Goodrich, M.
 * Mitzenmacher, "Invertible Bloom Lookup Tables", Allerton 2011. [3] GNUnet set union (strata 32 x
 * 80), F. Dold, "Byzantine Set-Union Consensus using Efficient Set Reconciliation", 2016.
 *
 * <p>Not thread-safe.
 */
public final class StrataEstimator implements DifferenceEstimator {
  /** {@code EstimatorParams.kind} of the strata estimator. */
  static final int KIND = 1;

  /** Format version of the serialized estimator. */
  static final int FORMAT_VERSION = Wire.SKETCH_VERSION;

  /** Ceiling of any estimate (keeps callers' arithmetic on it far from overflow). */
  static final long MAX_ESTIMATE = 1L << 48;

  private final HashSpec spec;
  private final StrataEstimatorFactory factory;
  private final Iblt[] strata;

  StrataEstimator(HashSpec spec, StrataEstimatorFactory factory) {
    this.spec = spec;
    this.factory = factory;
    this.strata = new Iblt[factory.strata()];
    for (int i = 0; i < strata.length; i++) {
      strata[i] = new Iblt(spec, factory.shape(), CellLayout.NARROW);
    }
  }

  private StrataEstimator(StrataEstimator from) {
    this.spec = from.spec;
    this.factory = from.factory;
    this.strata = new Iblt[from.strata.length];
    for (int i = 0; i < strata.length; i++) {
      strata[i] = from.strata[i].copy();
    }
  }

  public HashSpec spec() {
    return spec;
  }

  /** The parameters this estimator was made with. */
  public EstimatorParams params() {
    return factory.params();
  }

  /** Stratum of {@code element}: trailing zeros of its stratum hash, capped at {@code L - 1}. */
  int stratumOf(long element) {
    return Math.min(strata.length - 1, Long.numberOfTrailingZeros(spec.stratumHash(element)));
  }

  @Override
  public void add(long element) {
    strata[stratumOf(element)].update(element, 1);
  }

  @Override
  public void remove(long element) {
    strata[stratumOf(element)].update(element, -1);
  }

  /** {@code this -= other}, stratum by stratum; both must have the same spec and parameters. */
  public void subtract(StrataEstimator other) {
    requireCompatible(other);
    for (int i = 0; i < strata.length; i++) {
      strata[i].subtract(other.strata[i]);
    }
  }

  /** {@code this += other}, stratum by stratum. */
  @Override
  public void merge(DifferenceEstimator other) {
    if (!(other instanceof StrataEstimator s)) {
      throw new IllegalArgumentException(
          "cannot merge " + other.getClass().getSimpleName() + " into a strata estimator");
    }
    add(s);
  }

  public void add(StrataEstimator other) {
    requireCompatible(other);
    for (int i = 0; i < strata.length; i++) {
      strata[i].add(other.strata[i]);
    }
  }

  /** True when every cell of every stratum is zero. */
  public boolean isEmpty() {
    for (Iblt s : strata) {
      if (!s.isEmpty()) {
        return false;
      }
    }
    return true;
  }

  /** True when both hold identical cells. */
  public boolean sameCells(StrataEstimator o) {
    if (o.strata.length != strata.length || !o.spec.equals(spec)) {
      return false;
    }
    for (int i = 0; i < strata.length; i++) {
      if (!strata[i].sameCells(o.strata[i])) {
        return false;
      }
    }
    return true;
  }

  @Override
  public Estimator toProto() {
    byte[] cells = new byte[Math.toIntExact(cellBytes())];
    ByteBuffer b = ByteBuffer.wrap(cells);
    for (Iblt s : strata) {
      s.writeCells(b);
    }
    return header().setCells(ByteString.copyFrom(cells)).build();
  }

  private Estimator.Builder header() {
    return Estimator.newBuilder()
        .setFormatVersion(FORMAT_VERSION)
        .setHashId(spec.id())
        .setSeedFingerprint(spec.seedFingerprint())
        .setParams(factory.params())
        .setLayout(Wire.toProto(CellLayout.NARROW));
  }

  /** Bytes of the packed cells of all strata. */
  long cellBytes() {
    return (long) strata.length * factory.shape().cells() * CellLayout.NARROW.cellBytes();
  }

  @Override
  public Estimate estimate(Estimator remote) throws FormatException {
    ByteBuffer cells = validate(remote);
    int cellBytes = Math.toIntExact(factory.shape().cells() * CellLayout.NARROW.cellBytes());
    long decoded = 0;
    for (int i = strata.length - 1; i >= 0; i--) {
      ByteBuffer slice = cells.duplicate();
      slice.position(i * cellBytes).limit((i + 1) * cellBytes);
      Iblt t = Iblt.readCells(spec, factory.shape(), CellLayout.NARROW, slice.slice());
      t.subtract(strata[i]);
      PeelResult r = t.peel();
      if (!r.complete()) {
        return Estimate.approximate(estimateFrom(i, decoded));
      }
      decoded += r.recovered();
    }
    // every stratum decoded: the difference was counted, not extrapolated
    return Estimate.exact(Math.min(decoded, MAX_ESTIMATE));
  }

  /**
   * Paper's rule when stratum {@code failed} does not peel: {@code 2^(failed+1)} times the elements
   * decoded above it; saturated when nothing above could be decoded (the top stratum failed).
   */
  long estimateFrom(int failed, long decodedAbove) {
    if (failed == strata.length - 1) {
      return saturated();
    }
    int shift = failed + 1;
    if (shift >= 62 || decodedAbove > (MAX_ESTIMATE >>> shift)) {
      return MAX_ESTIMATE;
    }
    return decodedAbove << shift;
  }

  private long saturated() {
    long cells = factory.shape().cells();
    int shift = strata.length;
    if (shift >= 48 || cells > (MAX_ESTIMATE >>> shift)) {
      return MAX_ESTIMATE;
    }
    return cells << shift;
  }

  /**
   * Checks {@code remote} against the local parameters, in a fixed order, before anything is
   * allocated, and returns its cells. Each message names the remote value and the local one.
   */
  ByteBuffer validate(Estimator remote) throws FormatException {
    EstimatorHeader.check(remote, FORMAT_VERSION, KIND, "strata estimator", spec);
    EstimatorParams p = remote.getParams();
    EstimatorParams mine = factory.params();
    if (p.getStrata() != mine.getStrata()
        || p.getCellsPerStratum() != mine.getCellsPerStratum()
        || p.getHashCount() != mine.getHashCount()) {
      throw new FormatException(
          "estimator parameters mismatch: peer {"
              + describe(p)
              + "}, local {"
              + describe(mine)
              + "}");
    }
    CellLayoutProto l = remote.getLayout();
    CellLayoutProto narrow = Wire.toProto(CellLayout.NARROW);
    if (!l.equals(narrow)) {
      throw new FormatException(
          "estimator cell layout {"
              + describe(l)
              + "}, this peer reads {"
              + describe(narrow)
              + "}");
    }
    long want = cellBytes();
    int got = remote.getCells().size();
    if (got != want) {
      throw new FormatException(
          "estimator cells: expected " + want + " bytes, got " + got + " (" + describe(mine) + ")");
    }
    return remote.getCells().asReadOnlyByteBuffer();
  }

  /**
   * Reads {@code remote} (validated like {@link #estimate}) into a new estimator of this one's
   * parameters: for tests and tools that need the remote sketch itself.
   */
  StrataEstimator read(Estimator remote) throws FormatException {
    ByteBuffer cells = validate(remote);
    StrataEstimator out = new StrataEstimator(spec, factory);
    int cellBytes = Math.toIntExact(factory.shape().cells() * CellLayout.NARROW.cellBytes());
    for (int i = 0; i < strata.length; i++) {
      ByteBuffer slice = cells.duplicate();
      slice.position(i * cellBytes).limit((i + 1) * cellBytes);
      out.strata[i] = Iblt.readCells(spec, factory.shape(), CellLayout.NARROW, slice.slice());
    }
    return out;
  }

  private static String describe(EstimatorParams p) {
    return "strata="
        + Integer.toUnsignedString(p.getStrata())
        + ", cells_per_stratum="
        + Integer.toUnsignedString(p.getCellsPerStratum())
        + ", hash_count="
        + Integer.toUnsignedString(p.getHashCount());
  }

  private static String describe(CellLayoutProto l) {
    return "count_bytes="
        + Integer.toUnsignedString(l.getCountBytes())
        + ", key_bytes="
        + Integer.toUnsignedString(l.getKeyBytes())
        + ", check_bytes="
        + Integer.toUnsignedString(l.getCheckBytes());
  }

  @Override
  public double sizingFactor() {
    return factory.sizingFactor();
  }

  @Override
  public StrataEstimator copy() {
    return new StrataEstimator(this);
  }

  /** Bytes of {@link #toProto()} on the wire, computed without serializing the cells. */
  @Override
  public long wireBytes() {
    return EstimatorHeader.wireBytes(header(), cellBytes());
  }

  IbltShape stratumShape() {
    return factory.shape();
  }

  int strataCount() {
    return strata.length;
  }

  private void requireCompatible(StrataEstimator other) {
    if (!other.factory.params().equals(factory.params())) {
      throw new IllegalArgumentException(
          "estimator parameters mismatch: {"
              + describe(factory.params())
              + "} vs {"
              + describe(other.factory.params())
              + "}");
    }
    if (!other.spec.equals(spec)) {
      throw new IllegalArgumentException("hash spec mismatch: " + spec + " vs " + other.spec);
    }
  }

  @Override
  public String toString() {
    return "StrataEstimator{" + describe(factory.params()) + ", " + spec + "}";
  }
}
