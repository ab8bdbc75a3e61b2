package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.agent.store.RecordCodec.Stored;
import dev.reconcile.core.ReplicaRecord;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RecordCodecTest {
  @Test
  void roundTrip() {
    byte[] key = bytes("key");
    byte[] enc =
        RecordCodec.encode(key, 0x0102030405060708L, -2L, false, 0xabcdefL, bytes("value"));
    assertThat(enc).hasSize(RecordCodec.OVERHEAD + 5);
    assertThat(enc[0]).isEqualTo((byte) 1);
    Stored s = RecordCodec.decode(key, enc);
    assertThat(s.toRecord())
        .isEqualTo(ReplicaRecord.of(key, bytes("value"), 0x0102030405060708L, -2L));
    assertThat(s.valueHash).isEqualTo(0xabcdefL);
    Stored t = RecordCodec.decode(key, RecordCodec.encode(key, 5, 6, true, 7, new byte[0]));
    assertThat(t.tombstone).isTrue();
    assertThat(t.value).isEmpty();
  }

  /**
   * The encoding into a (direct) buffer, which partition ingest writes, is byte for byte the array
   * encoding, from any starting position: values of 0-300 bytes, tombstones, seeded.
   */
  @Test
  void bufferEncodingEqualsArrayEncoding() {
    long seed = 20261202L;
    SplittableRandom r = new SplittableRandom(seed);
    for (int t = 0; t < 500; t++) {
      byte[] key = new byte[1 + r.nextInt(40)];
      r.nextBytes(key);
      boolean tombstone = r.nextInt(5) == 0;
      byte[] value = new byte[tombstone ? 0 : r.nextInt(301)];
      r.nextBytes(value);
      long version = r.nextLong();
      long origin = r.nextLong();
      long valueHash = r.nextLong();
      byte[] expected = RecordCodec.encode(key, version, origin, tombstone, valueHash, value);
      int start = r.nextInt(8);
      ByteBuffer out = ByteBuffer.allocateDirect(start + RecordCodec.OVERHEAD + 300);
      out.position(start);
      RecordCodec.encode(out, key, version, origin, tombstone, valueHash, value);
      assertThat(out.position()).as("seed %d, trial %d", seed, t).isEqualTo(start);
      byte[] actual = new byte[out.remaining()];
      out.get(actual);
      assertThat(actual).as("seed %d, trial %d", seed, t).isEqualTo(expected);
    }
  }

  @Test
  void everyFlippedByteIsDetected() {
    byte[] key = bytes("key");
    byte[] enc = RecordCodec.encode(key, 1, 2, false, 3, bytes("hello"));
    for (int i = 0; i < enc.length; i++) {
      byte[] bad = enc.clone();
      bad[i] ^= 0x10;
      int at = i;
      assertThatThrownBy(() -> RecordCodec.decode(key, bad))
          .as("flip at %d", at)
          .isInstanceOf(StoreException.Corrupt.class)
          .hasMessageContaining("corrupt record for key 0x6b6579");
    }
  }

  @Test
  void preciseMessages() {
    byte[] key = bytes("k");
    byte[] enc = RecordCodec.encode(key, 1, 2, false, 3, bytes("v"));
    byte[] crc = enc.clone();
    crc[RecordCodec.HEADER] ^= 1;
    assertThatThrownBy(() -> RecordCodec.decode(key, crc))
        .hasMessageContaining("CRC32C mismatch: stored 0x");
    byte[] fmt = enc.clone();
    fmt[0] = 9;
    assertThatThrownBy(() -> RecordCodec.decode(key, fmt))
        .hasMessageContaining("unknown record format 0x09 (this build reads 0x01)");
    assertThatThrownBy(() -> RecordCodec.decode(key, new byte[5]))
        .hasMessageContaining("record is 5 bytes, shorter than the 30-byte minimum");
    // a record moved under another key fails its CRC
    assertThatThrownBy(() -> RecordCodec.decode(bytes("j"), enc)).hasMessageContaining("CRC32C");
  }

  @Test
  void tombstoneWithValueIsRejectedByTheRecord() {
    assertThatThrownBy(() -> new ReplicaRecord(bytes("k"), bytes("v"), 1, 1, true))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tombstone");
  }
}
