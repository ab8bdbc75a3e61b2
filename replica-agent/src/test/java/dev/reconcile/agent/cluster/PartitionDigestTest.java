package dev.reconcile.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.reconcile.core.Fingerprint;
import java.util.Base64;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class PartitionDigestTest {
  static Fingerprint fp(int p) {
    return new Fingerprint(p, 0x9E3779B97F4A7C15L * (p + 1), ~(long) p);
  }

  @Test
  void oneBucketPerPartitionUpTo64() {
    PartitionDigest a = PartitionDigest.of(4, PartitionDigestTest::fp);
    assertThat(a.partitions()).isEqualTo(16);
    assertThat(a.buckets()).isEqualTo(16);
    PartitionDigest b = PartitionDigest.of(4, p -> p == 5 ? new Fingerprint(6, 1, 2) : fp(p));
    assertThat(a.differingBuckets(b)).containsExactly(5);
    assertThat(a.differingPartitions(b)).containsExactly(5);
    assertThat(a.differingPartitions(a)).isEmpty();
    assertThat(a).isNotEqualTo(b).isEqualTo(PartitionDigest.of(4, PartitionDigestTest::fp));
  }

  @Test
  void manyPartitionsShareBuckets() {
    PartitionDigest a = PartitionDigest.of(12, PartitionDigestTest::fp);
    assertThat(a.buckets()).isEqualTo(64);
    assertThat(a.partitionsPerBucket()).isEqualTo(64);
    PartitionDigest b = PartitionDigest.of(12, p -> p == 130 ? Fingerprint.EMPTY : fp(p));
    assertThat(a.differingBuckets(b)).containsExactly(2);
    assertThat(a.differingPartitions(b)).containsExactly(IntStream.range(128, 192).toArray());
    assertThat(a.firstPartition(2)).isEqualTo(128);
    // Different partition counts: everything may differ.
    assertThat(a.differingPartitions(PartitionDigest.of(4, PartitionDigestTest::fp))).hasSize(4096);
  }

  @Test
  void encodingRoundTripsAndStaysCompact() {
    for (int log2 = 0; log2 <= PartitionDigest.MAX_PARTITIONS_LOG2; log2++) {
      PartitionDigest d = PartitionDigest.of(log2, PartitionDigestTest::fp);
      String s = d.encode();
      assertThat(PartitionDigest.decode(s)).isEqualTo(d);
      assertThat(s.length()).as("log2 %d", log2).isLessThanOrEqualTo(346);
    }
  }

  /** Frozen: digests are compared between agents of different versions. */
  @Test
  void goldenVector() {
    assertThat(PartitionDigest.of(2, PartitionDigestTest::fp).encode()).isEqualTo(GOLDEN_P4);
    assertThat(PartitionDigest.of(0, p -> Fingerprint.EMPTY).encode()).isEqualTo(GOLDEN_EMPTY);
  }

  /** The layout the class comment states: XXH3-64 over little-endian (count, sum, sum2), low 32. */
  @Test
  void bucketValueIsXxh3OfTheLittleEndianFingerprints() {
    Fingerprint f = new Fingerprint(3, -5, 0x0102030405060708L);
    java.nio.ByteBuffer b =
        java.nio.ByteBuffer.allocate(24).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    b.putLong(f.count()).putLong(f.sum()).putLong(f.sum2());
    int expected = (int) com.dynatrace.hash4j.hashing.Hashing.xxh3_64().hashBytesToLong(b.array());
    byte[] raw = Base64.getUrlDecoder().decode(PartitionDigest.of(0, p -> f).encode());
    assertThat(raw).hasSize(7);
    assertThat(java.nio.ByteBuffer.wrap(raw, 3, 4).getInt()).isEqualTo(expected);
  }

  static final String GOLDEN_P4 = "AQICk1jsg5jaALw0Hu93yqOy7A";
  static final String GOLDEN_EMPTY = "AQAA5MeKKg";

  @Test
  void malformedDigestsAreRefusedWithAClearMessage() {
    String good = PartitionDigest.of(4, PartitionDigestTest::fp).encode();
    byte[] raw = Base64.getUrlDecoder().decode(good);
    assertBad("", "empty digest");
    assertBad("a".repeat(401), "max 400");
    assertBad("!!!!", "not Base64");
    assertBad(enc(new byte[] {1, 4}), "truncated");
    byte[] v2 = raw.clone();
    v2[0] = 2;
    assertBad(enc(v2), "format version 2");
    byte[] bigP = raw.clone();
    bigP[1] = 13;
    assertBad(enc(bigP), "log2 partitions 13 outside");
    byte[] badB = raw.clone();
    badB[2] = 3;
    assertBad(enc(badB), "log2 buckets 3 for log2 partitions 4");
    assertBad(enc(java.util.Arrays.copyOf(raw, raw.length - 1)), "expected 67");
    assertBad(enc(java.util.Arrays.copyOf(raw, raw.length + 4)), "expected 67");
  }

  static String enc(byte[] b) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  static void assertBad(String s, String message) {
    assertThatThrownBy(() -> PartitionDigest.decode(s))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }
}
