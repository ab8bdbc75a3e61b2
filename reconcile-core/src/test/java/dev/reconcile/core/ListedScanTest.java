package dev.reconcile.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link RecordStore#scanListed}'s default (lookups a chunk of elements at a time) read as rows:
 * every listed record exactly once, each call within its record and byte caps, the records looked
 * up past the byte cap kept for the next call.
 */
final class ListedScanTest {
  private static final EstimatorFactory ESTIMATORS = ExactEstimator.factory(1.0);
  private static final SketchParams PARAMS = TestSets.params(11, 2, 10, ESTIMATORS.params());

  @ParameterizedTest
  @CsvSource({"7, 1048576", "100, 300", "1000, 1", "3, 1"})
  void rowsOfAListComeOnceWithinTheCaps(int maxRecords, long maxBytes) throws ProtocolException {
    MemoryReplica m = new MemoryReplica(PARAMS, ESTIMATORS);
    for (int k = 0; k < 400; k++) {
      m.write(
          ReplicaRecord.of(("k" + k).getBytes(StandardCharsets.UTF_8), new byte[100], 1L << 20, 1));
    }
    for (int p = 0; p < PARAMS.partitions(); p++) {
      List<Long> all = new ArrayList<>();
      try (ElementCursor c = m.sketches().sortedElements(p)) {
        while (c.next()) {
          all.add(c.element());
        }
      }
      // Every other element, and one the partition does not hold.
      long[] listed = new long[(all.size() + 1) / 2 + 1];
      for (int i = 0; i < all.size(); i += 2) {
        listed[i / 2] = all.get(i);
      }
      listed[listed.length - 1] = 0x5EED;
      Set<ReplicaRecord> expected = new HashSet<>(m.recordsFor(p, listed));
      List<ReplicaRecord> got = new ArrayList<>();
      int calls = 0;
      try (RecordStore.PartitionScan scan = m.scanListed(p, listed)) {
        assertThat(scan.ranged()).isFalse();
        while (true) {
          RowBatches.Builder out = new RowBatches.Builder(PARAMS.spec(), 64);
          int n = scan.nextRows(out, maxRecords, maxBytes);
          assertThat(n).isEqualTo(out.count()).isBetween(0, maxRecords);
          if (n == 0) {
            break;
          }
          calls++;
          // Closed once the bytes reach the cap, so one row past it at most: a row takes
          // 1 + 2 to 4 + 2 + 130 bytes (key length, key, row length, row).
          assertThat((long) out.bytes()).isLessThan(maxBytes + 137);
          got.addAll(
              RowBatches.read(out.build(p, 0), 100_000, PARAMS.spec(), PARAMS.partitionsLog2())
                  .records());
        }
      }
      assertThat(got).hasSameSizeAs(expected).containsExactlyInAnyOrderElementsOf(expected);
      int perCall = (int) Math.min(maxRecords, maxBytes / 137 + 1);
      assertThat(calls).isGreaterThanOrEqualTo((expected.size() + perCall - 1) / perCall);
    }
  }
}
