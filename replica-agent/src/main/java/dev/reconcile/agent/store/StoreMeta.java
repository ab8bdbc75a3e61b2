package dev.reconcile.agent.store;

import static dev.reconcile.agent.store.StoreDb.ascii;
import static dev.reconcile.agent.store.StoreDb.intBytes;

import dev.reconcile.core.HashSpec;
import dev.reconcile.core.RoundProgress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;

/**
 * The {@code meta} column family: store format and the pinned sketch parameters (hash id, seed
 * fingerprint, partitions), the node id, the clock high-water mark, and per-peer round progress.
 *
 * <pre>
 *   format             4 bytes, {@link ReplicaStore#STORE_FORMAT}
 *   hash_id            4 bytes      seed_fingerprint   4 bytes      partitions_log2   4 bytes
 *   node_id            UTF-8        clock_hwm          8 bytes (written with every record batch)
 *   progress/ | peer length (2) | peer (UTF-8) | round id (8)  ->  0x01 | BitSet of partitions done
 * </pre>
 */
final class StoreMeta {
  private static final byte[] FORMAT = ascii("format");
  private static final byte[] HASH_ID = ascii("hash_id");
  private static final byte[] SEED_FP = ascii("seed_fingerprint");
  private static final byte[] PARTITIONS = ascii("partitions_log2");
  private static final byte[] NODE_ID = ascii("node_id");
  private static final byte[] PROGRESS = ascii("progress/");
  private static final byte PROGRESS_FORMAT = 1;

  /** Row of the clock high-water mark, written in every record write batch. */
  static final byte[] CLOCK = ascii("clock_hwm");

  private final StoreDb s;

  StoreMeta(StoreDb s) {
    this.s = s;
  }

  /**
   * Writes the meta rows of a new store, or checks an existing store's against the options (format,
   * hash id, seed fingerprint, partitions, node id) and moves {@code clock} past its high-water
   * mark.
   */
  void initializeOrCheck(Path dir, HybridClock clock) {
    StoreOptions options = s.options;
    HashSpec spec = s.spec;
    try {
      byte[] format = s.db.get(s.meta, FORMAT);
      if (format == null) {
        if (!isEmpty(s.records) || (s.recordsV1 != null && !isEmpty(s.recordsV1))) {
          throw new StoreException(
              "store at "
                  + dir
                  + " holds records but no meta column family entries: refusing to"
                  + " guess its sketch parameters");
        }
        if (options.readOnly()) {
          throw new StoreException("store at " + dir + " was never initialized (no meta)");
        }
        try (WriteBatch b = new WriteBatch()) {
          b.put(s.meta, FORMAT, intBytes(ReplicaStore.STORE_FORMAT));
          b.put(s.meta, HASH_ID, intBytes(spec.id()));
          b.put(s.meta, SEED_FP, intBytes(spec.seedFingerprint()));
          b.put(s.meta, PARTITIONS, intBytes(s.params.partitionsLog2()));
          b.put(s.meta, NODE_ID, options.nodeId().getBytes(StandardCharsets.UTF_8));
          s.db.write(s.writeOptions, b);
        }
        return;
      }
      int storedFormat = readInt(format, "format");
      if (storedFormat != 1 && storedFormat != ReplicaStore.STORE_FORMAT) {
        throw new StoreException(
            "store at "
                + dir
                + " has store format "
                + storedFormat
                + "; this build reads format "
                + ReplicaStore.STORE_FORMAT
                + " (and migrates format 1)");
      }
      int hashId = readInt(s.db.get(s.meta, HASH_ID), "hash_id");
      if (hashId != spec.id()) {
        throw mismatch(dir, "hash id", hashId, spec.id());
      }
      int seedFp = readInt(s.db.get(s.meta, SEED_FP), "seed_fingerprint");
      if (seedFp != spec.seedFingerprint()) {
        throw new StoreException(
            "store at "
                + dir
                + " was created with seed fingerprint "
                + HashSpec.hex(seedFp)
                + ", opened with "
                + HashSpec.hex(spec.seedFingerprint())
                + ": its elements and digest index depend on the cluster seed; use the same secret"
                + " or a new data directory");
      }
      int log2 = readInt(s.db.get(s.meta, PARTITIONS), "partitions_log2");
      if (log2 != s.params.partitionsLog2()) {
        throw mismatch(dir, "partitions log2", log2, s.params.partitionsLog2());
      }
      byte[] node = s.db.get(s.meta, NODE_ID);
      if (!options.readOnly() && node != null) {
        String storedNode = new String(node, StandardCharsets.UTF_8);
        if (!storedNode.equals(options.nodeId())) {
          throw new StoreException(
              "store at "
                  + dir
                  + " belongs to node id '"
                  + storedNode
                  + "', opened as '"
                  + options.nodeId()
                  + "': each node needs its own data directory");
        }
      }
      // After the pinned parameters are checked: the migration files each record under the
      // partition its key hashes to with them.
      if (storedFormat == 1 && options.readOnly()) {
        throw StoreFormatMigration.readOnlyRefusal(dir);
      } else if (storedFormat == 1) {
        StoreFormatMigration.fromFormat1(s);
        s.db.put(s.meta, s.writeOptions, FORMAT, intBytes(ReplicaStore.STORE_FORMAT));
      } else if (s.recordsV1 != null) {
        throw new StoreException(
            "store at "
                + dir
                + " has store format "
                + storedFormat
                + " but still holds the format-1 column family 'records'");
      }
      byte[] hwm = s.db.get(s.meta, CLOCK);
      if (hwm != null) {
        if (hwm.length != 8) {
          throw new StoreException("meta clock_hwm is " + hwm.length + " bytes, expected 8");
        }
        clock.observe(RecordCodec.getLong(hwm, 0));
      }
    } catch (RocksDBException e) {
      throw new StoreException("cannot read meta of store at " + dir + ": " + e.getMessage(), e);
    }
  }

  private boolean isEmpty(ColumnFamilyHandle cf) {
    try (RocksIterator it = s.db.newIterator(cf)) {
      it.seekToFirst();
      return !it.isValid();
    }
  }

  /**
   * The node id in the meta rows of the store at {@code dir}, read with a read-only open of the
   * database alone (no sketches are built; works while an agent holds the store).
   *
   * @throws StoreException when {@code dir} holds no store or the store has no node id
   */
  static String readNodeId(Path dir) {
    Path abs = dir.toAbsolutePath();
    if (!Files.isDirectory(abs) || !Files.exists(abs.resolve("CURRENT"))) {
      throw new StoreException("no store at " + abs + " (no RocksDB CURRENT file)");
    }
    RocksDbLibrary.load();
    List<byte[]> families;
    try (Options o = new Options()) {
      families = RocksDB.listColumnFamilies(o, abs.toString());
    } catch (RocksDBException e) {
      throw new StoreException(
          "cannot list the column families of " + abs + ": " + e.getMessage(), e);
    }
    int metaIndex = -1;
    List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    for (int i = 0; i < families.size(); i++) {
      descriptors.add(new ColumnFamilyDescriptor(families.get(i)));
      if (Arrays.equals(families.get(i), StoreDb.META)) {
        metaIndex = i;
      }
    }
    if (metaIndex < 0) {
      throw new StoreException(
          "no store at " + abs + ": a RocksDB database without a meta column family");
    }
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions o = new DBOptions();
        RocksDB db = RocksDB.openReadOnly(o, abs.toString(), descriptors, handles)) {
      try {
        byte[] id = db.get(handles.get(metaIndex), NODE_ID);
        if (id == null) {
          throw new StoreException("store at " + abs + " has no node id in its meta rows");
        }
        return new String(id, StandardCharsets.UTF_8);
      } finally {
        for (int i = handles.size() - 1; i >= 0; i--) {
          handles.get(i).close();
        }
      }
    } catch (RocksDBException e) {
      throw new StoreException("cannot open store at " + abs + ": " + e.getMessage(), e);
    }
  }

  private static StoreException mismatch(Path dir, String what, int stored, int wanted) {
    return new StoreException(
        "store at "
            + dir
            + " was created with "
            + what
            + " "
            + stored
            + ", opened with "
            + wanted
            + ": sketches and the digest index depend on it; use the same value or a new data"
            + " directory");
  }

  private static int readInt(byte[] b, String name) {
    if (b == null || b.length != 4) {
      throw new StoreException(
          "meta entry '"
              + name
              + "' is "
              + (b == null ? "missing" : b.length + " bytes")
              + ", expected 4 bytes");
    }
    return RecordCodec.getInt(b, 0);
  }

  // -------------------------------------------------------------------------------------- progress

  /** Records that {@code partition} of round {@code roundId} with {@code peer} is reconciled. */
  void markPartitionDone(String peer, long roundId, int partition) {
    s.checkPartition(partition);
    s.lifecycle.readLock().lock();
    try {
      s.checkWritable();
      s.writer.lock();
      try {
        byte[] key = progressKey(peer, roundId);
        BitSet done = decodeProgress(s.db.get(s.meta, key), peer, roundId);
        done.set(partition);
        byte[] prefix = progressPrefix(peer);
        try (WriteBatch b = new WriteBatch()) {
          // One round per peer: an older round's progress is dropped.
          for (byte[] other : keysWithPrefix(prefix)) {
            if (!Arrays.equals(other, key)) {
              b.delete(s.meta, other);
            }
          }
          byte[] bits = done.toByteArray();
          byte[] value = new byte[1 + bits.length];
          value[0] = PROGRESS_FORMAT;
          System.arraycopy(bits, 0, value, 1, bits.length);
          b.put(s.meta, key, value);
          s.db.write(s.writeOptions, b);
        }
      } catch (RocksDBException e) {
        throw new StoreException(
            "cannot record progress for peer " + peer + ": " + e.getMessage(), e);
      } finally {
        s.writer.unlock();
      }
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /** Partitions already reconciled in round {@code roundId} with {@code peer} (empty if none). */
  BitSet partitionsDone(String peer, long roundId) {
    s.lifecycle.readLock().lock();
    try {
      s.checkOpen();
      return decodeProgress(s.db.get(s.meta, progressKey(peer, roundId)), peer, roundId);
    } catch (RocksDBException e) {
      throw new StoreException("cannot read progress for peer " + peer + ": " + e.getMessage(), e);
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  /** Round progress with {@code peer}: marks round 0 of {@link #markPartitionDone}. */
  RoundProgress progressWith(String peer) {
    return new RoundProgress() {
      @Override
      public void partitionRepaired(int partition) {
        markPartitionDone(peer, 0, partition);
      }

      @Override
      public void roundComplete() {
        clearProgress(peer);
      }
    };
  }

  /** Forgets every round's progress with {@code peer}. */
  void clearProgress(String peer) {
    s.lifecycle.readLock().lock();
    try {
      s.checkWritable();
      s.writer.lock();
      try (WriteBatch b = new WriteBatch()) {
        for (byte[] k : keysWithPrefix(progressPrefix(peer))) {
          b.delete(s.meta, k);
        }
        s.db.write(s.writeOptions, b);
      } catch (RocksDBException e) {
        throw new StoreException(
            "cannot clear progress for peer " + peer + ": " + e.getMessage(), e);
      } finally {
        s.writer.unlock();
      }
    } finally {
      s.lifecycle.readLock().unlock();
    }
  }

  private List<byte[]> keysWithPrefix(byte[] prefix) throws RocksDBException {
    List<byte[]> out = new ArrayList<>();
    try (RocksIterator it = s.db.newIterator(s.meta)) {
      for (it.seek(prefix); it.isValid(); it.next()) {
        byte[] k = it.key();
        if (!DigestKeys.startsWith(k, prefix)) {
          break;
        }
        out.add(k);
      }
      it.status();
    }
    return out;
  }

  private static byte[] progressPrefix(String peer) {
    byte[] name = peer.getBytes(StandardCharsets.UTF_8);
    if (name.length > 0xFFFF) {
      throw new IllegalArgumentException("peer id of " + name.length + " bytes is too long");
    }
    byte[] out = new byte[PROGRESS.length + 2 + name.length];
    System.arraycopy(PROGRESS, 0, out, 0, PROGRESS.length);
    out[PROGRESS.length] = (byte) (name.length >>> 8);
    out[PROGRESS.length + 1] = (byte) name.length;
    System.arraycopy(name, 0, out, PROGRESS.length + 2, name.length);
    return out;
  }

  private static byte[] progressKey(String peer, long roundId) {
    byte[] prefix = progressPrefix(peer);
    byte[] out = Arrays.copyOf(prefix, prefix.length + 8);
    RecordCodec.putLong(out, prefix.length, roundId);
    return out;
  }

  private static BitSet decodeProgress(byte[] value, String peer, long roundId) {
    if (value == null) {
      return new BitSet();
    }
    if (value.length == 0 || value[0] != PROGRESS_FORMAT) {
      throw new StoreException(
          "progress entry of peer "
              + peer
              + " round "
              + roundId
              + " has format "
              + (value.length == 0 ? "(empty)" : String.format("0x%02x", value[0]))
              + ", expected 0x01");
    }
    return BitSet.valueOf(Arrays.copyOfRange(value, 1, value.length));
  }
}
