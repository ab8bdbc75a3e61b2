package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.reconcile.core.wire.DigestChunk;
import dev.reconcile.core.wire.DigestRequest;
import dev.reconcile.core.wire.Done;
import dev.reconcile.core.wire.Envelope;
import dev.reconcile.core.wire.Estimator;
import dev.reconcile.core.wire.EstimatorOffer;
import dev.reconcile.core.wire.EstimatorParams;
import dev.reconcile.core.wire.FingerprintSet;
import dev.reconcile.core.wire.Hello;
import dev.reconcile.core.wire.HelloAck;
import dev.reconcile.core.wire.IbltOffer;
import dev.reconcile.core.wire.IbltProto;
import dev.reconcile.core.wire.IbltRequest;
import dev.reconcile.core.wire.MissingChunk;
import dev.reconcile.core.wire.Mode;
import dev.reconcile.core.wire.RatelessFallback;
import dev.reconcile.core.wire.RecordAck;
import dev.reconcile.core.wire.RecordBatch;
import dev.reconcile.core.wire.RecordProto;
import dev.reconcile.core.wire.RecordRequest;
import dev.reconcile.core.wire.Refusal;
import dev.reconcile.core.wire.RepairEnd;
import dev.reconcile.core.wire.RowBatch;
import dev.reconcile.core.wire.SymbolChunk;
import dev.reconcile.core.wire.SymbolRequest;
import dev.reconcile.core.wire.VerifyDigest;
import dev.reconcile.core.wire.VerifyReply;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Golden frames of wire format version 2: at least one frame of every message type of the envelope
 * (the IBLT offer and request in each of their v2 forms: whole table, extension, first table),
 * built from fixed inputs. {@code golden/frames-v2.bin} holds the frames as they go on the socket
 * (4-byte big-endian length, then the envelope); {@code golden/frames-v2.index} names each frame
 * with its offset and length. Regenerate both (only while v2 is unreleased) with {@code
 * -Dreconcile.golden.write=true -Dtest=WireGoldenV2Test}; every build must read them and produce
 * them byte for byte.
 */
class WireGoldenV2Test {
  private static final String GOLDEN = "/golden/frames-v2.bin";
  private static final String INDEX = "/golden/frames-v2.index";

  static final HashSpec SPEC = HashSpec.xxh3(42);

  static SketchParams params() {
    return new SketchParams(
        SPEC,
        4,
        3,
        15,
        EstimatorParams.newBuilder()
            .setKind(2)
            .setStrata(1)
            .setCellsPerStratum(2016)
            .setHashCount(1)
            .build(),
        14);
  }

  /** The table of the frames: 10 fixed elements in shape 3x(1<<3), and its doubled shape. */
  static Iblt table(IbltShape shape) {
    Iblt t = new Iblt(SPEC, shape, CellLayout.WIDE);
    new SplittableRandom(42).longs(10).forEach(t::insert);
    return t;
  }

  static final IbltShape SMALL = new IbltShape(3, 1, 3);

  /** Frames with a name each, in file order. */
  record Named(String name, Envelope.Builder body) {}

  static List<Named> bodies() {
    SketchParams params = params();
    long[] elems = new SplittableRandom(7).longs(5).toArray();
    Fingerprint[] fps = {new Fingerprint(10, 1234567, -7), new Fingerprint(0, 0, 0)};
    CodedSymbols symbols = CodedSymbols.of(SPEC, 4, Arrays.copyOf(elems, 3));
    List<Named> b = new ArrayList<>();
    b.add(
        new Named(
            "hello",
            Envelope.newBuilder()
                .setHello(
                    Hello.newBuilder()
                        .setMinVersion(2)
                        .setMaxVersion(2)
                        .setClusterId("golden")
                        .setNodeId("a")
                        .setParams(params.toProto())
                        .addModes(Mode.MODE_RATELESS)
                        .addModes(Mode.MODE_ESTIMATOR_IBLT)
                        .addPartitions(3)
                        .addPartitions(9)
                        .setDigest(Wire.packDigest(SPEC, fps)))));
    b.add(
        new Named(
            "hello-ack",
            Envelope.newBuilder()
                .setHelloAck(
                    HelloAck.newBuilder()
                        .setVersion(2)
                        .setNodeId("b")
                        .setParams(params.toProto())
                        .setMode(Mode.MODE_RATELESS)
                        .addUnequal(3)
                        .setUnequalCounts(Wire.packVarints(new long[] {12})))));
    b.add(
        new Named(
            "refusal",
            Envelope.newBuilder()
                .setRefusal(
                    Refusal.newBuilder()
                        .setCode(Refusal.Code.MALFORMED)
                        .setMessage("IbltOffer extension: extension of shape 3x8 needs 168"))));
    b.add(
        new Named(
            "fingerprints",
            Envelope.newBuilder()
                .setFingerprints(
                    FingerprintSet.newBuilder()
                        .addPartitions(3)
                        .addPartitions(9)
                        .setPacked(Wire.packFingerprints(fps)))));
    byte[] estimatorCells = new byte[64];
    new SplittableRandom(5).nextBytes(estimatorCells);
    b.add(
        new Named(
            "estimator-offer",
            Envelope.newBuilder()
                .setEstimator(
                    EstimatorOffer.newBuilder()
                        .setPartition(3)
                        .addPartitions(3)
                        .addPartitions(9)
                        .setCount(20)
                        .setEstimator(
                            Estimator.newBuilder()
                                .setFormatVersion(1)
                                .setHashId(SPEC.id())
                                .setSeedFingerprint(SPEC.seedFingerprint())
                                .setParams(params.estimator())
                                .setLayout(Wire.toProto(CellLayout.WIDE))
                                .setCells(ByteString.copyFrom(estimatorCells))))));
    b.add(
        new Named(
            "iblt-request-first",
            Envelope.newBuilder()
                .setIbltRequest(
                    IbltRequest.newBuilder()
                        .setPartition(3)
                        .addPartitions(3)
                        .addPartitions(9)
                        .setShape(Wire.toProto(SMALL))
                        .setFirst(true))));
    b.add(
        new Named(
            "iblt-offer",
            Envelope.newBuilder()
                .setIblt(
                    IbltOffer.newBuilder()
                        .setPartition(3)
                        .addPartitions(3)
                        .addPartitions(9)
                        .setAttempt(1)
                        .setEstimate(10)
                        .setTable(Wire.toProto(table(SMALL))))));
    b.add(
        new Named(
            "iblt-request-extension",
            Envelope.newBuilder()
                .setIbltRequest(
                    IbltRequest.newBuilder()
                        .setPartition(3)
                        .addPartitions(3)
                        .addPartitions(9)
                        .setShape(Wire.toProto(SMALL.doubled()))
                        .setExtension(true))));
    Iblt doubled = table(SMALL.doubled());
    b.add(
        new Named(
            "iblt-offer-extension",
            Envelope.newBuilder()
                .setIblt(
                    IbltOffer.newBuilder()
                        .setPartition(3)
                        .addPartitions(3)
                        .addPartitions(9)
                        .setAttempt(2)
                        .setEstimate(10)
                        .setExtension(true)
                        .setTable(
                            IbltProto.newBuilder()
                                .setFormatVersion(Wire.SKETCH_VERSION)
                                .setHashId(SPEC.id())
                                .setSeedFingerprint(SPEC.seedFingerprint())
                                .setShape(Wire.toProto(doubled.shape()))
                                .setLayout(Wire.toProto(CellLayout.WIDE))
                                .setCells(ByteString.copyFrom(doubled.packExtension()))))));
    b.add(
        new Named(
            "iblt-request",
            Envelope.newBuilder()
                .setIbltRequest(
                    IbltRequest.newBuilder()
                        .setPartition(3)
                        .setShape(Wire.toProto(new IbltShape(3, 1, 15))))));
    b.add(
        new Named(
            "digest-request",
            Envelope.newBuilder()
                .setDigestRequest(DigestRequest.newBuilder().setPartition(9).setReason(2))));
    b.add(
        new Named(
            "digest-chunk",
            Envelope.newBuilder()
                .setDigestChunk(
                    DigestChunk.newBuilder()
                        .setPartition(9)
                        .setElements(Wire.packLongs(elems, 0, 5))
                        .setLast(true))));
    b.add(
        new Named(
            "missing",
            Envelope.newBuilder()
                .setMissing(
                    MissingChunk.newBuilder()
                        .setPartition(3)
                        .setMissingAtInitiator(Wire.packLongs(elems, 0, 2))
                        .setMissingAtResponder(Wire.packLongs(elems, 2, 5))
                        .setLast(true)
                        .setAttempts(2))));
    SymbolChunk eightSymbols =
        SymbolChunk.newBuilder()
            .addPartitions(3)
            .addFirsts(0)
            .addCounts(8)
            .setSymbols(ByteString.copyFrom(PackedSymbols.pack(symbols, 0, 8)))
            .build();
    b.add(new Named("symbols", Envelope.newBuilder().setSymbols(eightSymbols)));
    b.add(
        new Named(
            "symbol-request",
            Envelope.newBuilder()
                .setSymbolRequest(SymbolRequest.newBuilder().addPartitions(3).addUpTo(16))));
    b.add(
        new Named(
            "rateless-fallback",
            Envelope.newBuilder()
                .setRatelessFallback(RatelessFallback.newBuilder().addPartitions(9))));
    b.add(
        new Named(
            "record-request",
            Envelope.newBuilder()
                .setRecordRequest(
                    RecordRequest.newBuilder()
                        .setPartition(3)
                        .setElements(Wire.packLongs(elems, 0, 2))
                        .setWillSend(3)
                        .setLast(true))));
    RecordProto r =
        RecordProto.newBuilder()
            .setKey(ByteString.copyFromUtf8("k"))
            .setValue(ByteString.copyFromUtf8("v"))
            .setVersion(1L << 20)
            .setOrigin(7)
            .build();
    b.add(
        new Named(
            "record-batch",
            Envelope.newBuilder()
                .setRecordBatch(
                    RecordBatch.newBuilder()
                        .setPartition(3)
                        .setBatchSeq(0)
                        .addRecords(r)
                        .addRecords(r.toBuilder().setTombstone(true).clearValue())
                        .setCrc32C(0x1234))));
    b.add(
        new Named(
            "record-ack",
            Envelope.newBuilder()
                .setRecordAck(RecordAck.newBuilder().setBatchSeq(0).setApplied(true))));
    b.add(
        new Named(
            "repair-end",
            Envelope.newBuilder()
                .setRepairEnd(RepairEnd.newBuilder().setBatches(1).setRecords(2))));
    b.add(
        new Named(
            "verify-digest",
            Envelope.newBuilder()
                .setVerifyDigest(VerifyDigest.newBuilder().setDigest(0x0123456789abcdefL))));
    b.add(
        new Named(
            "verify-reply",
            Envelope.newBuilder()
                .setVerifyReply(
                    VerifyReply.newBuilder()
                        .setEqual(false)
                        .setDigest(Wire.packDigest(SPEC, fps)))));
    b.add(new Named("done", Envelope.newBuilder().setDone(Done.getDefaultInstance())));
    // Appended with MODE_RATELESS_GROUPED (the frames above are unchanged by it).
    b.add(
        new Named(
            "hello-grouped",
            Envelope.newBuilder()
                .setHello(
                    Hello.newBuilder()
                        .setMinVersion(2)
                        .setMaxVersion(2)
                        .setClusterId("golden")
                        .setNodeId("a")
                        .setParams(params.toProto())
                        .addModes(Mode.MODE_RATELESS_GROUPED)
                        .addModes(Mode.MODE_RATELESS)
                        .addModes(Mode.MODE_ESTIMATOR_IBLT)
                        .setDigest(Wire.packDigest(SPEC, fps)))));
    b.add(
        new Named(
            "hello-ack-grouped",
            Envelope.newBuilder()
                .setHelloAck(
                    HelloAck.newBuilder()
                        .setVersion(2)
                        .setNodeId("b")
                        .setParams(params.toProto())
                        .setMode(Mode.MODE_RATELESS_GROUPED)
                        .addUnequal(3)
                        .addUnequal(9)
                        .setUnequalCounts(Wire.packVarints(new long[] {12, 7})))));
    b.add(
        new Named(
            "symbol-request-split",
            Envelope.newBuilder()
                .setSymbolRequest(
                    SymbolRequest.newBuilder()
                        .addSplit(3)
                        .addPartitions(3)
                        .addUpTo(40)
                        .addPartitions(9)
                        .addUpTo(24))));
    // Added within format 2: the first symbols of a stream with its snapshot's fingerprint digest.
    b.add(
        new Named(
            "symbols-snapshot-digest",
            Envelope.newBuilder()
                .setSymbols(
                    eightSymbols.toBuilder()
                        .addSnapshotPartitions(3)
                        .addSnapshotDigests(SPEC.fingerprintDigest(symbolsFingerprint())))));
    // Added within format 2, negotiated: both sides offer row batches, and a bulk partition's rows.
    b.add(
        new Named(
            "hello-row-batches",
            Envelope.newBuilder()
                .setHello(
                    Hello.newBuilder()
                        .setMinVersion(2)
                        .setMaxVersion(2)
                        .setClusterId("golden")
                        .setNodeId("a")
                        .setParams(params.toProto())
                        .addModes(Mode.MODE_RATELESS)
                        .addModes(Mode.MODE_ESTIMATOR_IBLT)
                        .setDigest(Wire.packDigest(SPEC, fps))
                        .setRowBatches(true))));
    b.add(
        new Named(
            "hello-ack-row-batches",
            Envelope.newBuilder()
                .setHelloAck(
                    HelloAck.newBuilder()
                        .setVersion(2)
                        .setNodeId("b")
                        .setParams(params.toProto())
                        .setMode(Mode.MODE_RATELESS)
                        .addUnequal(3)
                        .setUnequalCounts(Wire.packVarints(new long[] {0}))
                        .setRowBatches(true))));
    b.add(new Named("row-batch", Envelope.newBuilder().setRowBatch(rowBatch())));
    // Added within format 2: the initiator's expected difference, and the responder's echo (the
    // grouped Hello and the row batches' HelloAck above, with the new field).
    b.add(
        new Named(
            "hello-expected-difference",
            Envelope.newBuilder()
                .setHello(
                    body(b, "hello-grouped").getHello().toBuilder()
                        .setRowBatches(true)
                        .setExpectedDifference(1000))));
    b.add(
        new Named(
            "hello-ack-expected-difference",
            Envelope.newBuilder()
                .setHelloAck(
                    body(b, "hello-ack-row-batches").getHelloAck().toBuilder()
                        .setMode(Mode.MODE_RATELESS_GROUPED)
                        .setExpectedDifference(1000))));
    // Added within format 2: the estimator path's snapshot digests, the initiator's with its table
    // and the responder's with its lists (the "iblt-offer" and "missing" frames above, with them).
    b.add(
        new Named(
            "iblt-offer-snapshot-digests",
            Envelope.newBuilder()
                .setIblt(
                    body(b, "iblt-offer").getIblt().toBuilder()
                        .addSnapshotPartitions(3)
                        .addSnapshotDigests(SPEC.fingerprintDigest(symbolsFingerprint()))
                        .addSnapshotPartitions(9)
                        .addSnapshotDigests(0x0123_4567_89ab_cdefL))));
    b.add(
        new Named(
            "missing-snapshot-digest",
            Envelope.newBuilder()
                .setMissing(
                    body(b, "missing").getMissing().toBuilder()
                        .setSnapshotDigest(SPEC.fingerprintDigest(symbolsFingerprint())))));
    return b;
  }

  /** The body of the frame named {@code name} in {@code b}. */
  private static Envelope.Builder body(List<Named> b, String name) {
    return b.stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow().body();
  }

  /** The golden row batch's records: one live, one tombstone, of the partition of key "k". */
  static List<ReplicaRecord> rowBatchRecords() {
    byte[] k = "k".getBytes(StandardCharsets.UTF_8);
    return List.of(
        ReplicaRecord.of(k, "v".getBytes(StandardCharsets.UTF_8), 1L << 20, 7),
        ReplicaRecord.tombstone(k, 2L << 20, 7));
  }

  static int rowBatchPartition() {
    return HashSpec.partition(
        SPEC.keyHash("k".getBytes(StandardCharsets.UTF_8)), params().partitionsLog2());
  }

  static RowBatch rowBatch() {
    RowBatches.Builder rows = new RowBatches.Builder(SPEC, 64);
    rowBatchRecords().forEach(rows::add);
    return rows.build(rowBatchPartition(), 0);
  }

  /** The fingerprint of the three elements of the golden symbols. */
  static Fingerprint symbolsFingerprint() {
    Fingerprint.Accumulator f = new Fingerprint.Accumulator(SPEC);
    for (long x : Arrays.copyOf(new SplittableRandom(7).longs(5).toArray(), 3)) {
      f.add(x);
    }
    return f.snapshot();
  }

  static List<Envelope> frames() {
    List<Named> bodies = bodies();
    List<Envelope> out = new ArrayList<>();
    for (int i = 0; i < bodies.size(); i++) {
      out.add(
          bodies.get(i).body().setFormatVersion(2).setSessionId(0xfeedL).setSequence(i).build());
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

  /** One line per frame: sequence, name, body case, offset of its length prefix, frame bytes. */
  static String index(List<Envelope> frames) {
    List<Named> bodies = bodies();
    StringBuilder s = new StringBuilder("# sequence name body offset bytes (frames-v2.bin)\n");
    long offset = 0;
    for (int i = 0; i < frames.size(); i++) {
      int n = Wire.frame(frames.get(i)).length;
      s.append(i)
          .append(' ')
          .append(bodies.get(i).name())
          .append(' ')
          .append(frames.get(i).getBodyCase())
          .append(' ')
          .append(offset)
          .append(' ')
          .append(n)
          .append('\n');
      offset += n;
    }
    return s.toString();
  }

  private static byte[] resource(String name) throws Exception {
    try (var in = WireGoldenV2Test.class.getResourceAsStream(name)) {
      assertThat(in).as("golden file " + name).isNotNull();
      return in.readAllBytes();
    }
  }

  @Test
  void goldenFramesDecodeAndReEncodeByteForByte() throws Exception {
    byte[] golden = resource(GOLDEN);
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
    assertThat(new String(resource(INDEX), StandardCharsets.UTF_8)).isEqualTo(index(expected));
    EnumSet<Envelope.BodyCase> all = EnumSet.allOf(Envelope.BodyCase.class);
    all.remove(Envelope.BodyCase.BODY_NOT_SET);
    assertThat(parsed.stream().map(Envelope::getBodyCase).distinct())
        .containsExactlyInAnyOrderElementsOf(all);
    assertThat(parsed).allMatch(e -> e.getFormatVersion() == 2);
  }

  @Test
  void thePayloadsReadWithTodaysCode() throws Exception {
    List<Envelope> f = frames();
    SketchParams p = params();
    // The Hello's digest and the HelloAck's counts.
    Hello hello = f.get(0).getHello();
    assertThat(Wire.digestCounts(hello.getDigest(), 2)).containsExactly(10, 0);
    assertThat(Wire.unpackVarints(f.get(1).getHelloAck().getUnequalCounts(), 1, "counts"))
        .containsExactly(12);
    // The whole table, then its extension unfolds to the doubled table (here against an empty
    // local table: the difference is the sender's table itself).
    Iblt small = Wire.readIblt(f.get(6).getIblt().getTable(), p, null);
    assertThat(small.sameCells(table(SMALL))).isTrue();
    IbltOffer ext = f.get(8).getIblt();
    assertThat(ext.getExtension()).isTrue();
    ByteBuffer cells = Wire.readExtension(ext.getTable(), p, SMALL.doubled());
    assertThat(cells.remaining()).isEqualTo(SMALL.cells() * CellLayout.WIDE.cellBytes());
    Iblt unfolded = Iblt.unfold(small, cells, new Iblt(SPEC, SMALL.doubled(), CellLayout.WIDE));
    assertThat(unfolded.sameCells(table(SMALL.doubled()))).isTrue();
    PeelResult r = unfolded.peel();
    assertThat(r.complete()).isTrue();
    long[] truth = new SplittableRandom(42).longs(10).sorted().toArray();
    assertThat(Arrays.stream(r.onlyHere()).sorted().toArray()).containsExactly(truth);
    // The symbols: 8 coded symbols of 14 bytes.
    SymbolChunk sc = f.get(13).getSymbols();
    assertThat(sc.getSymbols().size()).isEqualTo(PackedSymbols.bytes(8));
    // The snapshot digest: the fingerprint digest of the symbols' three elements, frozen.
    SymbolChunk withDigest = f.get(26).getSymbols();
    assertThat(withDigest.getSnapshotPartitionsList()).containsExactly(3);
    assertThat(withDigest.getSnapshotDigestsList())
        .containsExactly(SPEC.fingerprintDigest(symbolsFingerprint()));
    // The row batch: its rows read back as the records they were made of.
    assertThat(f.get(27).getHello().getRowBatches()).isTrue();
    assertThat(f.get(28).getHelloAck().getRowBatches()).isTrue();
    assertThat(f.get(30).getHello().getExpectedDifference()).isEqualTo(1000);
    assertThat(f.get(31).getHelloAck().getExpectedDifference()).isEqualTo(1000);
    RowBatch rb = f.get(29).getRowBatch();
    List<ReplicaRecord> got = RowBatches.read(rb, 10, SPEC, p.partitionsLog2()).records();
    assertThat(got).usingRecursiveFieldByFieldElementComparator().isEqualTo(rowBatchRecords());
  }

  @Test
  @EnabledIfSystemProperty(named = "reconcile.golden.write", matches = "true")
  void writeGoldenFrames() throws Exception {
    Path p = Path.of("src/test/resources" + GOLDEN);
    Files.createDirectories(p.getParent());
    List<Envelope> f = frames();
    Files.write(p, encode(f));
    Files.writeString(Path.of("src/test/resources" + INDEX), index(f));
  }
}
