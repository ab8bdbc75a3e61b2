package dev.reconcile.example;

import dev.reconcile.core.ApplyOutcome;
import dev.reconcile.core.ConflictRule;
import dev.reconcile.core.DifferenceEstimator;
import dev.reconcile.core.ElementCursor;
import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.Fingerprint;
import dev.reconcile.core.HashSpec;
import dev.reconcile.core.Iblt;
import dev.reconcile.core.IbltShape;
import dev.reconcile.core.PartitionSketch;
import dev.reconcile.core.PartitionSketches;
import dev.reconcile.core.RecordStore;
import dev.reconcile.core.ReplicaRecord;
import dev.reconcile.core.SketchParams;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Someone else's key-value store, made repairable with reconcile-core's public API: it keeps one
 * {@link PartitionSketch} per partition current on every write, an index from each record's element
 * back to its key, and implements the two ports a session reads and writes through.
 */
final class EmbeddedStore implements RecordStore {
  private final SketchParams params;
  private final HashSpec spec;
  private final Map<ByteBuffer, ReplicaRecord> records = new HashMap<>();
  private final List<TreeMap<Long, ByteBuffer>> index = new ArrayList<>();
  private final PartitionSketch[] sketches;

  EmbeddedStore(SketchParams params, EstimatorFactory estimators) {
    this.params = params;
    this.spec = params.spec();
    this.sketches = new PartitionSketch[params.partitions()];
    for (int p = 0; p < sketches.length; p++) {
      sketches[p] = new PartitionSketch(params, estimators);
      index.add(new TreeMap<>(Long::compareUnsigned)); // elements in unsigned order
    }
  }

  /** Whatever the store's own write path is, it also updates the sketch and the index. */
  void put(ReplicaRecord r) {
    ByteBuffer key = ByteBuffer.wrap(r.key());
    ReplicaRecord old = records.put(key, r);
    long keyHash = spec.keyHash(r.key());
    int p = HashSpec.partition(keyHash, params.partitionsLog2());
    if (old != null) {
      long gone = element(keyHash, old);
      index.get(p).remove(gone);
      sketches[p].remove(gone);
    }
    long e = element(keyHash, r);
    index.get(p).put(e, key);
    sketches[p].add(e);
  }

  ReplicaRecord get(byte[] key) {
    return records.get(ByteBuffer.wrap(key));
  }

  Map<ByteBuffer, ReplicaRecord> contents() {
    return records;
  }

  private long element(long keyHash, ReplicaRecord r) {
    return spec.element(keyHash, r.version(), r.origin(), r.tombstone(), spec.valueHash(r.value()));
  }

  // ---- RecordStore: what the repair stream reads and writes.

  @Override
  public List<ReplicaRecord> recordsFor(int partition, long[] elements) {
    List<ReplicaRecord> out = new ArrayList<>();
    for (long e : elements) {
      ByteBuffer key = index.get(partition).get(e);
      if (key != null) {
        out.add(records.get(key));
      }
    }
    return out;
  }

  @Override
  public ApplyOutcome apply(List<ReplicaRecord> batch) {
    int applied = 0;
    int stale = 0;
    int duplicate = 0;
    for (ReplicaRecord r : batch) {
      ReplicaRecord cur = get(r.key());
      int c = cur == null ? 1 : ConflictRule.compare(r, cur, spec); // newer version wins
      if (c > 0) {
        put(r);
        applied++;
      } else if (c == 0) {
        duplicate++;
      } else {
        stale++;
      }
    }
    return new ApplyOutcome(applied, stale, duplicate);
  }

  // ---- PartitionSketches: what the session compares.

  PartitionSketches sketches() {
    return new PartitionSketches() {
      @Override
      public SketchParams params() {
        return params;
      }

      @Override
      public Fingerprint fingerprint(int partition) {
        return sketches[partition].fingerprint();
      }

      @Override
      public DifferenceEstimator estimator(int partition) {
        return sketches[partition].estimatorCopy();
      }

      @Override
      public Iblt iblt(int partition, IbltShape shape) {
        return sketches[partition].fold(shape);
      }

      @Override
      public boolean contains(int partition, long element) {
        return index.get(partition).containsKey(element);
      }

      @Override
      public ElementCursor sortedElements(int partition) {
        return ElementCursor.of(
            index.get(partition).keySet().stream().mapToLong(Long::longValue).toArray());
      }
    };
  }
}
