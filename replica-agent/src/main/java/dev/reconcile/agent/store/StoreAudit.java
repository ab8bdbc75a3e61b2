package dev.reconcile.agent.store;

import dev.reconcile.agent.store.RecordCodec.Stored;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.PartitionSketch;
import dev.reconcile.core.ReplicaRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;

/**
 * The store's self-check: recomputes every partition's sketches from its records and compares them
 * with the maintained ones, checks the digest index against the records, and checks that the {@link
 * KeyFilter} holds every stored key. Writes continue meanwhile: each partition is compared at its
 * own snapshot, taken together with a copy of its sketches under the writer lock. Cost: one pass
 * over the index with a point read per record, plus one pass over records and index at a common
 * snapshot.
 */
final class StoreAudit {
  /** Findings kept in the report. */
  private static final int MAX_PROBLEMS = 100;

  private final StoreDb s;
  private final StoreSketches sketches;
  private final KeyFilter keys; // null when the store keeps none

  StoreAudit(StoreDb s, StoreSketches sketches, KeyFilter keys) {
    this.s = s;
    this.sketches = sketches;
    this.keys = keys;
  }

  SelfCheck run() {
    if (!sketches.maintained()) {
      throw new IllegalStateException("store opened with maintainSketches=false (benchmark mode)");
    }
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      long t0 = System.nanoTime();
      List<String> problems = new ArrayList<>();
      List<SelfCheck.PartitionCheck> parts = new ArrayList<>(s.params.partitions());
      for (int p = 0; p < s.params.partitions(); p++) {
        parts.add(checkPartition(p, problems));
      }
      long[] indexCounts = new long[3];
      checkIndexAgainstRecords(problems, indexCounts);
      boolean ok = problems.isEmpty() && parts.stream().allMatch(SelfCheck.PartitionCheck::ok);
      return new SelfCheck(
          ok,
          List.copyOf(parts),
          indexCounts[0],
          indexCounts[1],
          indexCounts[2],
          List.copyOf(problems),
          Duration.ofNanos(System.nanoTime() - t0));
    } catch (RocksDBException e) {
      throw new StoreException("self-check failed to read: " + e.getMessage(), e);
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  private SelfCheck.PartitionCheck checkPartition(int p, List<String> problems)
      throws RocksDBException {
    PartitionSketch maintained;
    Snapshot snap;
    // Not between an ingest's two files: records and index are read as one here.
    s.lockWriterBetweenIngests();
    try {
      snap = s.db.getSnapshot();
      maintained = sketches.copy(p);
    } finally {
      s.writer.unlock();
    }
    PartitionState fresh = new PartitionState(s.params, s.options.estimators());
    long n = 0;
    try (ReadOptions ro = new ReadOptions().setSnapshot(snap).setFillCache(false);
        Slice lower = new Slice(DigestKeys.partitionStart(p));
        Slice upper = p + 1 < (1 << 16) ? new Slice(DigestKeys.partitionStart(p + 1)) : null;
        ReadOptions scan = DigestKeys.scanOptions().setSnapshot(snap).setFillCache(false)) {
      scan.setIterateLowerBound(lower);
      if (upper != null) {
        scan.setIterateUpperBound(upper);
      }
      List<byte[]> rows = new ArrayList<>();
      try (RocksIterator it = s.db.newIterator(s.digests, scan)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          rows.add(it.key());
          if (rows.size() == 4096) {
            n += checkRows(p, rows, ro, fresh, problems);
            rows.clear();
          }
        }
        it.status();
      }
      n += checkRows(p, rows, ro, fresh, problems);
    } finally {
      s.db.releaseSnapshot(snap);
    }
    List<String> diffs = maintained.differencesFrom(fresh.unsharedSketch());
    String mismatch = diffs.isEmpty() ? null : String.join("; ", diffs);
    return new SelfCheck.PartitionCheck(p, mismatch == null, n, mismatch);
  }

  /**
   * Verifies index rows against their records and adds the records' own elements to {@code fresh}.
   */
  private long checkRows(
      int p, List<byte[]> rows, ReadOptions ro, PartitionState fresh, List<String> problems)
      throws RocksDBException {
    if (rows.isEmpty()) {
      return 0;
    }
    List<byte[]> keys = new ArrayList<>(rows.size());
    List<byte[]> recordRows = new ArrayList<>(rows.size());
    for (byte[] row : rows) {
      byte[] key = DigestKeys.key(row);
      keys.add(key);
      // Under the index row's partition: an index row whose key hashes elsewhere finds no record.
      recordRows.add(RecordKeys.of(p, key));
    }
    List<byte[]> values =
        s.db.multiGetAsList(ro, Collections.nCopies(recordRows.size(), s.records), recordRows);
    HashSpec spec = s.spec;
    long n = 0;
    for (int i = 0; i < rows.size(); i++) {
      byte[] key = keys.get(i);
      byte[] value = values.get(i);
      if (value == null) {
        problem(
            problems,
            "partition "
                + p
                + ": index row for key "
                + ReplicaRecord.hex(key, 32)
                + " has no record");
        continue;
      }
      Stored r;
      try {
        r = RecordCodec.decode(key, value);
      } catch (StoreException.Corrupt e) {
        problem(problems, e.getMessage());
        continue;
      }
      long kh = spec.keyHash(key);
      long vh = spec.valueHash(r.value);
      if (vh != r.valueHash) {
        problem(
            problems,
            "record for key " + ReplicaRecord.hex(key, 32) + " stores a wrong value hash");
      }
      long e = s.hooks.element(spec, kh, r.version, r.origin, r.tombstone, vh);
      int part = s.partitionOf(kh);
      if (part != p || e != DigestKeys.element(rows.get(i))) {
        problem(
            problems,
            "partition "
                + p
                + ": index row for key "
                + ReplicaRecord.hex(key, 32)
                + " does not match its record (partition "
                + part
                + ", element "
                + Long.toHexString(e)
                + ")");
        continue;
      }
      fresh.addUnsynchronized(e);
      n++;
    }
    return n;
  }

  /**
   * At one snapshot: every record decodes, its key is in the key filter, and the multiset of
   * (partition, element, key) derived from the records equals the index rows (count and two
   * independent 64-bit sums per partition). The snapshot is taken under the writer lock between
   * ingests: an ingest's records are then with their index rows, and every stored key's addition to
   * the filter (under the lock, before its write or at its ingest's end) is seen here.
   */
  private void checkIndexAgainstRecords(List<String> problems, long[] counts)
      throws RocksDBException {
    HashSpec spec = s.spec;
    int parts = s.params.partitions();
    long[] recCount = new long[parts];
    long[] recSum = new long[parts];
    long[] idxCount = new long[parts];
    long[] idxSum = new long[parts];
    Snapshot snap;
    s.lockWriterBetweenIngests();
    try {
      snap = s.db.getSnapshot();
    } finally {
      s.writer.unlock();
    }
    try (ReadOptions ro = DigestKeys.scanOptions().setSnapshot(snap).setFillCache(false)) {
      try (RocksIterator it = s.db.newIterator(s.records, ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          counts[0]++;
          Stored r;
          try {
            // Checks the row's partition prefix against the key's hash too.
            r = s.decodeRow(it.key(), it.value());
          } catch (StoreException.Corrupt e) {
            counts[2]++;
            problem(problems, e.getMessage());
            continue;
          }
          long kh = spec.keyHash(r.key);
          if (KeyFilter.denies(keys, kh)) {
            problem(
                problems,
                "the key filter denies stored key "
                    + ReplicaRecord.hex(r.key, 32)
                    + " (a repair would not see its record)");
          }
          int p = s.partitionOf(kh);
          long e = s.element(kh, r);
          recCount[p]++;
          recSum[p] += spec.fingerprintHash(e ^ spec.fingerprintHash(kh));
        }
        it.status();
      }
      try (RocksIterator it = s.db.newIterator(s.digests, ro)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          byte[] row = it.key();
          counts[1]++;
          int p = DigestKeys.partition(row);
          if (p >= parts) {
            problem(problems, "index row in partition " + p + " >= " + parts);
            continue;
          }
          long kh = spec.keyHash(row, DigestKeys.PREFIX, row.length - DigestKeys.PREFIX);
          idxCount[p]++;
          idxSum[p] += spec.fingerprintHash(DigestKeys.element(row) ^ spec.fingerprintHash(kh));
        }
        it.status();
      }
    } finally {
      s.db.releaseSnapshot(snap);
    }
    for (int p = 0; p < parts; p++) {
      if (recCount[p] != idxCount[p] || recSum[p] != idxSum[p]) {
        problem(
            problems,
            "partition "
                + p
                + ": digest index ("
                + idxCount[p]
                + " rows) does not match records ("
                + recCount[p]
                + ")");
      }
    }
  }

  private static void problem(List<String> problems, String what) {
    if (problems.size() < MAX_PROBLEMS) {
      problems.add(what);
    }
  }
}
