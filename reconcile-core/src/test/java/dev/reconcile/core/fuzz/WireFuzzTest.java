package dev.reconcile.core.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fuzzing of our decoders of network input: {@link Wire#readIblt} (then peeling what it accepted),
 * {@link Wire#unpackLongs} and {@link Wire#unpackFingerprints}, on their own and on the payloads of
 * whole mutated frames (protobuf's parser only unwraps the frame; its own rejections are not what
 * is tested). Documented rejections: {@link InvalidProtocolBufferException} (the frame does not
 * parse) and {@link ProtocolException}; hand-written hostile inputs must be refused with their
 * message.
 */
class WireFuzzTest {
  private static final SketchParams PARAMS =
      TestSets.params(11, 2, 10, ExactEstimator.factory(1).params());
  private static final int N = 4000 * Mutator.scale();
  private static final List<dev.reconcile.core.wire.IbltProto> BASES = bases();

  private static List<dev.reconcile.core.wire.IbltProto> bases() {
    List<dev.reconcile.core.wire.IbltProto> out = new ArrayList<>();
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
    dev.reconcile.core.wire.IbltProto base = BASES.get(r.nextInt(BASES.size()));
    dev.reconcile.core.wire.IbltProto m;
    if (r.nextBoolean()) {
      try {
        m = dev.reconcile.core.wire.IbltProto.parseFrom(Mutator.mutateBytes(base.toByteArray(), r));
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

  /** Genuine frame bodies carrying every kind of payload our decoders read. */
  private static final List<Envelope> FRAMES = frames();

  private static List<Envelope> frames() {
    SplittableRandom r = new SplittableRandom(5);
    long[] elements = new long[300];
    for (int i = 0; i < elements.length; i++) {
      elements[i] = r.nextLong();
    }
    dev.reconcile.core.Fingerprint[] fps = new dev.reconcile.core.Fingerprint[PARAMS.partitions()];
    for (int i = 0; i < fps.length; i++) {
      fps[i] = new dev.reconcile.core.Fingerprint(i + 1, r.nextLong(), r.nextLong());
    }
    return List.of(
        Envelope.newBuilder()
            .setFormatVersion(1)
            .setSequence(3)
            .setIblt(dev.reconcile.core.wire.IbltOffer.newBuilder().setTable(BASES.get(1)))
            .build(),
        Envelope.newBuilder()
            .setFormatVersion(1)
            .setSequence(1)
            .setFingerprints(
                dev.reconcile.core.wire.FingerprintSet.newBuilder()
                    .setPacked(Wire.packFingerprints(fps)))
            .build(),
        Envelope.newBuilder()
            .setFormatVersion(1)
            .setSequence(4)
            .setDigestChunk(
                dev.reconcile.core.wire.DigestChunk.newBuilder()
                    .setElements(Wire.packLongs(elements, 0, elements.length)))
            .build(),
        Envelope.newBuilder()
            .setFormatVersion(1)
            .setSequence(5)
            .setMissing(
                dev.reconcile.core.wire.MissingChunk.newBuilder()
                    .setMissingAtInitiator(Wire.packLongs(elements, 0, 100))
                    .setMissingAtResponder(Wire.packLongs(elements, 100, 300)))
            .build());
  }

  /**
   * A whole frame body from the network, mutated as bytes or fields, through our decoding of what
   * it carries: an IBLT through {@link Wire#readIblt}, fingerprints through {@link
   * Wire#unpackFingerprints}, digest and result lists through {@link Wire#unpackLongs} with the
   * session's caps. Returns true when our decoder accepted the payload.
   */
  static boolean frame(SplittableRandom r) throws Exception {
    Envelope base = FRAMES.get(r.nextInt(FRAMES.size()));
    Envelope e;
    if (r.nextBoolean()) {
      try {
        e = Envelope.parseFrom(Mutator.mutateBytes(base.toByteArray(), r));
      } catch (InvalidProtocolBufferException x) {
        FuzzLoop.clearMessage("Envelope", x);
        return false;
      }
    } else {
      e = Mutator.mutateFields(base, r);
    }
    return decode(e);
  }

  /** Our decoders on the payload of {@code e}; false when one refused it as documented. */
  static boolean decode(Envelope e) {
    try {
      switch (e.getBodyCase()) {
        case IBLT -> {
          Iblt t = Wire.readIblt(e.getIblt().getTable(), PARAMS, null);
          assertThat(PARAMS.allows(t.shape())).isTrue();
          t.peel();
        }
        case FINGERPRINTS ->
            assertThat(
                    Wire.unpackFingerprints(e.getFingerprints().getPacked(), PARAMS.partitions()))
                .hasSize(PARAMS.partitions());
        case DIGEST_CHUNK -> {
          long[] a = Wire.unpackLongs(e.getDigestChunk().getElements(), 1 << 16, "DigestChunk");
          assertThat(a.length).isLessThanOrEqualTo(1 << 16);
        }
        case MISSING -> {
          int room = 1 << 12;
          long[] atI =
              Wire.unpackLongs(e.getMissing().getMissingAtInitiator(), room, "MissingChunk");
          long[] atR =
              Wire.unpackLongs(
                  e.getMissing().getMissingAtResponder(), room - atI.length, "MissingChunk");
          assertThat(atI.length + atR.length).isLessThanOrEqualTo(room);
        }
        default -> {
          return false; // another body (or none): not one of these decoders' input
        }
      }
      return true;
    } catch (ProtocolException x) {
      FuzzLoop.clearMessage("decode " + e.getBodyCase(), x);
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
  void framePayloadsSurviveMutation() {
    assertTimeoutPreemptively(
        Duration.ofSeconds(60L * Mutator.scale()),
        () -> FuzzLoop.run("frame payloads", 3, N, WireFuzzTest::frame));
  }

  /**
   * Hostile inputs written by hand, each one our decoders must refuse with the given message
   * (RoaringBitmap's TestAdversarialInputs, FastFilter's RegressionTests): a refusal turning into
   * an acceptance, an exception of another kind, or an allocation before the check fails here.
   */
  static Stream<Arguments> hostileInputs() {
    dev.reconcile.core.wire.IbltProto good = BASES.get(1);
    return Stream.of(
        Arguments.of(
            "IBLT of format version 2",
            (Decoder)
                () -> Wire.readIblt(good.toBuilder().setFormatVersion(2).build(), PARAMS, null),
            "IBLT format version 2"),
        Arguments.of(
            "IBLT from a peer with another seed",
            (Decoder)
                () ->
                    Wire.readIblt(
                        good.toBuilder().setSeedFingerprint(good.getSeedFingerprint() ^ 1).build(),
                        PARAMS,
                        null),
            "another hash seed"),
        Arguments.of(
            "IBLT claiming 3 x 2^30 cells, an invalid shape (no allocation before the check)",
            (Decoder)
                () ->
                    Wire.readIblt(
                        good.toBuilder().setShape(good.getShape().toBuilder().setLog2(30)).build(),
                        PARAMS,
                        null),
            "invalid IBLT shape: log2 30 outside"),
        Arguments.of(
            "IBLT claiming 3 x 2^20 cells, beyond the largest table (no allocation first)",
            (Decoder)
                () ->
                    Wire.readIblt(
                        good.toBuilder().setShape(good.getShape().toBuilder().setLog2(20)).build(),
                        PARAMS,
                        null),
            "is not allowed"),
        Arguments.of(
            "IBLT of another shape than requested",
            (Decoder) () -> Wire.readIblt(good, PARAMS, Wire.fromProto(BASES.get(2).getShape())),
            "was requested"),
        Arguments.of(
            "IBLT cells one byte short",
            (Decoder)
                () ->
                    Wire.readIblt(
                        good.toBuilder()
                            .setCells(good.getCells().substring(0, good.getCells().size() - 1))
                            .build(),
                        PARAMS,
                        null),
            "bytes"),
        Arguments.of(
            "IBLT in the narrow layout where the wide one is read",
            (Decoder)
                () ->
                    Wire.readIblt(
                        good.toBuilder()
                            .setLayout(
                                dev.reconcile.core.wire.CellLayoutProto.newBuilder()
                                    .setCountBytes(1)
                                    .setKeyBytes(4)
                                    .setCheckBytes(2))
                            .build(),
                        PARAMS,
                        null),
            "cell layout"),
        Arguments.of(
            "13 bytes of elements",
            (Decoder) () -> Wire.unpackLongs(ByteString.copyFrom(new byte[13]), 100, "DigestChunk"),
            "13 bytes is not a multiple of 8"),
        Arguments.of(
            "a list over its cap",
            (Decoder)
                () -> Wire.unpackLongs(ByteString.copyFrom(new byte[8 * 11]), 10, "MissingChunk"),
            "11 elements exceed the cap of 10"),
        Arguments.of(
            "fingerprints for 2^28 partitions (no allocation before the check)",
            (Decoder) () -> Wire.unpackFingerprints(ByteString.copyFrom(new byte[24]), 1 << 28),
            "need 6442450944 bytes, got 24"),
        Arguments.of(
            "fingerprints one byte long",
            (Decoder) () -> Wire.unpackFingerprints(ByteString.copyFrom(new byte[1]), 4),
            "need 96 bytes, got 1"));
  }

  /** One decoder call on a fixed input. */
  @FunctionalInterface
  interface Decoder {
    Object decode() throws ProtocolException;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("hostileInputs")
  void hostileInputIsRefused(String name, Decoder d, String message) {
    assertThatThrownBy(d::decode)
        .as(name)
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining(message);
  }

  /**
   * Inputs of the loops above replayed on every build with the outcome they had when they were
   * recorded, an accepted and a refused one per decoder (the first of each in the loops' seed
   * order): a refused input that becomes accepted, or the reverse, fails here and must be
   * explained. A failing seed from the loops is added the same way.
   */
  static Stream<Arguments> regressionSeeds() {
    return Stream.of(
        Arguments.of("Wire.readIblt", -7046029254386353131L, false),
        Arguments.of("Wire.readIblt", -7046029254386353129L, true),
        Arguments.of("Wire.unpack", 4354685564936845354L, false),
        Arguments.of("Wire.unpack", 4354685564936845866L, true),
        Arguments.of("frame payloads", -2691343689449507777L, false),
        Arguments.of("frame payloads", -2691343689449507774L, true));
  }

  @ParameterizedTest(name = "{0} seed {1}L accepted={2}")
  @MethodSource("regressionSeeds")
  void regressions(String decoder, long seed, boolean accepted) {
    FuzzLoop.Body body =
        switch (decoder) {
          case "Wire.readIblt" -> WireFuzzTest::readIblt;
          case "Wire.unpack" -> WireFuzzTest::unpack;
          default -> WireFuzzTest::frame;
        };
    assertThat(FuzzLoop.one(decoder, seed, body))
        .as("%s seed %dL", decoder, seed)
        .isEqualTo(accepted);
  }
}
