package dev.reconcile.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The records behind a side's {@link PartitionSketches}: the port through which a session's repair
 * stream reads what the peer lacks and writes what it sends. Implemented by the agent's RocksDB
 * store and by {@link MemoryReplica}. Calls come from the thread that drives the session and may
 * block.
 */
public interface RecordStore {
  /**
   * The current records of {@code partition} whose element is one of {@code elements}. Elements no
   * longer present (overwritten meanwhile) are skipped; an element shared by several keys yields
   * all of them.
   */
  List<ReplicaRecord> recordsFor(int partition, long[] elements);

  /**
   * Applies repair records through the store's conflict rule (newer version wins), each record
   * atomically (what it beats, its index and its sketch change together): all of the batch or, on
   * failure, none of it, or, for a store that commits a large batch in slices of keys (the agent's
   * store does, so that its clients' writes need not wait for a whole batch), the slices before the
   * failure. Applying a record twice changes nothing, so a batch applied again after a failure
   * takes what is missing.
   *
   * @throws RuntimeException when a write failed; nothing of the batch was applied beyond the
   *     slices committed before it, which the message names
   */
  ApplyOutcome apply(List<ReplicaRecord> records);

  /**
   * {@link #apply} for checked rows ({@link RowBatches#read}, under this store's hash spec): the
   * same rule, atomic as {@link #apply} is. A store that keeps records as {@link RecordRow}s
   * overrides this to take the rows' key and value hashes as checked and to store each winning row
   * as it came; the default decodes them.
   *
   * @throws RuntimeException as {@link #apply} does
   */
  default ApplyOutcome applyRows(RowBatches.Rows rows) {
    return apply(rows.records());
  }

  /**
   * The peer's stream has ended and every batch of it is applied (or loaded and visible): a store
   * that applied some of them without a log makes them durable here, before the round ends. Runs on
   * the session's thread and may block; a failure ends the session as this side's. The default has
   * nothing to do.
   */
  default void repairReceived() {}

  /**
   * The records of {@code partition} whose element is one of {@code elements}, in batches: what the
   * repair stream sends of a partition's listed elements ({@link #recordsFor} over the whole list;
   * each call of {@link PartitionScan#next} returns the records of its next at most {@code
   * maxRecords} elements, or more records when elements are shared). A store that can range-scan a
   * partition may override this for a list that is a large part of the partition: one pass over the
   * partition's records, at one point in time, instead of a lookup per element.
   */
  default PartitionScan scanListed(int partition, long[] elements) {
    return new PartitionScan() {
      private int offset;

      /** Records looked up by {@link #nextRows} and not yet added: {@code pending[taken, size)}. */
      private List<ReplicaRecord> pending = List.of();

      private int taken;

      @Override
      public List<ReplicaRecord> next(int maxRecords, long maxBytes) {
        if (taken < pending.size()) {
          List<ReplicaRecord> rest = pending.subList(taken, pending.size());
          pending = List.of();
          taken = 0;
          return rest;
        }
        while (offset < elements.length) {
          int k = Math.min(maxRecords, elements.length - offset);
          List<ReplicaRecord> out =
              recordsFor(partition, Arrays.copyOfRange(elements, offset, offset + k));
          offset += k;
          if (!out.isEmpty()) {
            return out;
          }
        }
        return List.of();
      }

      /**
       * The records of the next at most {@code maxRecords} elements, looked up together, as rows;
       * those past {@code maxBytes} wait for the next call.
       */
      @Override
      public int nextRows(RowBatches.Builder out, int maxRecords, long maxBytes) {
        int start = out.bytes();
        int n = 0;
        while (n < maxRecords && out.bytes() - start < maxBytes) {
          if (taken == pending.size()) {
            pending = next(maxRecords - n, maxBytes);
            taken = 0;
            if (pending.isEmpty()) {
              break;
            }
          }
          out.add(pending.get(taken++));
          n++;
        }
        return n;
      }

      @Override
      public void close() {}
    };
  }

  /**
   * Every record of {@code partition}, at one point in time, in batches: what the repair stream
   * sends of a partition the peer holds nothing of. A store that can range-scan a partition
   * overrides this; the default walks {@code sketches}' sorted elements and looks their records up
   * ({@link #recordsFor}) a chunk at a time.
   */
  default PartitionScan scan(int partition, PartitionSketches sketches) {
    ElementCursor cursor = sketches.sortedElements(partition);
    return new PartitionScan() {
      private boolean done;

      @Override
      public List<ReplicaRecord> next(int maxRecords, long maxBytes) {
        List<ReplicaRecord> out = new ArrayList<>();
        long bytes = 0;
        long[] chunk = new long[Math.min(maxRecords, 256)];
        while (!done && out.size() < maxRecords && bytes < maxBytes) {
          int k = 0;
          int want = Math.min(chunk.length, maxRecords - out.size());
          while (k < want && cursor.next()) {
            chunk[k++] = cursor.element();
          }
          if (k < want) {
            done = true;
            cursor.close();
          }
          for (ReplicaRecord r : recordsFor(partition, Arrays.copyOf(chunk, k))) {
            out.add(r);
            bytes += r.key().length + r.value().length;
          }
        }
        return out;
      }

      @Override
      public void close() {
        if (!done) {
          done = true;
          cursor.close();
        }
      }
    };
  }

  /**
   * Receives a partition the peer streams whole because this side held none of it when the round
   * compared (a bulk partition): the batches of one partition, in the order the peer's {@link
   * #scan} read them, then {@link PartitionLoad#finish}. A store may write them in a way that is
   * faster than {@link #apply} for a range of new keys (the agent's store builds table files and
   * ingests them) and make them visible only at {@code finish}; the default applies each batch as
   * it comes.
   */
  default PartitionLoad load(int partition) {
    return new PartitionLoad() {
      @Override
      public ApplyOutcome add(List<ReplicaRecord> records) {
        return apply(records);
      }

      @Override
      public ApplyOutcome finish() {
        return ApplyOutcome.EMPTY;
      }

      @Override
      public void close() {}
    };
  }

  /**
   * One bulk partition being received ({@link #load}). Each record ends as {@link #apply} would
   * leave it (newer version wins, tombstones past the grace period are not stored), but a record
   * may become visible later than the call that took it: by {@link #finish} at the latest.
   */
  interface PartitionLoad extends AutoCloseable {
    /**
     * Takes the next batch of the partition's records.
     *
     * @return what became visible in this call (records taken earlier may be among them)
     * @throws RuntimeException when a write failed; what was not yet visible is dropped
     */
    ApplyOutcome add(List<ReplicaRecord> records);

    /**
     * Takes the next batch of the partition's records as checked rows ({@link RowBatches#read}), as
     * {@link #add} would take them. A store that keeps records as {@link RecordRow}s overrides this
     * to write the rows as they are; the default decodes them.
     */
    default ApplyOutcome addRows(RowBatches.Rows rows) {
      return add(rows.records());
    }

    /**
     * Makes everything taken visible (records and sketches).
     *
     * @return what became visible in this call
     * @throws RuntimeException when a write failed; what was not yet visible is dropped
     */
    ApplyOutcome finish();

    /** Releases files and native handles; records taken but not made visible are dropped. */
    @Override
    void close();
  }

  /** A partition's records in batches; may hold native resources: close it. */
  interface PartitionScan extends AutoCloseable {
    /**
     * The next records: at most {@code maxRecords}, and reading stops once their keys and values
     * reach {@code maxBytes} (so a batch may pass it by one record); empty at the end.
     */
    List<ReplicaRecord> next(int maxRecords, long maxBytes);

    /**
     * True when this scan reads its partition by one range scan (every record, or the rows of
     * listed elements filtered in place), without a lookup per element: its records may then go in
     * batches as large as a bulk partition's ({@link RepairConfig#bulkBatchRecords}).
     */
    default boolean ranged() {
      return false;
    }

    /**
     * True when {@link #nextRows} copies the store's rows as they are, without decoding or encoding
     * a record, though it looks them up: a repair stream then sends its records as rows (in batches
     * of {@link RepairConfig#batchRecords}, as looked-up records) where both sides offer them. A
     * {@link #ranged} scan goes as rows whatever this says.
     */
    default boolean storedRows() {
      return false;
    }

    /**
     * The next records appended to {@code out} as rows: at most {@code maxRecords}, and reading
     * stops once the rows' bytes in {@code out} ({@link RowBatches.Builder#bytes}: keys, rows and
     * their lengths) grew by {@code maxBytes} (so a batch may pass it by one row); returns how many
     * (0 at the end). A store that keeps records as {@link RecordRow}s overrides this to copy its
     * rows as they are; the default encodes what {@link #next} returns, a few records at a time.
     */
    default int nextRows(RowBatches.Builder out, int maxRecords, long maxBytes) {
      int start = out.bytes();
      int n = 0;
      while (n < maxRecords && out.bytes() - start < maxBytes) {
        // A few at a time: next's byte count leaves out each row's overhead.
        List<ReplicaRecord> records =
            next(Math.min(8, maxRecords - n), maxBytes - (out.bytes() - start));
        if (records.isEmpty()) {
          break;
        }
        for (ReplicaRecord r : records) {
          out.add(r);
        }
        n += records.size();
      }
      return n;
    }

    @Override
    void close();
  }
}
