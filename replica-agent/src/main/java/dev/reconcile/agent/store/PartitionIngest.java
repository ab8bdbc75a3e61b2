package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.StoreDb.longBytes;

import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.ProtocolException;
import dev.reconcile.core.RecordRow;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RowBatches;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.EnvOptions;
import org.rocksdb.IngestExternalFileOptions;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.SstFileReader;
import org.rocksdb.SstFileReaderIterator;
import org.rocksdb.SstFileWriter;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * A bulk partition received as table files ingested into RocksDB ({@link RecordStore#load}), past
 * the write-ahead log and the memtable: the receiver's side of a catch-up.
 *
 * <h2>Why it is correct</h2>
 *
 * The peer streams the partition in row order (its range scan of {@code records_by_partition},
 * {@link RecordKeys}). The records are cut into chunks of consecutive rows. If a chunk's row range
 * [first, last] holds no record here, every key of the chunk is absent, and {@link
 * ReplicaStore#apply} would store each record as it came (an absent key takes any version; a
 * tombstone past the grace period is not stored) and add one digest row per record; no digest row
 * of these keys exists yet (the index never disagrees with the records). So the chunk can be
 * written directly as two table files, one per column family, with the rows {@code apply} would
 * have written:
 *
 * <ol>
 *   <li>the records come as checked rows in the stored layout ({@link RowBatches.Rows}; records
 *       sent as objects are encoded into such rows first); they are held back until they reach
 *       {@link #MIN_INGEST_BYTES} or {@link #MIN_INGEST_RECORDS} (a chunk that ends smaller is
 *       applied through {@code apply} instead); from then on each row is appended to an {@link
 *       SstFileWriter} for the records family as it arrives, as it came; its element and key stay
 *       in memory (about 8 B + the key per record, at most {@link #CHUNK_RECORDS} records per
 *       chunk);
 *   <li>at the end of the chunk its digest rows are sorted into a second file;
 *   <li>under the writer lock, one iterator seek checks that [first, last] holds no record and
 *       reserves the range ({@link StoreDb#beginIngest}); then, without the lock, a synced marker
 *       ({@code meta} row {@code ingest}: first and last row) is written and the records file, then
 *       the digests file are ingested; under the lock again one write batch removes the marker and
 *       raises the clock high-water mark, and the sketches take the elements. Meanwhile a writer of
 *       a row in the range waits for the range to be released (it is empty, so only a key this
 *       store lacks), and every other writer goes on: the fsyncs of the marker and of the ingested
 *       files no longer hold up a client's put into another range (benchmarks.md section 3, "stop
 *       45"). A self-check waits for any ingest to end, since it reads records and index as one.
 * </ol>
 *
 * A chunk whose range holds a record (a local write, or another round's load meanwhile) is read
 * back from its file and applied through {@code apply}, batch by batch, as if it had come that way.
 * A row out of order (not strictly after the one before) ends the chunk there; the rest of the load
 * goes through {@code apply}.
 *
 * <h2>Failure</h2>
 *
 * RocksJava (10.10) ingests into one column family per call; the C++ API's atomic multi-family
 * {@code IngestExternalFiles} is not exposed. Between the two calls the store holds records without
 * index rows, hence the marker. A failed ingest is undone at once ({@link IngestMarker#undo}: the
 * records in [first, last] deleted, the digest rows of those keys deleted, the marker removed); a
 * crash leaves the marker, and the next writable open ({@link IngestMarker#recover}) does the same
 * undo before the sketches are rebuilt. Either way the chunk's records are absent, as before the
 * load, and the next round streams them again. An undo that fails itself leaves the marker and
 * makes the store refuse writes until it is reopened ({@link StoreDb#markUnwritable}).
 *
 * <p>Visibility: records are visible, and in the sketches, once their chunk is ingested, at the
 * latest at {@link #finish}; {@link #close} without {@code finish} drops the chunk being written.
 * The repair stream acknowledges a batch when it is taken, not when it is visible
 * (docs/decisions.md, "catch-up into an empty partition").
 *
 * <p>Not thread-safe: one round's worker drives a load.
 */
final class PartitionIngest implements RecordStore.PartitionLoad {
  /** Most records per chunk: bounds the elements and keys held in memory. */
  static final int CHUNK_RECORDS = 1 << 20;

  /**
   * Fewest bytes of keys and values for which a chunk is written as table files, unless it reaches
   * {@link #MIN_INGEST_RECORDS} first; a smaller one (the tail of a partition, or a small
   * partition) goes through {@code apply} at its end. Each ingested chunk costs two files, each
   * synced, a synced marker and two ingests: many small partitions should not each pay that.
   */
  static final long MIN_INGEST_BYTES = 1L << 20;

  /**
   * Fewest records for which a chunk is written as table files whatever its bytes. {@code apply}
   * costs per record (a read of the current record, two memtable rows, the log) what the files cost
   * once per chunk: cold catch-ups of 6 250 records of 100 B a partition (0.8 MB) ran 1.12-1.21 x
   * faster with this count than with 1 MiB alone; ingesting partitions of 3 125 such records was
   * not shown to pay (0.98-1.09 x) (docs/storage.md, "Partition ingest").
   */
  static final int MIN_INGEST_RECORDS = 4096;

  private static final AtomicLong FILES = new AtomicLong();

  /**
   * Block compression of the table files a load writes: LZ4, as the levels below level 0 ({@link
   * StoreDb#COMPRESSION_PER_LEVEL}). A load writes its files on the critical path of a catch-up,
   * and Snappy, RocksDB's default, made a file of 100-byte records twice as dear to write as LZ4
   * (JMH {@code TableFileBenchmark}: 202 against 102 ms for 200 000 records; docs/decisions.md,
   * "block compression of loads").
   */
  static final CompressionType COMPRESSION =
      StoreDb.COMPRESSION_PER_LEVEL.get(StoreDb.COMPRESSION_PER_LEVEL.size() - 1);

  private final StoreDb s;
  private final RecordWriter writer;
  private final HybridClock clock;
  private final int partition;
  private final int chunkRecords;
  private final long minIngestBytes;
  private final int minIngestRecords;
  private long graceCutoffMillis;

  private final BloomFilter bloom;
  private final Options recordFileOptions;
  private final Options digestFileOptions;
  private final EnvOptions envOptions;

  // The chunk being written: held back in memory until it reaches minIngestBytes, then a file.
  /** A held-back row: row {@code index} of checked rows (not decoded), its key copied once. */
  private record Held(RowBatches.Rows rows, int index, byte[] key) {}

  private final List<Held> pending = new ArrayList<>();
  private long pendingBytes;
  private SstFileWriter file;
  private Path recordsFile;
  private byte[] firstRow;
  private byte[] lastKey; // of the last row taken or held back: rows are partition, then key
  private long[] elements = new long[1024];
  private long[] keyHashes = new long[1024];
  private byte[][] keys = new byte[1024][];
  private int n;
  private int expired;
  private long maxVersion;

  /** After a row out of order: the rest goes through {@code apply}. */
  private boolean applying;

  private boolean closed;

  // Reused for each row and value handed to a table file (grown as needed, never shrunk).
  private ByteBuffer rowBuffer = ByteBuffer.allocateDirect(64);
  private ByteBuffer valueBuffer = ByteBuffer.allocateDirect(4096);

  PartitionIngest(
      StoreDb s,
      RecordWriter writer,
      HybridClock clock,
      int partition,
      int chunkRecords,
      long minIngestBytes,
      int minIngestRecords) {
    if (chunkRecords < 1 || minIngestBytes < 0 || minIngestRecords < 0) {
      throw new IllegalArgumentException(
          "chunk of "
              + chunkRecords
              + " records, ingest from "
              + minIngestBytes
              + " bytes or "
              + minIngestRecords
              + " records");
    }
    this.chunkRecords = chunkRecords;
    this.minIngestBytes = minIngestBytes;
    this.minIngestRecords = minIngestRecords;
    this.s = s;
    this.writer = writer;
    this.clock = clock;
    this.partition = partition;
    this.bloom = new BloomFilter(10);
    this.recordFileOptions =
        new Options()
            .setCompressionType(COMPRESSION)
            .setTableFormatConfig(StoreDb.recordTable(bloom));
    this.digestFileOptions =
        new Options()
            .setCompressionType(COMPRESSION)
            .useFixedLengthPrefixExtractor(DigestKeys.PREFIX)
            .setTableFormatConfig(StoreDb.digestTable(bloom));
    this.envOptions = new EnvOptions();
  }

  /**
   * Records as a peer without row batches sends them: encoded as the rows of one batch ({@link
   * RowBatches.Builder}, checked by {@link RowBatches#read} as a received batch would be) and taken
   * by {@link #addRows}, so that both forms go one way into the table file.
   */
  @Override
  public ApplyOutcome add(List<ReplicaRecord> records) {
    checkNotClosed();
    if (applying || records.isEmpty()) {
      s.checkWritable();
      return writer.apply(records);
    }
    long bytes = 0;
    for (ReplicaRecord r : records) {
      bytes += 10 + r.key().length + RecordRow.length(r.value().length);
    }
    RowBatches.Builder b = new RowBatches.Builder(s.spec, (int) Math.min(bytes, 1 << 30));
    for (ReplicaRecord r : records) {
      b.add(r);
    }
    RowBatches.Rows rows;
    try {
      rows =
          RowBatches.read(b.build(partition, 0), records.size(), s.spec, s.params.partitionsLog2());
    } catch (ProtocolException e) {
      for (ReplicaRecord r : records) {
        long keyHash = s.spec.keyHash(r.key());
        if (s.partitionOf(keyHash) != partition) {
          throw notThisPartition(r.key(), keyHash);
        }
      }
      throw new IllegalArgumentException("records not storable as rows: " + e.getMessage(), e);
    }
    return addRows(rows);
  }

  /**
   * {@link #add} for checked rows ({@code RowBatches.read}, under this store's hash spec: the
   * session's): each row goes into the table file as it came; only the rows held back (up to {@link
   * #MIN_INGEST_BYTES} or {@link #MIN_INGEST_RECORDS}) and what follows a row out of order are
   * decoded into records.
   */
  @Override
  public ApplyOutcome addRows(RowBatches.Rows rows) {
    s.lifecycle.readLock().lock();
    try {
      s.checkWritable();
      checkNotClosed();
      if (applying) {
        return writer.apply(rows.records());
      }
      graceCutoffMillis = writer.graceCutoffMillis(clock.wallMillis());
      ApplyOutcome visible = ApplyOutcome.EMPTY;
      for (int i = 0; i < rows.size(); i++) {
        if (n == chunkRecords) {
          visible = visible.plus(endChunk());
        }
        // Held back, or into the table file: two methods, so that each keeps one profile. With
        // one method for both, C2 compiled it while a partition's first rows were being held,
        // the first row into the file trapped out of that code, and it compiled again
        // (docs/benchmarks.md, section 3a, "one profile per row path").
        boolean taken = file == null ? holdRow(rows, i) : addRow(rows, i);
        if (!taken) {
          // Out of order: what came so far is one chunk, the rest is applied.
          visible = visible.plus(endChunk());
          applying = true;
          List<ReplicaRecord> rest = new ArrayList<>(rows.size() - i);
          for (int j = i; j < rows.size(); j++) {
            rest.add(rows.record(j));
          }
          return visible.plus(writer.apply(rest));
        }
      }
      return visible;
    } catch (RocksDBException e) {
      throw new StoreException(
          "writing the table file of partition " + partition + " failed: " + e.getMessage(), e);
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /**
   * Row {@code i} of {@link #addRows} while no table file is open: held back (the row as it is, its
   * batch's bytes kept, decoded only if applied); once the rows held reach {@link
   * #MIN_INGEST_BYTES} or {@link #MIN_INGEST_RECORDS} they start the file. False (nothing done)
   * when the row is not after the one before. One call per row, so that a just-started process
   * compiles it early (see {@code RowBatches.Reader}).
   */
  private boolean holdRow(RowBatches.Rows rows, int i) throws RocksDBException {
    if (!follows(rows, i)) {
      return false;
    }
    lastKey = rows.key(i);
    pending.add(new Held(rows, i, lastKey));
    pendingBytes += rows.keyLength(i) + rows.rowLength(i) - RecordRow.OVERHEAD;
    if (pendingBytes >= minIngestBytes || pending.size() >= minIngestRecords) {
      spillPending();
    }
    return true;
  }

  /** Row {@code i} of {@link #addRows} into the open table file; false as {@link #holdRow}. */
  private boolean addRow(RowBatches.Rows rows, int i) throws RocksDBException {
    if (!follows(rows, i)) {
      return false;
    }
    takeRow(rows, i, rows.key(i));
    return true;
  }

  /**
   * Whether row {@code i} comes after the last row taken or held; an {@link
   * IllegalArgumentException} when it is not of this partition.
   */
  private boolean follows(RowBatches.Rows rows, int i) {
    if (s.partitionOf(rows.keyHash(i)) != partition) {
      throw notThisPartition(rows.key(i), rows.keyHash(i));
    }
    int ko = rows.keyOffset(i);
    return lastKey == null
        || Arrays.compareUnsigned(
                rows.array(), ko, ko + rows.keyLength(i), lastKey, 0, lastKey.length)
            > 0;
  }

  private IllegalArgumentException notThisPartition(byte[] key, long keyHash) {
    return new IllegalArgumentException(
        "record for key "
            + ReplicaRecord.hex(key, 32)
            + " is of partition "
            + s.partitionOf(keyHash)
            + ", not of the partition being loaded, "
            + partition);
  }

  /** The held-back records are enough for a table file: they start it. */
  private void spillPending() throws RocksDBException {
    for (Held h : pending) {
      takeRow(h.rows(), h.index(), h.key());
    }
    pending.clear();
    pendingBytes = 0;
  }

  /** A load too small for a table file: the held-back records through {@code apply}. */
  private ApplyOutcome applyPending() {
    List<ReplicaRecord> records = new ArrayList<>(pending.size());
    for (Held h : pending) {
      records.add(h.rows().record(h.index()));
    }
    ApplyOutcome out = writer.applyAll(records, false);
    pending.clear();
    pendingBytes = 0;
    return out;
  }

  /**
   * Row {@code i} of checked rows into the table file: written as it came (it is the stored layout,
   * its CRC and value hash checked by {@code RowBatches.read}), not re-encoded.
   */
  private void takeRow(RowBatches.Rows rows, int i, byte[] key) throws RocksDBException {
    byte[] a = rows.array();
    int ro = rows.rowOffset(i);
    int rl = rows.rowLength(i);
    long version = RecordRow.version(a, ro);
    boolean tombstone = RecordRow.tombstone(a, ro);
    if (expired(key, version, tombstone)) {
      return;
    }
    valueBuffer = fit(valueBuffer, rl);
    valueBuffer.put(a, ro, rl).flip();
    append(
        key,
        rows.keyHash(i),
        version,
        RecordRow.origin(a, ro),
        tombstone,
        RecordRow.valueHash(a, ro));
  }

  /** Notes a record's version and key; true for a tombstone past the grace period (not stored). */
  private boolean expired(byte[] key, long version, boolean tombstone) {
    if (Long.compareUnsigned(version, maxVersion) > 0) {
      maxVersion = version;
    }
    lastKey = key;
    if (tombstone && HybridClock.physicalMillis(version) < graceCutoffMillis) {
      expired++; // as apply does for an absent key: nothing to store
      return true;
    }
    return false;
  }

  /** Appends the row in {@code valueBuffer} to the table file and notes its element. */
  private void append(
      byte[] key, long keyHash, long version, long origin, boolean tombstone, long valueHash)
      throws RocksDBException {
    if (file == null) {
      recordsFile = newFile("records");
      file = new SstFileWriter(envOptions, recordFileOptions);
      file.open(recordsFile.toString());
      firstRow = RecordKeys.of(partition, key);
    }
    // Through direct buffers: the writer copies from their memory, no array per row or value.
    rowBuffer = fit(rowBuffer, RecordKeys.PREFIX + key.length);
    RecordKeys.put(rowBuffer, partition, key);
    file.put(rowBuffer, valueBuffer);
    if (n == elements.length) {
      elements = Arrays.copyOf(elements, n * 2);
      keyHashes = Arrays.copyOf(keyHashes, n * 2);
      keys = Arrays.copyOf(keys, n * 2);
    }
    elements[n] = s.hooks.element(s.spec, keyHash, version, origin, tombstone, valueHash);
    keyHashes[n] = keyHash;
    keys[n] = key;
    n++;
  }

  @Override
  public ApplyOutcome finish() {
    s.lifecycle.readLock().lock();
    try {
      s.checkWritable();
      checkNotClosed();
      return endChunk();
    } catch (RocksDBException e) {
      throw new StoreException(
          "writing the table files of partition " + partition + " failed: " + e.getMessage(), e);
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /** Ingests (or applies) the chunk written so far and starts an empty one. */
  private ApplyOutcome endChunk() throws RocksDBException {
    ApplyOutcome out = new ApplyOutcome(0, 0, expired);
    long observed = maxVersion;
    expired = 0;
    maxVersion = 0;
    if (file == null) {
      clock.observe(observed);
      lastKey = null;
      return out.plus(applyPending());
    }
    Path digestsFile = null;
    try {
      file.finish();
      file.close();
      file = null;
      digestsFile = writeDigests();
      int stored = n;
      if (ingest(digestsFile, observed)) {
        out = out.plus(new ApplyOutcome(stored, 0, 0));
      } else {
        out = out.plus(applyFromFile());
      }
      return out;
    } finally {
      discardChunk();
      delete(digestsFile);
    }
  }

  /** Writes the chunk's digest rows, sorted, into a table file for the digests family. */
  private Path writeDigests() throws RocksDBException {
    int[] order = DigestKeys.order(elements, keys, n);
    Path path = newFile("digests");
    ByteBuffer empty = ByteBuffer.allocateDirect(0);
    try (SstFileWriter w = new SstFileWriter(envOptions, digestFileOptions)) {
      w.open(path.toString());
      for (int i : order) {
        putDigest(w, i, empty);
      }
      w.finish();
    }
    return path;
  }

  /** The digest row of record {@code i} of the chunk into {@code w} (one call per row). */
  private void putDigest(SstFileWriter w, int i, ByteBuffer empty) throws RocksDBException {
    rowBuffer = fit(rowBuffer, DigestKeys.PREFIX + keys[i].length);
    w.put(DigestKeys.put(rowBuffer, partition, elements[i], keys[i]), empty);
  }

  /**
   * Ingests both files if the chunk's range holds no record; false when it does (nothing written).
   * The check and the range's reservation are one step under the writer lock, and so is the end
   * (marker removed, clock, sketches); the synced marker and the two ingests in between run without
   * it, the range reserved: a writer of a row in the range waits for the end, any other goes on
   * ({@link StoreDb#lockWriterOutsideIngest}).
   */
  private boolean ingest(Path digestsFile, long observed) throws RocksDBException {
    byte[] lastRow = RecordKeys.of(partition, lastKey);
    s.ingest.lock();
    try {
      s.writer.lock();
      try {
        if (holdsRecord(firstRow, lastRow)) {
          return false;
        }
        s.beginIngest(firstRow, lastRow);
        // Before the files make the keys visible: a read of one key asks the filter first. A
        // failed ingest leaves the keys as the filter's false positives.
        writer.willIngest(keyHashes, n);
      } finally {
        s.writer.unlock();
      }
      try (WriteOptions synced = new WriteOptions().setSync(true);
          IngestExternalFileOptions io =
              new IngestExternalFileOptions().setMoveFiles(true).setAllowGlobalSeqNo(true)) {
        s.db.put(s.meta, synced, IngestMarker.ROW, IngestMarker.of(firstRow, lastRow));
        try {
          s.hooks.ingestStep(1);
          s.db.ingestExternalFile(s.records, List.of(recordsFile.toString()), io);
          s.hooks.ingestStep(2);
          s.db.ingestExternalFile(s.digests, List.of(digestsFile.toString()), io);
          s.hooks.ingestStep(3);
        } catch (RocksDBException | RuntimeException e) {
          undoAfterFailure(e);
          throw e;
        }
        s.writer.lock();
        try {
          try (WriteBatch done = new WriteBatch()) {
            clock.observe(observed);
            done.delete(s.meta, IngestMarker.ROW);
            done.put(s.meta, StoreMeta.CLOCK, longBytes(clock.last()));
            s.db.write(s.writeOptions, done);
          } catch (RocksDBException | RuntimeException e) {
            undoAfterFailure(e);
            throw e;
          }
          writer.ingested(partition, elements, n);
        } finally {
          s.writer.unlock();
        }
      } finally {
        s.endIngest();
      }
      return true;
    } finally {
      s.ingest.unlock();
    }
  }

  private void undoAfterFailure(Exception cause) {
    try {
      IngestMarker.undo(s, partition, firstRow, RecordKeys.of(partition, lastKey));
    } catch (RocksDBException | RuntimeException e) {
      cause.addSuppressed(e);
      s.markUnwritable(
          "a failed ingest of partition "
              + partition
              + " could not be undone ("
              + e.getMessage()
              + "); the next open undoes it");
    }
  }

  /** True when the records family holds a row in [first, last]. */
  private boolean holdsRecord(byte[] first, byte[] last) throws RocksDBException {
    try (RocksIterator it = s.db.newIterator(s.records)) {
      it.seek(first);
      if (it.isValid()) {
        return Arrays.compareUnsigned(it.key(), last) <= 0;
      }
      it.status();
      return false;
    }
  }

  /** A chunk that could not be ingested: its records through {@code apply}, batch by batch. */
  private ApplyOutcome applyFromFile() throws RocksDBException {
    ApplyOutcome out = ApplyOutcome.EMPTY;
    List<ReplicaRecord> batch = new ArrayList<>();
    try (SstFileReader reader = new SstFileReader(recordFileOptions);
        ReadOptions ro = new ReadOptions().setFillCache(false)) {
      reader.open(recordsFile.toString());
      try (SstFileReaderIterator it = reader.newIterator(ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          batch.add(s.decodeRow(it.key(), it.value()).toRecord());
          if (batch.size() == ReplicaStore.BULK_BATCH) {
            out = out.plus(writer.apply(batch));
            batch.clear();
          }
        }
        it.status();
      }
    }
    if (!batch.isEmpty()) {
      out = out.plus(writer.apply(batch));
    }
    return out;
  }

  /** {@code b} cleared, or a larger direct buffer when it holds fewer than {@code bytes}. */
  private static ByteBuffer fit(ByteBuffer b, int bytes) {
    if (b.capacity() >= bytes) {
      return b.clear();
    }
    return ByteBuffer.allocateDirect(Math.max(bytes, 2 * b.capacity()));
  }

  private void discardChunk() {
    if (file != null) {
      file.close();
      file = null;
    }
    delete(recordsFile);
    recordsFile = null;
    pending.clear();
    pendingBytes = 0;
    firstRow = null;
    lastKey = null;
    for (int i = 0; i < n; i++) {
      keys[i] = null; // a loop: Arrays.fill on a byte[][] deoptimizes a cold agent's C2 code
    }
    n = 0;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    discardChunk();
    envOptions.close();
    digestFileOptions.close();
    recordFileOptions.close();
    bloom.close();
  }

  private void checkNotClosed() {
    if (closed) {
      throw new IllegalStateException("load of partition " + partition + " is closed");
    }
  }

  private Path newFile(String what) {
    Path dir = s.options.dataDir().resolve(IngestMarker.FOLDER);
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new StoreException("cannot create " + dir + ": " + e.getMessage(), e);
    }
    return dir.resolve(
        "p"
            + partition
            + "-"
            + FILES.incrementAndGet()
            + "-"
            + ProcessHandle.current().pid()
            + "-"
            + what
            + ".sst");
  }

  private static void delete(Path file) {
    if (file != null) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        // a leftover file is removed at the next open (recover)
      }
    }
  }
}
