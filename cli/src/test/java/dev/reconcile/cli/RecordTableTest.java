package dev.reconcile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.reconcile.core.HashSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link RecordTable#dedupe} against a hash-map oracle (the last record of a key wins): records
 * copied in through {@link RecordTable#add}, with keys repeated from twice to hundreds of times (so
 * that buckets are both checked pairwise and sorted), with equal and with different values.
 */
class RecordTableTest {
  private static final HashSpec SPEC = HashSpec.xxh3(3);

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4})
  void lastRecordOfEachKeyIsKept(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    List<byte[][]> records = new ArrayList<>();
    int keys = 2000 + r.nextInt(3000);
    for (int i = 0; i < keys; i++) {
      byte[] k = ("k" + i).getBytes(StandardCharsets.US_ASCII);
      int copies = r.nextInt(10) == 0 ? 2 + r.nextInt(seed == 1 ? 400 : 5) : 1;
      boolean sameValue = r.nextBoolean();
      for (int c = 0; c < copies; c++) {
        byte[] v = ("v" + (sameValue ? 0 : r.nextInt(3))).getBytes(StandardCharsets.US_ASCII);
        records.add(new byte[][] {k, r.nextInt(20) == 0 ? new byte[0] : v});
      }
    }
    // Shuffle, then the oracle: the last record of each key, conflicts where values differ.
    for (int i = records.size() - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      byte[][] t = records.get(i);
      records.set(i, records.get(j));
      records.set(j, t);
    }
    Map<String, Integer> last = new HashMap<>();
    for (int i = 0; i < records.size(); i++) {
      last.put(new String(records.get(i)[0], StandardCharsets.US_ASCII), i);
    }
    // A key conflicts when any of its values differs from the last one.
    Map<String, Boolean> conflicts = new HashMap<>();
    for (int i = 0; i < records.size(); i++) {
      String k = new String(records.get(i)[0], StandardCharsets.US_ASCII);
      if (!Arrays.equals(records.get(i)[1], records.get(last.get(k))[1])) {
        conflicts.put(k, true);
      }
    }
    RecordTable t = new RecordTable(SPEC);
    for (byte[][] rec : records) {
      t.add(rec[0], 0, rec[0].length, rec[1], 0, rec[1].length);
    }
    List<String> warnings = new ArrayList<>();
    t.dedupe("x", warnings::add);
    assertThat(t.size()).as("seed %d", seed).isEqualTo(last.size());
    assertThat(t.duplicateLines()).as("seed %d", seed).isEqualTo(records.size() - last.size());
    assertThat(t.conflictingKeys()).as("seed %d", seed).isEqualTo(conflicts.size());
    assertThat(warnings).as("seed %d", seed).hasSize(Math.min(6, conflicts.size()));
    for (int i = 0; i < records.size(); i++) {
      String k = new String(records.get(i)[0], StandardCharsets.US_ASCII);
      assertThat(t.isDropped(i)).as("seed %d record %d", seed, i).isEqualTo(last.get(k) != i);
      assertThat(t.key(i)).isEqualTo(records.get(i)[0]);
      assertThat(t.value(i)).isEqualTo(records.get(i)[1]);
    }
  }
}
