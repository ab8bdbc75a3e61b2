package dev.reconcile.core.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.reconcile.core.ExactEstimator;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PeelResult;
import dev.reconcile.core.ProtocolException;
import dev.reconcile.core.SketchParams;
import dev.reconcile.core.TestSets;
import dev.reconcile.core.Wire;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.IbltOffer;
import dev.reconcile.core.wire.IbltProto;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fuzzing of the core decoders of network input: {@link Wire#readIblt} (then peeling what it
 * accepted), {@link Wire#unpackLongs}, {@link Wire#unpackFingerprints} and {@link
 * Envelope#parseFrom}. Documented rejections: {@link InvalidProtocolBufferException} (parse) and
 * {@link ProtocolException}.
 */
class WireFuzzTest {
  private static final SketchParams PARAMS =
      TestSets.params(11, 2, 10, ExactEstimator.factory(1).params());
  private static final int N = 4000 * Mutator.scale();
  private static final List<IbltProto> BASES = bases();

  private static List<IbltProto> bases() {
    List<IbltProto> out = new ArrayList<>();
    SplittableRandom r = new SplittableRandom(3);
    for (int cells : new int[] {3, 48, 400, 3000}) {
      IbltShape s = PARAMS.shapeWithAtLeast(cells);
      Iblt t = new Iblt(PARAMS.spec(), s, dev.reconcile.core.CellLayout.WIDE);
      for (int i = 0; i < cells / 3; i++) {
        t.insert(r.nextLong());
      }
      out.add(Wire.toProto(t));
    }
    return out;
  }

  static boolean readIblt(SplittableRandom r) throws Exception {
    IbltProto base = BASES.get(r.nextInt(BASES.size()));
    IbltProto m;
    if (r.nextBoolean()) {
      try {
        m = IbltProto.parseFrom(Mutator.mutateBytes(base.toByteArray(), r));
      } catch (InvalidProtocolBufferException e) {
        FuzzLoop.clearMessage("readIblt", e);
        return false;
      }
    } else {
      m = Mutator.mutateFields(base, r);
    }
    IbltShape expected = r.nextBoolean() ? null : Wire.fromProto(base.getShape());
    Iblt t;
    try {
      t = Wire.readIblt(m, PARAMS, expected);
    } catch (ProtocolException e) {
      FuzzLoop.clearMessage("readIblt", e);
      return false;
    }
    // Accepted: it must have exactly the allowed shape's cells, and peeling it must end.
    assertThat(PARAMS.allows(t.shape())).isTrue();
    PeelResult p = t.peel();
    assertThat((long) p.onlyHere().length + p.onlyThere().length)
        .isLessThanOrEqualTo(t.shape().cells());
    return true;
  }

  static boolean unpack(SplittableRandom r) {
    ByteString s =
        ByteString.copyFrom(Mutator.random(r, r.nextInt(r.nextInt(8) == 0 ? 100_000 : 200)));
    int cap = r.nextInt(4) == 0 ? Integer.MAX_VALUE : r.nextInt(20_000);
    int parts = r.nextInt(4) == 0 ? Integer.MAX_VALUE / 8 : r.nextInt(64);
    boolean ok = true;
    try {
      long[] a = Wire.unpackLongs(s, cap, "fuzz");
      assertThat(a.length * 8).isEqualTo(s.size());
    } catch (ProtocolException e) {
      FuzzLoop.clearMessage("unpackLongs", e);
      ok = false;
    }
    try {
      assertThat(Wire.unpackFingerprints(s, parts)).hasSize(parts);
    } catch (ProtocolException e) {
      FuzzLoop.clearMessage("unpackFingerprints", e);
      ok = false;
    }
    return ok;
  }

  static boolean envelope(SplittableRandom r) {
    byte[] in =
        r.nextBoolean()
            ? Mutator.random(r, r.nextInt(512))
            : Mutator.mutateBytes(
                Envelope.newBuilder()
                    .setFormatVersion(1)
                    .setSequence(3)
                    .setIblt(IbltOffer.newBuilder().setTable(BASES.get(1)))
                    .build()
                    .toByteArray(),
                r);
    try {
      return Envelope.parseFrom(in).getSerializedSize() >= 0;
    } catch (InvalidProtocolBufferException e) {
      FuzzLoop.clearMessage("Envelope.parseFrom", e);
      return false;
    }
  }

  @Test
  void readIbltSurvivesMutatedTables() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(120L * Mutator.scale()),
        () -> FuzzLoop.run("Wire.readIblt", 1, N, WireFuzzTest::readIblt));
  }

  @Test
  void unpackSurvivesRandomBytes() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(60L * Mutator.scale()),
        () -> FuzzLoop.run("Wire.unpack", 2, N, WireFuzzTest::unpack));
  }

  @Test
  void envelopeParserSurvivesRandomAndMutatedBytes() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(60L * Mutator.scale()),
        () -> FuzzLoop.run("Envelope.parseFrom", 3, N, WireFuzzTest::envelope));
  }

  /** Regression seeds (none found so far; a failing seed from the loops above goes here). */
  @ParameterizedTest
  @ValueSource(longs = {0L})
  void regressions(long seed) {
    FuzzLoop.one("Wire.readIblt", seed, WireFuzzTest::readIblt);
    FuzzLoop.one("Wire.unpack", seed, WireFuzzTest::unpack);
    FuzzLoop.one("Envelope.parseFrom", seed, WireFuzzTest::envelope);
  }
}
