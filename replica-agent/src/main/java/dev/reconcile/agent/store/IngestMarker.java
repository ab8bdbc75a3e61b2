package dev.reconcile.agent.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The {@code meta} row that names a chunk being ingested ({@link PartitionIngest}), and the undo of
 * that chunk. RocksJava ingests into one column family per call, so between the records file and
 * the digests file the store holds records without index rows; the marker, written synced before
 * the first ingest and removed in the write batch after the second, names their range. A failed
 * ingest is undone at once ({@link #undo}); a crash leaves the marker, and the next writable open
 * ({@link #recover}) undoes it before the sketches are rebuilt.
 *
 * <p>Layout of the value: the first row's length (4 bytes, big-endian), the first row, the last
 * row, both {@link RecordKeys} rows of one partition.
 */
final class IngestMarker {
  /** The {@code meta} row naming a chunk being ingested. */
  static final byte[] ROW = StoreDb.ascii("ingest");

  /**
   * Folder of the table files a load writes, under the store's data folder; what a crash leaves in
   * it is removed at the next writable open ({@link #recover}).
   */
  static final String FOLDER = "ingest";

  private IngestMarker() {}

  /** The marker's value for the rows [first, last]. */
  static byte[] of(byte[] first, byte[] last) {
    byte[] out = new byte[4 + first.length + last.length];
    RecordCodec.putInt(out, 0, first.length);
    System.arraycopy(first, 0, out, 4, first.length);
    System.arraycopy(last, 0, out, 4 + first.length, last.length);
    return out;
  }

  /**
   * At a writable open, before the sketches are rebuilt: undoes the chunk a crash left half
   * ingested (the marker names it) and removes leftover table files. Returns the partition undone,
   * or -1.
   *
   * @throws StoreException when the marker is malformed or the undo fails
   */
  static int recover(StoreDb s) {
    try {
      if (!s.options.readOnly()) {
        deleteFolder(s.options.dataDir().resolve(FOLDER));
      }
      byte[] m = s.db.get(s.meta, ROW);
      if (m == null) {
        return -1;
      }
      if (s.options.readOnly()) {
        throw new StoreException(
            "store at "
                + s.options.dataDir()
                + " holds a partition ingest that a crash interrupted; open it writable once"
                + " to undo it");
      }
      int firstLength = m.length < 4 ? -1 : RecordCodec.getInt(m, 0);
      if (firstLength < RecordKeys.PREFIX || m.length < 4 + firstLength + RecordKeys.PREFIX) {
        throw new StoreException.Corrupt(
            "ingest marker of " + m.length + " bytes does not hold two record rows");
      }
      byte[] first = Arrays.copyOfRange(m, 4, 4 + firstLength);
      byte[] last = Arrays.copyOfRange(m, 4 + firstLength, m.length);
      int p = RecordKeys.partition(first);
      if (p != RecordKeys.partition(last) || Arrays.compareUnsigned(first, last) > 0) {
        throw new StoreException.Corrupt("ingest marker names no range of one partition");
      }
      undo(s, p, first, last);
      return p;
    } catch (RocksDBException e) {
      throw new StoreException(
          "cannot undo the interrupted partition ingest of the store at "
              + s.options.dataDir()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Deletes the records in [first, last] of {@code partition} and the digest rows of their keys,
   * then the marker, in one synced write batch. Used only when the range held no record before the
   * ingest began, so nothing else is deleted.
   */
  static void undo(StoreDb s, int partition, byte[] first, byte[] last) throws RocksDBException {
    try (WriteBatch b = new WriteBatch();
        WriteOptions synced = new WriteOptions().setSync(true)) {
      byte[] end = Arrays.copyOf(last, last.length + 1); // the row just after last
      b.deleteRange(s.records, first, end);
      try (ReadOptions ro = DigestKeys.scanOptions();
          RocksIterator it = s.db.newIterator(s.digests, ro)) {
        byte[] start = DigestKeys.partitionStart(partition);
        for (it.seek(start); it.isValid() && DigestKeys.startsWith(it.key(), start); it.next()) {
          byte[] row = RecordKeys.of(partition, DigestKeys.key(it.key()));
          if (Arrays.compareUnsigned(row, first) >= 0 && Arrays.compareUnsigned(row, last) <= 0) {
            b.delete(s.digests, it.key());
          }
        }
        it.status();
      }
      b.delete(s.meta, ROW);
      s.db.write(synced, b);
    }
  }

  private static void deleteFolder(Path dir) {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.deleteIfExists(f);
      }
    } catch (IOException e) {
      throw new StoreException("cannot remove leftover ingest files in " + dir, e);
    }
  }
}
