package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.reconcile.core.wire.Refusal.Code;
import dev.reconcile.core.wire.RowBatch;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/**
 * {@link RowBatches}: the rows of a bulk partition on the wire, and every refusal of a bad batch.
 */
class RowBatchesTest {
  private static final HashSpec SPEC = HashSpec.xxh3(0x5EEDL);
  private static final int LOG2 = 4;
  private static final int P = 5;

  /** {@code n} records of partition {@link #P}, some tombstones, values of 0 to 300 bytes. */
  private static List<ReplicaRecord> records(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed);
    List<ReplicaRecord> out = new ArrayList<>();
    while (out.size() < n) {
      byte[] key = new byte[1 + r.nextInt(24)];
      for (int i = 0; i < key.length; i++) {
        key[i] = (byte) r.nextInt();
      }
      if (HashSpec.partition(SPEC.keyHash(key), LOG2) != P) {
        continue;
      }
      boolean tomb = r.nextInt(6) == 0;
      byte[] value = new byte[tomb ? 0 : r.nextInt(301)];
      for (int i = 0; i < value.length; i++) {
        value[i] = (byte) r.nextInt();
      }
      out.add(new ReplicaRecord(key, value, r.nextLong(), r.nextLong(), tomb));
    }
    return out;
  }

  /** A live record with a key of at least 3 bytes and a value of at least 8 (room for edits). */
  private static ReplicaRecord sound(long seed) {
    return records(seed, 50).stream()
        .filter(x -> !x.tombstone() && x.key().length >= 3 && x.value().length >= 8)
        .findFirst()
        .orElseThrow();
  }

  private static RowBatch batch(List<ReplicaRecord> records, long seq) {
    RowBatches.Builder b = new RowBatches.Builder(SPEC, 16);
    records.forEach(b::add);
    return b.build(P, seq);
  }

  private static RowBatches.Rows read(RowBatch b) throws ProtocolException {
    return RowBatches.read(b, 1000, SPEC, LOG2);
  }

  /** A batch of {@code rows} with a correct batch checksum (as the wire format defines it). */
  private static RowBatch sealed(int partition, long seq, int count, byte[] rows) {
    CRC32C c = new CRC32C();
    c.update(
        ByteBuffer.allocate(12)
            .order(ByteOrder.LITTLE_ENDIAN)
            .putInt(partition)
            .putLong(seq)
            .flip());
    c.update(rows);
    return RowBatch.newBuilder()
        .setPartition(partition)
        .setBatchSeq(seq)
        .setCount(count)
        .setRows(ByteString.copyFrom(rows))
        .setCrc32C((int) c.getValue())
        .build();
  }

  /** One row's bytes on the wire: varint key length, key, varint row length, row. */
  private static byte[] wireRow(byte[] key, byte[] row) {
    byte[] out = new byte[10 + key.length + row.length];
    int at = RowBatches.putVarint(out, 0, key.length);
    System.arraycopy(key, 0, out, at, key.length);
    at = RowBatches.putVarint(out, at + key.length, row.length);
    System.arraycopy(row, 0, out, at, row.length);
    return Arrays.copyOf(out, at + row.length);
  }

  private static byte[] row(ReplicaRecord r) {
    byte[] out = new byte[RecordRow.length(r.value().length)];
    RecordRow.encode(
        out,
        0,
        r.key(),
        r.version(),
        r.origin(),
        r.tombstone(),
        SPEC.valueHash(r.value()),
        r.value());
    return out;
  }

  /** Re-seals a row's own CRC after an edit of its bytes. */
  private static void reseal(byte[] key, byte[] row) {
    CRC32C c = new CRC32C();
    c.update(key);
    c.update(row, 0, row.length - 4);
    RecordRow.putInt(row, row.length - 4, (int) c.getValue());
  }

  private static void refused(RowBatch b, Code code, String message) {
    assertThatThrownBy(() -> read(b))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining(message)
        .satisfies(e -> assertThat(((ProtocolException) e).code()).isEqualTo(code));
  }

  @Test
  void recordsComeBackAsSent() throws ProtocolException {
    List<ReplicaRecord> sent = records(1, 300);
    RowBatches.Rows rows = read(batch(sent, 7));
    assertThat(rows.size()).isEqualTo(sent.size());
    List<ReplicaRecord> got = rows.records();
    assertThat(rows.maxVersion())
        .isEqualTo(sent.stream().map(ReplicaRecord::version).max(Long::compareUnsigned).get());
    for (int i = 0; i < sent.size(); i++) {
      ReplicaRecord s = sent.get(i);
      ReplicaRecord g = got.get(i);
      assertThat(g.key()).as("key %d", i).isEqualTo(s.key());
      assertThat(g.value()).as("value %d", i).isEqualTo(s.value());
      assertThat(g.version()).isEqualTo(s.version());
      assertThat(g.origin()).isEqualTo(s.origin());
      assertThat(g.tombstone()).isEqualTo(s.tombstone());
      assertThat(rows.keyHash(i)).isEqualTo(SPEC.keyHash(s.key()));
      assertThat(rows.version(i)).isEqualTo(s.version());
      assertThat(rows.tombstone(i)).isEqualTo(s.tombstone());
      assertThat(rows.key(i)).isEqualTo(s.key());
    }
  }

  @Test
  void aStoredRowIsCopiedAsItIs() throws ProtocolException {
    List<ReplicaRecord> sent = records(2, 40);
    RowBatches.Builder asRows = new RowBatches.Builder(SPEC, 16);
    for (ReplicaRecord r : sent) {
      byte[] row = row(r);
      byte[] padded = new byte[row.length + 9];
      System.arraycopy(row, 0, padded, 5, row.length);
      byte[] key = new byte[r.key().length + 3];
      System.arraycopy(r.key(), 0, key, 2, r.key().length);
      asRows.addRow(key, 2, r.key().length, padded, 5, row.length);
    }
    RowBatch fromRows = asRows.build(P, 3);
    assertThat(fromRows).isEqualTo(batch(sent, 3));
    RowBatches.Rows rows = read(fromRows);
    for (int i = 0; i < sent.size(); i++) {
      byte[] row = row(sent.get(i));
      assertThat(
              Arrays.copyOfRange(
                  rows.array(), rows.rowOffset(i), rows.rowOffset(i) + rows.rowLength(i)))
          .isEqualTo(row);
    }
  }

  @Test
  void aBuilderSizedByTheBatchBeforeBuildsTheSameBatchInOneBuffer() {
    List<ReplicaRecord> sent = records(4, 1000);
    int expected = 1 << 20;
    RowBatches.Builder grown = new RowBatches.Builder(SPEC, expected);
    assertThat(grown.capacity()).isEqualTo(64 << 10);
    sent.forEach(grown::add);
    int bytes = grown.bytes();
    assertThat(grown.capacity()).isGreaterThan(64 << 10); // it doubled
    // The next batch of the same source starts at the bytes of this one plus an eighth.
    RowBatches.Builder sized = new RowBatches.Builder(SPEC, expected, bytes);
    assertThat(sized.capacity()).isEqualTo(Math.max(64 << 10, bytes + bytes / 8));
    sent.forEach(sized::add);
    assertThat(sized.capacity()).isEqualTo(Math.max(64 << 10, bytes + bytes / 8));
    assertThat(sized.build(P, 9)).isEqualTo(grown.build(P, 9));
    // Never past the expected size, never under 64 KiB, and a first batch (0) as before.
    assertThat(new RowBatches.Builder(SPEC, expected, 4 << 20).capacity()).isEqualTo(expected);
    assertThat(new RowBatches.Builder(SPEC, expected, 1000).capacity()).isEqualTo(64 << 10);
    assertThat(new RowBatches.Builder(SPEC, 100, Integer.MAX_VALUE).capacity()).isEqualTo(100);
  }

  @Test
  void theBuilderKeepsTheTombstonesApart() {
    List<ReplicaRecord> sent = records(3, 200);
    RowBatches.Builder b = new RowBatches.Builder(SPEC, 16);
    List<ReplicaRecord> tombs = new ArrayList<>();
    for (int i = 0; i < sent.size(); i++) {
      ReplicaRecord r = sent.get(i);
      if (i % 2 == 0) {
        b.add(r);
      } else {
        byte[] row = row(r);
        b.addRow(r.key(), 0, r.key().length, row, 0, row.length);
      }
      if (r.tombstone()) {
        tombs.add(r);
      }
    }
    assertThat(tombs).isNotEmpty();
    assertThat(b.tombstones()).isEqualTo(tombs.size());
    for (int i = 0; i < tombs.size(); i++) {
      assertThat(b.tombstoneKey(i)).isEqualTo(tombs.get(i).key());
      assertThat(b.tombstoneVersion(i)).isEqualTo(tombs.get(i).version());
    }
    assertThat(b.count()).isEqualTo(sent.size());
    long payload = sent.stream().mapToLong(r -> r.key().length + r.value().length).sum();
    assertThat(b.payloadBytes()).isEqualTo(payload);
  }

  @Test
  void theChecksumCoversPartitionSequenceAndRows() {
    RowBatch b = batch(records(4, 20), 9);
    refused(b.toBuilder().setPartition(P + 1).build(), Code.MALFORMED, "checksum mismatch");
    refused(b.toBuilder().setBatchSeq(10).build(), Code.MALFORMED, "checksum mismatch");
    byte[] rows = b.getRows().toByteArray();
    rows[rows.length / 2] ^= 1;
    refused(b.toBuilder().setRows(ByteString.copyFrom(rows)).build(), Code.MALFORMED, "checksum");
  }

  @Test
  void countsAreCheckedBeforeAnythingIsAllocated() throws ProtocolException {
    RowBatch b = batch(records(5, 20), 1);
    refused(b.toBuilder().setCount(0).build(), Code.MALFORMED, "claims 0 rows");
    refused(b.toBuilder().setCount(1001).build(), Code.LIMIT, "claims 1001 rows (1..1000)");
    refused(b.toBuilder().setCount(-1).build(), Code.LIMIT, "claims 4294967295 rows (1..1000)");
    // 999 rows cannot fit in the bytes of 20: refused on the claim, before the offsets exist.
    refused(b.toBuilder().setCount(999).build(), Code.MALFORMED, "each takes at least 33");
    refused(b.toBuilder().setCount(19).build(), Code.MALFORMED, "bytes after its 19 rows");
    RowBatch more = b.toBuilder().setCount(21).build();
    refused(more, Code.MALFORMED, "row 20: its key length runs past the rows");
    assertThat(read(b).size()).isEqualTo(20);
  }

  @Test
  void framingErrorsAreRefused() {
    ReplicaRecord r = sound(6);
    byte[] row = row(r);
    byte[] good = wireRow(r.key(), row);
    // the row's length runs past the end
    refused(
        sealed(P, 0, 1, Arrays.copyOf(good, good.length - 1)),
        Code.MALFORMED,
        "runs past the rows");
    // a key of 0 bytes, and one over the cap
    refused(sealed(P, 0, 1, wireRow(new byte[0], row)), Code.MALFORMED, "key of 0 bytes");
    byte[] big = new byte[RecordBatches.MAX_KEY_BYTES + 1];
    refused(
        sealed(P, 0, 1, wireRow(big, row)),
        Code.MALFORMED,
        "key of " + big.length + " bytes (1.." + RecordBatches.MAX_KEY_BYTES + ")");
    // a length varint of more than 5 bytes
    byte[] longVarint = new byte[40];
    Arrays.fill(longVarint, 0, 6, (byte) 0x80);
    refused(sealed(P, 0, 1, longVarint), Code.MALFORMED, "row 0: key of");
  }

  @Test
  void badRowsAreRefused() {
    ReplicaRecord r = sound(7);
    byte[] key = r.key();
    byte[] row = row(r);

    byte[] shortRow = Arrays.copyOf(row, RecordRow.OVERHEAD - 1);
    refused(
        sealed(P, 0, 1, wireRow(key, shortRow)),
        Code.MALFORMED,
        "row 0: record is 29 bytes, shorter than the 30-byte minimum");

    byte[] format = row.clone();
    format[0] = 0x02;
    reseal(key, format);
    refused(
        sealed(P, 0, 1, wireRow(key, format)),
        Code.MALFORMED,
        "unknown record format 0x02 (this build reads 0x01)");

    byte[] flags = row.clone();
    flags[17] = 0x04;
    reseal(key, flags);
    refused(sealed(P, 0, 1, wireRow(key, flags)), Code.MALFORMED, "unknown flag bits 0x04");

    byte[] tombWithValue = row.clone();
    tombWithValue[17] = RecordRow.TOMBSTONE;
    reseal(key, tombWithValue);
    refused(
        sealed(P, 0, 1, wireRow(key, tombWithValue)),
        Code.MALFORMED,
        "tombstone carries a " + r.value().length + "-byte value");

    byte[] flipped = row.clone();
    flipped[RecordRow.HEADER] ^= 1; // the value changed, the row's CRC not
    refused(sealed(P, 0, 1, wireRow(key, flipped)), Code.MALFORMED, "row 0: CRC32C mismatch");

    byte[] otherKey = key.clone();
    otherKey[0] ^= 1; // the row moved under another key
    refused(sealed(P, 0, 1, wireRow(otherKey, row)), Code.MALFORMED, "CRC32C mismatch");

    byte[] hash = row.clone();
    RecordRow.putLong(hash, 18, SPEC.valueHash(r.value()) + 1);
    reseal(key, hash);
    refused(sealed(P, 0, 1, wireRow(key, hash)), Code.MALFORMED, "another hash spec?");

    refused(
        sealed(P + 1, 0, 1, wireRow(key, row)), Code.MALFORMED, "holds a record of partition 5");
  }

  @Test
  void anotherHashSpecIsRefused() {
    RowBatch b = batch(records(8, 5), 0);
    assertThatThrownBy(() -> RowBatches.read(b, 1000, HashSpec.xxh3(0x5EEDL + 1), LOG2))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining("value hash");
  }

  @Test
  void droppedRowsLeaveTheRestInOrder() throws ProtocolException {
    List<ReplicaRecord> sent = records(9, 10);
    RowBatches.Rows rows = read(batch(sent, 0));
    boolean[] drop = new boolean[10];
    drop[0] = drop[4] = drop[9] = true;
    RowBatches.Rows kept = rows.without(drop);
    assertThat(kept.size()).isEqualTo(7);
    long max = 0;
    for (int i = 0; i < 10; i++) {
      if (!drop[i] && Long.compareUnsigned(sent.get(i).version(), max) > 0) {
        max = sent.get(i).version();
      }
    }
    assertThat(kept.maxVersion()).isEqualTo(max);
    int j = 0;
    for (int i = 0; i < 10; i++) {
      if (!drop[i]) {
        assertThat(kept.key(j)).isEqualTo(sent.get(i).key());
        assertThat(kept.keyHash(j)).isEqualTo(rows.keyHash(i));
        j++;
      }
    }
  }
}
