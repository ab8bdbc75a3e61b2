package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.reconcile.core.wire.DigestChunk;
import dev.reconcile.core.wire.DigestRequest;
import dev.reconcile.core.wire.Done;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.EstimatorParams;
import dev.reconcile.core.wire.FingerprintSet;
import dev.reconcile.core.wire.Hello;
import dev.reconcile.core.wire.HelloAck;
import dev.reconcile.core.wire.IbltOffer;
import dev.reconcile.core.wire.IbltRequest;
import dev.reconcile.core.wire.MissingChunk;
import dev.reconcile.core.wire.Mode;
import dev.reconcile.core.wire.RecordAck;
import dev.reconcile.core.wire.RecordBatch;
import dev.reconcile.core.wire.RecordProto;
import dev.reconcile.core.wire.Refusal;
import dev.reconcile.core.wire.RepairEnd;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Golden frames of wire format version 1: one frame of every message type, built from fixed inputs.
 * The file {@code golden/frames-v1.bin} was written once and is never regenerated: every later
 * build must read it and produce it byte for byte. A new format version adds a new file.
 */
class WireGoldenTest {
  private static final String GOLDEN = "/golden/frames-v1.bin";

  /** The message types of format version 1 but the estimator offer. */
  static final List<Envelope.BodyCase> V1_KINDS =
      List.of(
          Envelope.BodyCase.HELLO,
          Envelope.BodyCase.HELLO_ACK,
          Envelope.BodyCase.REFUSAL,
          Envelope.BodyCase.FINGERPRINTS,
          Envelope.BodyCase.IBLT,
          Envelope.BodyCase.IBLT_REQUEST,
          Envelope.BodyCase.DIGEST_REQUEST,
          Envelope.BodyCase.DIGEST_CHUNK,
          Envelope.BodyCase.MISSING,
          Envelope.BodyCase.DONE,
          Envelope.BodyCase.RECORD_BATCH,
          Envelope.BodyCase.RECORD_ACK,
          Envelope.BodyCase.REPAIR_END);

  static List<Envelope> frames() {
    HashSpec spec = HashSpec.xxh3(42);
    SketchParams params =
        new SketchParams(
            spec,
            4,
            3,
            15,
            EstimatorParams.newBuilder()
                .setKind(1)
                .setStrata(18)
                .setCellsPerStratum(128)
                .setHashCount(4)
                .build());
    Iblt t = new Iblt(spec, new IbltShape(3, 1, 3), CellLayout.WIDE);
    new SplittableRandom(42).longs(10).forEach(t::insert);
    long[] elems = new SplittableRandom(7).longs(5).toArray();
    Fingerprint[] fps = {new Fingerprint(10, 1234567, -7), new Fingerprint(0, 0, 0)};
    List<Envelope.Builder> bodies = new ArrayList<>();
    bodies.add(
        Envelope.newBuilder()
            .setHello(
                Hello.newBuilder()
                    .setMinVersion(1)
                    .setMaxVersion(1)
                    .setClusterId("golden")
                    .setNodeId("a")
                    .setParams(params.toProto())
                    .addModes(Mode.MODE_ESTIMATOR_IBLT)
                    .addPartitions(3)
                    .addPartitions(9)));
    bodies.add(
        Envelope.newBuilder()
            .setHelloAck(
                HelloAck.newBuilder()
                    .setVersion(1)
                    .setNodeId("b")
                    .setParams(params.toProto())
                    .setMode(Mode.MODE_ESTIMATOR_IBLT)));
    bodies.add(
        Envelope.newBuilder()
            .setFingerprints(
                FingerprintSet.newBuilder()
                    .addPartitions(3)
                    .addPartitions(9)
                    .setPacked(Wire.packFingerprints(fps))));
    bodies.add(
        Envelope.newBuilder()
            .setIblt(
                IbltOffer.newBuilder()
                    .setPartition(3)
                    .setAttempt(1)
                    .setEstimate(10)
                    .setTable(Wire.toProto(t))));
    bodies.add(
        Envelope.newBuilder()
            .setIbltRequest(
                IbltRequest.newBuilder()
                    .setPartition(3)
                    .setShape(Wire.toProto(new IbltShape(3, 3, 3)))));
    bodies.add(
        Envelope.newBuilder()
            .setDigestRequest(DigestRequest.newBuilder().setPartition(9).setReason(2)));
    bodies.add(
        Envelope.newBuilder()
            .setDigestChunk(
                DigestChunk.newBuilder()
                    .setPartition(9)
                    .setElements(Wire.packLongs(elems, 0, 5))
                    .setLast(true)));
    bodies.add(
        Envelope.newBuilder()
            .setMissing(
                MissingChunk.newBuilder()
                    .setPartition(3)
                    .setMissingAtInitiator(Wire.packLongs(elems, 0, 2))
                    .setMissingAtResponder(Wire.packLongs(elems, 2, 5))
                    .setLast(true)
                    .setAttempts(1)));
    bodies.add(Envelope.newBuilder().setDone(Done.getDefaultInstance()));
    bodies.add(
        Envelope.newBuilder()
            .setRefusal(
                Refusal.newBuilder()
                    .setCode(Refusal.Code.SEED)
                    .setMessage("hash seed fingerprint mismatch")));
    RecordProto r =
        RecordProto.newBuilder()
            .setKey(ByteString.copyFromUtf8("k"))
            .setValue(ByteString.copyFromUtf8("v"))
            .setVersion(1L << 20)
            .setOrigin(7)
            .build();
    bodies.add(
        Envelope.newBuilder()
            .setRecordBatch(
                RecordBatch.newBuilder()
                    .setPartition(3)
                    .setBatchSeq(0)
                    .addRecords(r)
                    .setCrc32C(0x1234)));
    bodies.add(
        Envelope.newBuilder().setRecordAck(RecordAck.newBuilder().setBatchSeq(0).setApplied(true)));
    bodies.add(
        Envelope.newBuilder().setRepairEnd(RepairEnd.newBuilder().setBatches(1).setRecords(1)));
    List<Envelope> out = new ArrayList<>();
    for (int i = 0; i < bodies.size(); i++) {
      out.add(bodies.get(i).setFormatVersion(1).setSessionId(0xfeedL).setSequence(i).build());
    }
    return out;
  }

  static byte[] encode(List<Envelope> frames) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Envelope e : frames) {
      out.writeBytes(Wire.frame(e));
    }
    return out.toByteArray();
  }

  @Test
  void goldenFramesDecodeAndReEncodeByteForByte() throws Exception {
    byte[] golden;
    try (var in = WireGoldenTest.class.getResourceAsStream(GOLDEN)) {
      assertThat(in).as("golden file " + GOLDEN).isNotNull();
      golden = in.readAllBytes();
    }
    List<Envelope> parsed = new ArrayList<>();
    ByteBuffer b = ByteBuffer.wrap(golden);
    while (b.hasRemaining()) {
      int n = b.getInt();
      byte[] body = new byte[n];
      b.get(body);
      parsed.add(Envelope.parseFrom(body));
    }
    List<Envelope> expected = frames();
    assertThat(parsed).hasSize(expected.size()).containsExactlyElementsOf(expected);
    assertThat(encode(expected)).isEqualTo(golden);
    // Every message type of version 1 is covered (the estimator is in strata-estimator's file).
    assertThat(parsed.stream().map(Envelope::getBodyCase).distinct())
        .containsExactlyInAnyOrderElementsOf(V1_KINDS);
    // And the IBLT inside still reads with today's code.
    var iblt = parsed.get(3).getIblt().getTable();
    SketchParams p =
        new SketchParams(
            HashSpec.xxh3(42), 4, 3, 15, parsed.get(0).getHello().getParams().getEstimator());
    assertThat(Wire.readIblt(iblt, p, null).shape()).isEqualTo(new IbltShape(3, 1, 3));
  }

  @Test
  @EnabledIfSystemProperty(named = "reconcile.golden.write", matches = "true")
  void writeGoldenFrames() throws Exception {
    Path p = Path.of("src/test/resources" + GOLDEN);
    Files.createDirectories(p.getParent());
    Files.write(p, encode(frames()));
  }
}
