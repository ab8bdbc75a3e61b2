package dev.reconcile.cli;

import com.google.protobuf.ByteString;
import dev.reconcile.core.CellLayout;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.FormatException;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PeelResult;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorParams;
import java.nio.ByteBuffer;

/**
 * TEMPORARY: a minimal strata estimator (Eppstein et al. 2011) so that the CLI runs end to end until
 * {@code dev.reconcile.estimator.StrataEstimatorFactory} lands on main. Delete it then, and point
 * {@link Estimators#production()} at the real one. Not for review as estimator code.
 */
final class TemporaryStrataFactory implements EstimatorFactory {
  static final TemporaryStrataFactory INSTANCE = new TemporaryStrataFactory();
  private static final int STRATA = 32;
  private static final IbltShape SHAPE = new IbltShape(3, 3, 3); // 72 cells
  private static final EstimatorParams PARAMS =
      EstimatorParams.newBuilder()
          .setKind(100)
          .setStrata(STRATA)
          .setCellsPerStratum((int) SHAPE.cells())
          .setHashCount(3)
          .build();

  @Override
  public EstimatorParams params() {
    return PARAMS;
  }

  @Override
  public DifferenceEstimator create(HashSpec spec) {
    return new Strata(spec);
  }

  private static final class Strata implements DifferenceEstimator {
    private final HashSpec spec;
    private final Iblt[] strata = new Iblt[STRATA];

    Strata(HashSpec spec) {
      this.spec = spec;
      for (int i = 0; i < STRATA; i++) {
        strata[i] = new Iblt(spec, SHAPE, CellLayout.NARROW);
      }
    }

    private Iblt stratum(long x) {
      return strata[Math.min(STRATA - 1, Long.numberOfTrailingZeros(spec.stratumHash(x)))];
    }

    @Override
    public void add(long element) {
      stratum(element).insert(element);
    }

    @Override
    public void remove(long element) {
      stratum(element).delete(element);
    }

    @Override
    public Estimator toProto() {
      ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(strata[0].wireBytes() * STRATA));
      for (Iblt t : strata) {
        t.writeCells(b);
      }
      return Estimator.newBuilder()
          .setFormatVersion(1)
          .setHashId(spec.id())
          .setSeedFingerprint(spec.seedFingerprint())
          .setParams(PARAMS)
          .setCells(ByteString.copyFrom(b.array()))
          .build();
    }

    @Override
    public long estimate(Estimator remote) throws FormatException {
      if (remote.getFormatVersion() != 1 || !remote.getParams().equals(PARAMS)
          || remote.getHashId() != spec.id() || remote.getSeedFingerprint() != spec.seedFingerprint()) {
        throw new FormatException("estimator parameters differ from the local temporary strata estimator");
      }
      ByteBuffer in = remote.getCells().asReadOnlyByteBuffer();
      long per = strata[0].wireBytes();
      if (in.remaining() != per * STRATA) {
        throw new FormatException("estimator cells: " + in.remaining() + " bytes, expected " + per * STRATA);
      }
      long count = 0;
      for (int i = STRATA - 1; i >= 0; i--) {
        ByteBuffer slice = in.duplicate();
        slice.position((int) (i * per)).limit((int) ((i + 1) * per));
        Iblt t = strata[i].copy();
        t.subtract(Iblt.readCells(spec, SHAPE, CellLayout.NARROW, slice.slice()));
        PeelResult r = t.peel();
        if (!r.complete()) {
          return count << (i + 1);
        }
        count += r.onlyHere().length + r.onlyThere().length;
      }
      return count;
    }

    @Override
    public double sizingFactor() {
      return 1.4;
    }

    @Override
    public DifferenceEstimator copy() {
      Strata s = new Strata(spec);
      for (int i = 0; i < STRATA; i++) {
        s.strata[i] = strata[i].copy();
      }
      return s;
    }
  }
}
