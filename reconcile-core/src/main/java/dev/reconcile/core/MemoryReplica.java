package dev.reconcile.core;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A replica held in memory: records by key, one element per record, and per partition the sketches
 * a session reads, kept current on every write. It implements both ports of a repairing session
 * ({@link #sketches()}, and {@link RecordStore} itself), resolves conflicts with {@link
 * ConflictRule}, and is meant for tests, examples and simulations: it keeps a few objects per
 * record (the agent's store keeps none on the heap). Tables are built from the partition's elements
 * when asked for, which equals folding a maintained table. Not thread-safe.
 */
public final class MemoryReplica implements RecordStore {
  private record Stored(ReplicaRecord record, long element) {}

  private final SketchParams params;
  private final HashSpec spec;
  private final Map<ByteBuffer, Stored> byKey = new HashMap<>();
  private final List<Map<Long, List<ByteBuffer>>> byElement;
  private final Fingerprint.Accumulator[] fingerprints;
  private final DifferenceEstimator[] estimators;
  private final CodedSymbols[] symbols; // null entries without a rateless prefix
  private final Sketches sketches = new Sketches();

  public MemoryReplica(SketchParams params, EstimatorFactory estimators) {
    this.params = params;
    this.spec = params.spec();
    int p = params.partitions();
    this.byElement = new ArrayList<>(p);
    this.fingerprints = new Fingerprint.Accumulator[p];
    this.estimators = new DifferenceEstimator[p];
    this.symbols = new CodedSymbols[p];
    for (int i = 0; i < p; i++) {
      if (params.rateless()) {
        symbols[i] = new CodedSymbols(spec, params.ratelessLog2());
      }
      byElement.add(new HashMap<>());
      fingerprints[i] = new Fingerprint.Accumulator(spec);
      this.estimators[i] = estimators.create(spec);
    }
  }

  /** Writes {@code r} whatever is stored (a local write; versions are the caller's). */
  public void write(ReplicaRecord r) {
    ByteBuffer k = ByteBuffer.wrap(r.key());
    Stored old = byKey.get(k);
    if (old != null) {
      remove(old.record.key(), old.element);
    }
    add(k, r);
  }

  /** The record of {@code key} (tombstones included), if any. */
  public Optional<ReplicaRecord> get(byte[] key) {
    Stored s = byKey.get(ByteBuffer.wrap(key));
    return s == null ? Optional.empty() : Optional.of(s.record);
  }

  /** Records stored (tombstones included). */
  public int size() {
    return byKey.size();
  }

  /** Every record, in no particular order. */
  public void forEach(Consumer<ReplicaRecord> action) {
    for (Stored s : byKey.values()) {
      action.accept(s.record);
    }
  }

  /** The sketches a session reads: fingerprints, estimators, tables and element lookups. */
  public PartitionSketches sketches() {
    return sketches;
  }

  @Override
  public List<ReplicaRecord> recordsFor(int partition, long[] elements) {
    List<ReplicaRecord> out = new ArrayList<>(elements.length);
    for (long e : elements) {
      List<ByteBuffer> keys = byElement.get(partition).get(e);
      if (keys != null) {
        for (ByteBuffer k : keys) {
          out.add(byKey.get(k).record);
        }
      }
    }
    return out;
  }

  @Override
  public ApplyOutcome apply(List<ReplicaRecord> records) {
    int applied = 0;
    int stale = 0;
    int duplicate = 0;
    for (ReplicaRecord r : records) {
      ByteBuffer k = ByteBuffer.wrap(r.key());
      Stored cur = byKey.get(k);
      int c = cur == null ? 1 : ConflictRule.compare(r, cur.record, spec);
      if (c > 0) {
        if (cur != null) {
          remove(cur.record.key(), cur.element);
        }
        add(k, r);
        applied++;
      } else if (c == 0) {
        duplicate++;
      } else {
        stale++;
      }
    }
    return new ApplyOutcome(applied, stale, duplicate);
  }

  private void add(ByteBuffer k, ReplicaRecord r) {
    long kh = spec.keyHash(r.key());
    long e = spec.element(kh, r.version(), r.origin(), r.tombstone(), spec.valueHash(r.value()));
    int p = HashSpec.partition(kh, params.partitionsLog2());
    byKey.put(k, new Stored(r, e));
    byElement.get(p).computeIfAbsent(e, x -> new ArrayList<>(1)).add(k);
    fingerprints[p].add(e);
    estimators[p].add(e);
    if (symbols[p] != null) {
      symbols[p].insert(e);
    }
  }

  private void remove(byte[] key, long e) {
    int p = HashSpec.partition(spec.keyHash(key), params.partitionsLog2());
    ByteBuffer k = ByteBuffer.wrap(key);
    byKey.remove(k);
    List<ByteBuffer> keys = byElement.get(p).get(e);
    keys.remove(k);
    if (keys.isEmpty()) {
      byElement.get(p).remove(e);
    }
    fingerprints[p].remove(e);
    estimators[p].remove(e);
    if (symbols[p] != null) {
      symbols[p].delete(e);
    }
  }

  private long[] elements(int partition) {
    Map<Long, List<ByteBuffer>> m = byElement.get(partition);
    long[] out = new long[byKeyCount(m)];
    int i = 0;
    for (Map.Entry<Long, List<ByteBuffer>> en : m.entrySet()) {
      for (int j = 0; j < en.getValue().size(); j++) {
        out[i++] = en.getKey();
      }
    }
    return out;
  }

  private static int byKeyCount(Map<Long, List<ByteBuffer>> m) {
    int n = 0;
    for (List<ByteBuffer> keys : m.values()) {
      n += keys.size();
    }
    return n;
  }

  private final class Sketches implements PartitionSketches {
    @Override
    public SketchParams params() {
      return params;
    }

    @Override
    public Fingerprint fingerprint(int partition) {
      return fingerprints[partition].snapshot();
    }

    @Override
    public DifferenceEstimator estimator(int partition) {
      return estimators[partition].copy();
    }

    @Override
    public Iblt iblt(int partition, IbltShape shape) {
      Iblt t = new Iblt(spec, shape, CellLayout.WIDE);
      for (long e : elements(partition)) {
        t.insert(e);
      }
      return t;
    }

    @Override
    public boolean hasSymbols() {
      return params.rateless();
    }

    @Override
    public CodedSymbols symbols(int partition) {
      return symbols[partition] == null ? null : symbols[partition].copy();
    }

    @Override
    public boolean contains(int partition, long element) {
      return byElement.get(partition).containsKey(element);
    }

    @Override
    public ElementCursor sortedElements(int partition) {
      long[] a = elements(partition);
      for (int i = 0; i < a.length; i++) {
        a[i] ^= Long.MIN_VALUE;
      }
      Arrays.sort(a);
      for (int i = 0; i < a.length; i++) {
        a[i] ^= Long.MIN_VALUE;
      }
      return ElementCursor.of(a);
    }
  }
}
