package dev.reconcile.core;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import dev.reconcile.core.wire.CellLayoutProto;
import dev.reconcile.core.wire.IbltProto;
import dev.reconcile.core.wire.IbltShapeProto;
import dev.reconcile.core.wire.PartitionDigest;
import dev.reconcile.core.wire.Refusal.Code;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Conversions between core types and their wire messages, each read validated with a precise error.
 */
public final class Wire {
  /**
   * The one frame format version this build speaks. Version 1 (the first release) is refused with a
   * VERSION error naming both; its messages still parse (golden frames) and its rules are in
   * docs/wire-format.md.
   */
  public static final int FORMAT_VERSION = 2;

  /** Format version of serialized sketches ({@code Iblt}, {@code Estimator}). */
  public static final int SKETCH_VERSION = 1;

  private Wire() {}

  public static IbltShapeProto toProto(IbltShape s) {
    return IbltShapeProto.newBuilder()
        .setHashCount(s.hashCount())
        .setBase(s.base())
        .setLog2(s.log2())
        .build();
  }

  public static IbltShape fromProto(IbltShapeProto p) throws ProtocolException {
    try {
      return new IbltShape(p.getHashCount(), p.getBase(), p.getLog2());
    } catch (IllegalArgumentException e) {
      throw new ProtocolException(Code.MALFORMED, "invalid IBLT shape: " + e.getMessage());
    }
  }

  public static CellLayoutProto toProto(CellLayout l) {
    return CellLayoutProto.newBuilder()
        .setCountBytes(l.countBytes())
        .setKeyBytes(l.keyBytes())
        .setCheckBytes(l.checkBytes())
        .build();
  }

  public static CellLayout fromProto(CellLayoutProto p) throws FormatException {
    try {
      return new CellLayout(p.getCountBytes(), p.getKeyBytes(), p.getCheckBytes());
    } catch (IllegalArgumentException e) {
      throw new FormatException("invalid cell layout: " + e.getMessage());
    }
  }

  public static IbltProto toProto(Iblt t) {
    return IbltProto.newBuilder()
        .setFormatVersion(SKETCH_VERSION)
        .setHashId(t.spec().id())
        .setSeedFingerprint(t.spec().seedFingerprint())
        .setShape(toProto(t.shape()))
        .setLayout(toProto(t.layout()))
        .setCells(ByteString.copyFrom(t.packCells()))
        .build();
  }

  /**
   * Reads a peer's IBLT. Checks, in order and before allocating any cell: format version, hash id,
   * seed fingerprint, shape validity, the shape is one the parameters allow ({@code expected}, when
   * given, exactly), the wide cell layout, and the exact byte length.
   */
  public static Iblt readIblt(IbltProto m, SketchParams params, IbltShape expected)
      throws ProtocolException {
    IbltShape shape = checkIbltHeader(m, params, expected);
    try {
      return Iblt.readCells(
          params.spec(), shape, CellLayout.WIDE, m.getCells().asReadOnlyByteBuffer());
    } catch (FormatException e) {
      throw new ProtocolException(Code.MALFORMED, e.getMessage());
    }
  }

  /**
   * Reads a peer's extension of a failed table to {@code expected} (its doubled shape): the same
   * checks as {@link #readIblt} on everything but the cells, which are returned unread; {@link
   * Iblt#unfold} checks their exact length (half of {@code expected}'s cells) before allocating.
   */
  public static ByteBuffer readExtension(IbltProto m, SketchParams params, IbltShape expected)
      throws ProtocolException {
    checkIbltHeader(m, params, expected);
    return m.getCells().asReadOnlyByteBuffer();
  }

  /** The checks of {@link #readIblt} before the cells; returns the shape. */
  private static IbltShape checkIbltHeader(IbltProto m, SketchParams params, IbltShape expected)
      throws ProtocolException {
    if (m.getFormatVersion() != SKETCH_VERSION) {
      throw new ProtocolException(
          Code.VERSION,
          "IBLT format version " + m.getFormatVersion() + ", this peer reads " + SKETCH_VERSION);
    }
    HashSpec spec = params.spec();
    if (m.getHashId() != spec.id()) {
      throw new ProtocolException(
          Code.HASH, "IBLT hash id " + m.getHashId() + ", local hash id " + spec.id());
    }
    if (m.getSeedFingerprint() != spec.seedFingerprint()) {
      throw new ProtocolException(
          Code.SEED,
          "IBLT seed fingerprint "
              + HashSpec.hex(m.getSeedFingerprint())
              + ", local "
              + HashSpec.hex(spec.seedFingerprint())
              + ": possible corruption or a peer with another hash seed");
    }
    IbltShape shape = fromProto(m.getShape());
    if (!params.allows(shape)) {
      throw new ProtocolException(
          Code.LIMIT,
          "IBLT shape "
              + shape
              + " is not allowed (hash count "
              + params.ibltHashCount()
              + ", largest "
              + params.maxShape()
              + ")");
    }
    if (expected != null && !expected.equals(shape)) {
      throw new ProtocolException(
          Code.MALFORMED, "IBLT shape " + shape + " where " + expected + " was requested");
    }
    CellLayout layout;
    try {
      layout = fromProto(m.getLayout());
    } catch (FormatException e) {
      throw new ProtocolException(Code.MALFORMED, e.getMessage());
    }
    if (!layout.equals(CellLayout.WIDE)) {
      throw new ProtocolException(
          Code.MALFORMED, "IBLT cell layout " + layout + ", expected " + CellLayout.WIDE);
    }
    return shape;
  }

  /** Packs longs as 8-byte little-endian values. */
  public static ByteString packLongs(long[] a, int from, int to) {
    byte[] out = new byte[(to - from) * 8];
    ByteBuffer b = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = from; i < to; i++) {
      b.putLong(a[i]);
    }
    return ByteString.copyFrom(out);
  }

  /** Unpacks 8-byte little-endian values (trusted input: tests and tools). */
  public static long[] unpackLongsUnchecked(ByteString s) {
    long[] out = new long[s.size() / 8];
    ByteBuffer b = s.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getLong();
    }
    return out;
  }

  /**
   * The number of snapshot digests a message lists: its partitions' and its digests' counts must be
   * equal (MALFORMED otherwise); {@code message} names it.
   */
  static int snapshotDigestCount(String message, int partitions, int digests)
      throws ProtocolException {
    if (partitions != digests) {
      throw new ProtocolException(
          Code.MALFORMED,
          message
              + " lists "
              + partitions
              + " snapshot partitions and "
              + digests
              + " snapshot digests");
    }
    return partitions;
  }

  /**
   * Unpacks 8-byte little-endian values, refusing a length that is not a multiple of 8 or over
   * {@code max}.
   */
  public static long[] unpackLongs(ByteString s, int max, String what) throws ProtocolException {
    if (s.size() % 8 != 0) {
      throw new ProtocolException(
          Code.MALFORMED, what + ": " + s.size() + " bytes is not a multiple of 8");
    }
    int n = s.size() / 8;
    if (n > max) {
      throw new ProtocolException(
          Code.LIMIT, what + ": " + n + " elements exceed the cap of " + max);
    }
    long[] out = new long[n];
    ByteBuffer b = s.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < n; i++) {
      out[i] = b.getLong();
    }
    return out;
  }

  /** Compact fingerprints of partitions: counts as varints, digests as 8-byte LE values. */
  public static PartitionDigest packDigest(HashSpec spec, Fingerprint[] fps) {
    ByteString.Output counts = ByteString.newOutput(fps.length * 3);
    CodedOutputStream c = CodedOutputStream.newInstance(counts, 256);
    long[] d = new long[fps.length];
    try {
      for (int i = 0; i < fps.length; i++) {
        c.writeUInt64NoTag(fps[i].count());
        d[i] = spec.fingerprintDigest(fps[i]);
      }
      c.flush();
    } catch (IOException e) {
      throw new IllegalStateException("writing to memory cannot fail", e);
    }
    return PartitionDigest.newBuilder()
        .setCounts(counts.toByteString())
        .setHashes(packLongs(d, 0, d.length))
        .build();
  }

  /** The element counts of a {@link PartitionDigest} of {@code n} partitions. */
  public static long[] digestCounts(PartitionDigest p, int n) throws ProtocolException {
    return unpackVarints(p.getCounts(), n, "partition digest counts");
  }

  /** The fingerprint digests of a {@link PartitionDigest} of {@code n} partitions. */
  public static long[] digestHashes(PartitionDigest p, int n) throws ProtocolException {
    if (p.getHashes().size() != 8L * n) {
      throw new ProtocolException(
          Code.MALFORMED,
          "partition digest of "
              + n
              + " partitions needs "
              + 8L * n
              + " hash bytes, got "
              + p.getHashes().size());
    }
    return unpackLongs(p.getHashes(), n, "partition digest hashes");
  }

  /** Unsigned varints, concatenated. */
  public static ByteString packVarints(long[] values) {
    ByteString.Output out = ByteString.newOutput(values.length * 3);
    CodedOutputStream c = CodedOutputStream.newInstance(out, 256);
    try {
      for (long v : values) {
        c.writeUInt64NoTag(v);
      }
      c.flush();
    } catch (IOException e) {
      throw new IllegalStateException("writing to memory cannot fail", e);
    }
    return out.toByteString();
  }

  /**
   * Exactly {@code n} unsigned varints filling {@code s}, else a MALFORMED refusal naming {@code
   * what}.
   */
  public static long[] unpackVarints(ByteString s, int n, String what) throws ProtocolException {
    if (s.size() < n || s.size() > 10L * n) {
      throw new ProtocolException(
          Code.MALFORMED, what + ": " + s.size() + " bytes cannot hold " + n + " varints");
    }
    long[] out = new long[n];
    com.google.protobuf.CodedInputStream in = s.newCodedInput();
    try {
      for (int i = 0; i < n; i++) {
        out[i] = in.readRawVarint64();
      }
      if (!in.isAtEnd()) {
        throw new ProtocolException(Code.MALFORMED, what + ": bytes left after " + n + " varints");
      }
    } catch (IOException e) {
      throw new ProtocolException(Code.MALFORMED, what + ": " + e.getMessage());
    }
    return out;
  }

  public static ByteString packFingerprints(Fingerprint[] fps) {
    byte[] out = new byte[fps.length * Fingerprint.WIRE_BYTES];
    ByteBuffer b = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
    for (Fingerprint f : fps) {
      b.putLong(f.count()).putLong(f.sum()).putLong(f.sum2());
    }
    return ByteString.copyFrom(out);
  }

  public static Fingerprint[] unpackFingerprints(ByteString s, int n) throws ProtocolException {
    if (s.size() != (long) n * Fingerprint.WIRE_BYTES) {
      throw new ProtocolException(
          Code.MALFORMED,
          "fingerprints of "
              + n
              + " partitions need "
              + (long) n * Fingerprint.WIRE_BYTES
              + " bytes, got "
              + s.size());
    }
    Fingerprint[] out = new Fingerprint[n];
    ByteBuffer b = s.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < n; i++) {
      out[i] = new Fingerprint(b.getLong(), b.getLong(), b.getLong());
    }
    return out;
  }

  /** Longest peer-supplied text kept for messages and logs. */
  public static final int PEER_TEXT_MAX = 256;

  /**
   * A peer-supplied string (refusal message, node id) made safe to log and report: control
   * characters replaced by {@code ?}, cut at {@value #PEER_TEXT_MAX} characters, "(no reason
   * given)" when blank.
   */
  public static String peerText(String s) {
    if (s == null || s.isBlank()) {
      return "(no reason given)";
    }
    StringBuilder b = new StringBuilder(Math.min(s.length(), PEER_TEXT_MAX + 3));
    for (int i = 0; i < s.length() && b.length() < PEER_TEXT_MAX; i++) {
      char c = s.charAt(i);
      b.append(Character.isISOControl(c) ? '?' : c);
    }
    if (s.length() > PEER_TEXT_MAX) {
      b.append("...");
    }
    return b.toString();
  }

  /** A frame: 4-byte big-endian length, then the serialized envelope. */
  public static byte[] frame(com.google.protobuf.MessageLite m) {
    int n = m.getSerializedSize();
    byte[] out = new byte[4 + n];
    ByteBuffer.wrap(out).putInt(n);
    try {
      CodedOutputStream cos = CodedOutputStream.newInstance(out, 4, n);
      m.writeTo(cos);
      cos.checkNoSpaceLeft();
    } catch (IOException e) {
      throw new IllegalStateException("serializing to an array cannot fail", e);
    }
    return out;
  }
}
