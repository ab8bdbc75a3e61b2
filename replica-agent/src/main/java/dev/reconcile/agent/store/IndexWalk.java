package dev.reconcile.agent.store;

import java.util.Arrays;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;

/**
 * Lookups of many elements of one partition in the digest index ({@link DigestKeys}), taken in
 * ascending unsigned element order by one iterator.
 *
 * <p>A seek costs a visit of every level of the LSM tree (the memtables, each L0 file, each level's
 * index): about 5 us a seek with the index's rows still in the memtable, where a step to the next
 * row costs a tenth of that. A repair stream that lists half of a partition's elements looked each
 * one up with its own seek, in the order the decode found them, and those seeks were 40 % of the
 * sending side's thread (benchmarks.md, section 3, "stop 36"). Two modes, chosen by the caller
 * ({@link #dense}):
 *
 * <ul>
 *   <li><b>dense</b> (the list holds at least {@code 1 / DENSE_LIST} of the partition's records): a
 *       total-order iterator bounded to the partition; the next element's row is usually a few rows
 *       ahead, so the walk steps to it with {@code next()} when it is at most {@link
 *       #STEPS_BEFORE_SEEK} rows away and seeks only past that;
 *   <li><b>sparse</b>: one seek an element with {@code prefix_same_as_start}, so that the prefix
 *       Bloom filters of the memtable and the table files skip whatever lacks the element
 *       (storage.md, "the digest index"); ascending order keeps the blocks it reads warm.
 * </ul>
 *
 * <p>Not thread-safe; the owner closes it (native handles) and holds the store's lifecycle read
 * lock meanwhile.
 */
final class IndexWalk implements AutoCloseable {
  /** Rows stepped over before a seek is cheaper. */
  static final int STEPS_BEFORE_SEEK = 16;

  /**
   * A list of at least {@code 1 / DENSE_LIST} of a partition's records is dense: its index rows are
   * read by stepping. (Whether a list's records are read by a filtered scan of the partition
   * instead, {@code ReplicaStore.listedByScan}, depends on their size too.)
   */
  static final int DENSE_LIST = 16;

  /** Whether a list of {@code listed} elements is dense in a partition of {@code records}. */
  static boolean dense(int listed, long records) {
    return (long) listed * DENSE_LIST >= records;
  }

  private final int partition;
  private final boolean dense;

  /** A dense walk's iterator bounded to the partition, or null. */
  private final PartitionRange range;

  /** A sparse walk's read options, or null. */
  private final ReadOptions options;

  private final RocksIterator iterator;
  private byte[] row = new byte[64];
  private int rowLength;
  private boolean positioned;
  private boolean valid;
  private long lastElement;
  private long seeks;

  /**
   * A walk of {@code partition}'s index rows at {@code snapshot} (null: the current state, or for a
   * dense walk a snapshot of its own), dense or sparse (see the class comment).
   */
  IndexWalk(StoreDb s, int partition, Snapshot snapshot, boolean dense) {
    this.partition = partition;
    this.dense = dense;
    if (dense) {
      range = new PartitionRange(s, s.digests, partition, true, snapshot);
      options = null;
      iterator = range.iterator;
    } else {
      range = null;
      options = new ReadOptions().setPrefixSameAsStart(true);
      if (snapshot != null) {
        options.setSnapshot(snapshot);
      }
      iterator = s.db.newIterator(s.digests, options);
    }
  }

  /**
   * Moves to the first row whose element is at least {@code element} (unsigned); true if that row's
   * element is {@code element}. Elements come in ascending unsigned order (equal ones allowed: an
   * element already passed reads as absent).
   */
  boolean moveTo(long element) {
    if (positioned && element == lastElement) {
      return at(element); // a repeat: where its rows were taken, or still are
    }
    lastElement = element;
    if (!dense || !positioned) {
      seek(element);
    } else {
      int steps = 0;
      while (valid && Long.compareUnsigned(currentElement(), element) < 0) {
        if (steps++ == STEPS_BEFORE_SEEK) {
          seek(element);
          break;
        }
        iterator.next();
        read();
      }
    }
    return valid && currentElement() == element;
  }

  /** True while the walk is at a row of {@code element}. */
  boolean at(long element) {
    return valid && currentElement() == element;
  }

  /** The record key of the current row; the walk moves to the next row. */
  byte[] takeKey() {
    byte[] key = Arrays.copyOfRange(row, DigestKeys.PREFIX, rowLength);
    iterator.next();
    read();
    return key;
  }

  /** Seeks so far (for tests: a dense walk must mostly step). */
  long seeks() {
    return seeks;
  }

  /** Throws what the iterator met, if anything (an invalid iterator is also its end). */
  void status() throws RocksDBException {
    iterator.status();
  }

  private void seek(long element) {
    iterator.seek(DigestKeys.prefix(partition, element));
    positioned = true;
    seeks++;
    read();
  }

  private void read() {
    valid = iterator.isValid();
    if (valid) {
      rowLength = iterator.key(row);
      if (rowLength > row.length) {
        row = new byte[rowLength];
        iterator.key(row);
      }
      if (rowLength < DigestKeys.PREFIX) {
        throw new StoreException(
            "digest index row of " + rowLength + " bytes in partition " + partition);
      }
    }
  }

  private long currentElement() {
    return RecordCodec.getLong(row, 2);
  }

  @Override
  public void close() {
    if (range != null) {
      range.release();
    } else {
      iterator.close();
      options.close();
    }
  }
}
