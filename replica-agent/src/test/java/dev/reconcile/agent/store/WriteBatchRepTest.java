package dev.reconcile.agent.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * {@link WriteBatchRep} builds the bytes RocksDB's own {@link WriteBatch} builds for the same puts
 * and deletes, assembled or row by row, and RocksDB writes them as such: keys and values of every
 * length class of the varints (1, 2 and 3 bytes), digest rows written in place, counts past one
 * byte, and a batch past the kept array.
 */
class WriteBatchRepTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 44})
  void aBatchIsByteForByteWhatRocksDbBuilds(long seed) throws RocksDBException {
    Random rnd = new Random(seed);
    withDb(
        (db, handles, wo, direct) -> {
          ColumnFamilyHandle records = handles.get(1);
          ColumnFamilyHandle digests = handles.get(2);
          WriteBatchRep rep = new WriteBatchRep(direct);
          for (int round = 0; round < 6; round++) {
            // Rounds 0-2 assembled in the array (the bound is only a hint: the array grows), 3-5
            // row
            // by row into the native batch.
            boolean large = round >= 3;
            rep.begin(large ? WriteBatchRep.KEPT_BYTES + 1L : 1 << 10);
            assertThat(rep.rowByRow()).isEqualTo(large);
            try (WriteBatch expected = new WriteBatch()) {
              int n = 1 + rnd.nextInt(700);
              int[] valueLengths = {0, 1, 127, 128, 16_383, 16_384, 70_000};
              for (int i = 0; i < n; i++) {
                byte[] key = randomBytes(rnd, rnd.nextInt(10) == 0 ? 200 : 1 + rnd.nextInt(40));
                byte[] value = randomBytes(rnd, valueLengths[rnd.nextInt(valueLengths.length)]);
                int partition = rnd.nextInt(1 << 16);
                long element = rnd.nextLong();
                switch (rnd.nextInt(5)) {
                  case 0 -> {
                    expected.put(records, key, value);
                    rep.put(records, key, value);
                  }
                  case 1 -> {
                    byte[] padded = new byte[value.length + 9];
                    System.arraycopy(value, 0, padded, 4, value.length);
                    expected.put(records, key, value);
                    rep.put(records, key, padded, 4, value.length);
                  }
                  case 2 -> {
                    expected.delete(records, key);
                    rep.delete(records, key);
                  }
                  case 3 -> {
                    expected.put(digests, DigestKeys.of(partition, element, key), new byte[0]);
                    rep.putDigest(digests, partition, element, key);
                  }
                  default -> {
                    expected.delete(digests, DigestKeys.of(partition, element, key));
                    rep.deleteDigest(digests, partition, element, key);
                  }
                }
              }
              assertThat(rep.count()).isEqualTo(n);
              if (large) {
                assertThat(direct.count()).as("seed %d", seed).isEqualTo(n);
                assertThat(direct.data()).as("seed %d", seed).isEqualTo(expected.data());
                db.write(wo, direct);
                direct.clear();
              } else {
                assertThat(direct.count()).isZero();
                try (WriteBatch built = rep.toWriteBatch()) {
                  assertThat(built.count()).as("seed %d", seed).isEqualTo(n);
                  assertThat(built.data()).as("seed %d", seed).isEqualTo(expected.data());
                  db.write(wo, built);
                }
              }
              rep.clear();
              assertThat(rep.count()).isZero();
            }
          }
        });
  }

  /**
   * A batch assembled past the kept array's size (its bound only a hint) is written whole; the next
   * starts empty, and a batch given a large bound goes row by row and starts from an empty native
   * batch even after one that failed before its write.
   */
  @Test
  void batchesPastTheKeptArrayAreWrittenWhole() throws RocksDBException {
    withDb(
        (db, handles, wo, direct) -> {
          ColumnFamilyHandle records = handles.get(1);
          WriteBatchRep rep = new WriteBatchRep(direct);
          byte[] value = new byte[64 << 10];
          int n = 2 * WriteBatchRep.KEPT_BYTES / value.length;
          rep.begin(100); // an underestimate: the array grows
          for (int i = 0; i < n; i++) {
            value[0] = (byte) i;
            rep.put(records, key(i), value);
          }
          try (WriteBatch built = rep.toWriteBatch()) {
            db.write(wo, built);
          }
          rep.clear();
          rep.begin(16);
          rep.put(records, key(n), new byte[] {7});
          try (WriteBatch built = rep.toWriteBatch()) {
            assertThat(built.count()).isEqualTo(1);
            db.write(wo, built);
          }
          for (int i = 0; i < n; i++) {
            byte[] got = db.get(records, key(i));
            assertThat(got).hasSize(value.length);
            assertThat(got[0]).isEqualTo((byte) i);
          }
          assertThat(db.get(records, key(n))).containsExactly(7);
          // Row by row: a batch abandoned before its write leaves nothing for the next one.
          rep.begin(WriteBatchRep.KEPT_BYTES + 1L);
          rep.put(records, key(n + 1), value);
          rep.begin(WriteBatchRep.KEPT_BYTES + 1L);
          rep.put(records, key(n + 2), value);
          assertThat(direct.count()).isEqualTo(1);
          db.write(wo, direct);
          assertThat(db.get(records, key(n + 1))).isNull();
          assertThat(db.get(records, key(n + 2))).hasSize(value.length);
        });
  }

  @Test
  void theDefaultFamilyIsRefused() throws RocksDBException {
    withDb(
        (db, handles, wo, direct) -> {
          assertThat(db.getDefaultColumnFamily().getID()).isZero();
          WriteBatchRep rep = new WriteBatchRep(direct);
          assertThatThrownBy(() -> rep.put(handles.get(0), key(1), key(2)))
              .isInstanceOf(IllegalArgumentException.class)
              .hasMessageContaining("default column family");
        });
  }

  interface WithDb {
    void run(RocksDB db, List<ColumnFamilyHandle> handles, WriteOptions wo, WriteBatch direct)
        throws RocksDBException;
  }

  /** Runs {@code body} on a fresh database with the families default, records and digests. */
  private void withDb(WithDb body) throws RocksDBException {
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions o =
            new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
        RocksDB db = open(o, handles);
        WriteOptions wo = new WriteOptions();
        WriteBatch direct = new WriteBatch()) {
      try {
        body.run(db, handles, wo, direct);
      } finally {
        handles.forEach(ColumnFamilyHandle::close);
      }
    }
  }

  private RocksDB open(DBOptions o, List<ColumnFamilyHandle> handles) throws RocksDBException {
    return RocksDB.open(
        o,
        dir.resolve("db").toString(),
        List.of(
            new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY),
            new ColumnFamilyDescriptor("records".getBytes(StandardCharsets.UTF_8)),
            new ColumnFamilyDescriptor("digests".getBytes(StandardCharsets.UTF_8))),
        handles);
  }

  private static byte[] key(int i) {
    return ("key-" + i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] randomBytes(Random rnd, int n) {
    byte[] b = new byte[n];
    rnd.nextBytes(b);
    return b;
  }
}
