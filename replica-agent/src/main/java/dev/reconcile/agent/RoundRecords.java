package dev.reconcile.agent;

import dev.reconcile.agent.store.ReplicaStore;
import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.RowBatches;
import java.util.ArrayList;
import java.util.List;

/**
 * The store as one round's session sees it. Reads and writes go to the {@link ReplicaStore}; the
 * keys of the tombstones past the grace period that the round offers the peer are noted, so that
 * they can be dropped once the round has finished ({@link #dropOfferedExpired}).
 *
 * <p>Why: such a tombstone differs from a peer that purged it already, and the peer does not store
 * it again ({@link ReplicaStore#apply}); unless this side drops it too, every round would find the
 * same difference. It is still offered, not hidden: a peer that holds an older live version (a
 * replica back from an absence) deletes that version on receiving it. It is dropped only after the
 * round, not when it is read: the peer's older version may arrive later in the same round, and
 * without the tombstone this side would take it as new and resurrect the key.
 *
 * <p>Thread-safe; the session reads on its worker, {@link #dropOfferedExpired} runs on another.
 * Public for other drivers of a round over a {@code ReplicaStore} (the CLI's repair of stopped
 * stores).
 */
public final class RoundRecords implements RecordStore {
  /** At most this many keys are noted per round; the rest wait for a later round or the purge. */
  static final int MAX_NOTED = 100_000;

  private final ReplicaStore store;
  private final List<byte[]> offeredExpired = new ArrayList<>();

  public RoundRecords(ReplicaStore store) {
    this.store = store;
  }

  @Override
  public synchronized List<ReplicaRecord> recordsFor(int partition, long[] elements) {
    List<ReplicaRecord> out = store.recordsFor(partition, elements);
    note(out);
    return out;
  }

  @Override
  public ApplyOutcome apply(List<ReplicaRecord> records) {
    return store.apply(records);
  }

  @Override
  public ApplyOutcome applyRows(RowBatches.Rows rows) {
    return store.applyRows(rows);
  }

  @Override
  public void repairReceived() {
    store.persistRepairs();
  }

  @Override
  public PartitionLoad load(int partition) {
    return store.load(partition);
  }

  /** The store's range scan, noting the past-grace tombstones it offers as {@link #recordsFor}. */
  @Override
  public PartitionScan scan(int partition, PartitionSketches sketches) {
    return noting(store.scan(partition, sketches));
  }

  /** The store's read of listed elements, noting the past-grace tombstones it offers. */
  @Override
  public PartitionScan scanListed(int partition, long[] elements) {
    return noting(store.scanListed(partition, elements));
  }

  private PartitionScan noting(PartitionScan inner) {
    return new PartitionScan() {
      @Override
      public List<ReplicaRecord> next(int maxRecords, long maxBytes) {
        List<ReplicaRecord> out = inner.next(maxRecords, maxBytes);
        note(out);
        return out;
      }

      @Override
      public boolean ranged() {
        return inner.ranged();
      }

      @Override
      public boolean storedRows() {
        return inner.storedRows();
      }

      @Override
      public int nextRows(RowBatches.Builder out, int maxRecords, long maxBytes) {
        int before = out.tombstones();
        int n = inner.nextRows(out, maxRecords, maxBytes);
        noteTombstones(out, before);
        return n;
      }

      @Override
      public void close() {
        inner.close();
      }
    };
  }

  private synchronized void note(List<ReplicaRecord> offered) {
    for (ReplicaRecord r : offered) {
      if (offeredExpired.size() < MAX_NOTED && store.pastGrace(r)) {
        offeredExpired.add(r.key());
      }
    }
  }

  /** As {@link #note}, for the tombstones added to {@code rows} from its {@code from}-th on. */
  private synchronized void noteTombstones(RowBatches.Builder rows, int from) {
    for (int i = from; i < rows.tombstones(); i++) {
      if (offeredExpired.size() < MAX_NOTED && store.pastGrace(true, rows.tombstoneVersion(i))) {
        offeredExpired.add(rows.tombstoneKey(i));
      }
    }
  }

  /** True when the round offered tombstones past the grace period (a purge is owed). */
  public synchronized boolean offeredAnyExpired() {
    return !offeredExpired.isEmpty();
  }

  /** Blocking: purges the past-grace tombstones offered in the round; returns how many. */
  public synchronized int dropOfferedExpired() {
    if (offeredExpired.isEmpty()) {
      return 0;
    }
    int n = store.dropExpiredTombstones(List.copyOf(offeredExpired));
    offeredExpired.clear();
    return n;
  }
}
