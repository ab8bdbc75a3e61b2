package dev.reconcile.agent.store;

import dev.reconcile.core.EstimatorFactory;
import dev.reconcile.core.SketchParams;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How to open a {@link ReplicaStore}.
 *
 * @param dataDir RocksDB directory (created when missing, unless read-only)
 * @param nodeId this replica's configured id; local writes carry {@link NodeIds#origin(String)}.
 *     May be null only for a read-only open (the CLI inspecting a stopped agent's directory)
 * @param params sketch parameters; hash id, seed fingerprint and partitions are pinned in the store
 * @param estimators factory of the per-partition difference estimators (its params must equal
 *     {@code params.estimator()})
 * @param readOnly open with RocksDB {@code openReadOnly}: every write throws, sketches are still
 *     built
 * @param tombstoneGrace minimum age (by the version's physical milliseconds) before a tombstone may
 *     be purged
 * @param clock the hybrid logical clock of local writes
 * @param maintainSketches false keeps only records and digest index (benchmark baseline only:
 *     {@link ReplicaStore#sketches()} then throws)
 * @param syncWrites fsync the WAL on every write batch (RocksDB {@code WriteOptions.setSync})
 * @param rebuildThreads scanner threads for the sketch rebuild at open (each takes a contiguous
 *     range of partitions)
 * @param ingestBulk receive bulk partitions as ingested table files ({@link PartitionIngest})
 *     rather than write batches
 * @param applySliceKeys the most keys of a repair batch applied in one write batch under the writer
 *     lock; a larger batch is applied in slices of this many keys ({@link ReplicaStore#apply})
 * @param directIo RocksDB's flushes and compactions read and write table files with {@code
 *     O_DIRECT}, past the page cache, when the data folder's file system takes it ({@link
 *     DirectIo}; buffered otherwise, and the log says why)
 * @param repairWal every repair batch goes through the WAL; when false (and without {@code
 *     syncWrites}) a repair batch of {@link #UNLOGGED_REPAIR_MIN_BYTES} or more skips it, the
 *     column families flush atomically, and {@link ReplicaStore#persistRepairs} flushes them when a
 *     peer's stream ends (docs/storage.md, "Large repair batches without the WAL")
 * @param maxWalBytes the most bytes of live WAL files (RocksDB's {@code max_total_wal_size}): past
 *     it, RocksDB flushes the column families that still hold rows of the oldest WAL file, so that
 *     the file can go. Without it the small {@code meta} family, written by every batch and never
 *     filling its memtable, kept every WAL file alive up to four times the memtables' total
 *     (docs/storage.md, "How much WAL a store keeps")
 */
public record StoreOptions(
    Path dataDir,
    String nodeId,
    SketchParams params,
    EstimatorFactory estimators,
    boolean readOnly,
    Duration tombstoneGrace,
    HybridClock clock,
    boolean maintainSketches,
    boolean syncWrites,
    int rebuildThreads,
    boolean ingestBulk,
    int applySliceKeys,
    boolean directIo,
    boolean repairWal,
    long maxWalBytes) {

  /**
   * The smallest repair batch (in stored bytes) that skips the WAL when {@link #repairWal} is
   * false: a round of a few records keeps the WAL, so that the flush at its end is not a table file
   * of a few rows.
   */
  public static final long UNLOGGED_REPAIR_MIN_BYTES = 256 << 10;

  /** Whether a large repair batch may skip the WAL (and the column families flush atomically). */
  public boolean unloggedRepairs() {
    return !repairWal && !syncWrites && !readOnly;
  }

  /**
   * The default of {@link #maxWalBytes}: 256 MiB, above the memtables a store fills at once (two of
   * 64 MiB for the records, two of 16 MiB for the digest index), so that it forces flushes of the
   * small families only; a restart after a crash replays at most this much.
   */
  public static final long DEFAULT_MAX_WAL_BYTES = 256L << 20;

  /**
   * The default of {@link #applySliceKeys}: at about 4 us a key, a client's write waits about a
   * millisecond for a slice (docs/decisions.md, "apply slices").
   */
  public static final int DEFAULT_APPLY_SLICE_KEYS = 256;

  public StoreOptions {
    Objects.requireNonNull(dataDir, "dataDir");
    Objects.requireNonNull(params, "params");
    Objects.requireNonNull(estimators, "estimators");
    Objects.requireNonNull(tombstoneGrace, "tombstoneGrace");
    Objects.requireNonNull(clock, "clock");
    if (nodeId == null && !readOnly) {
      throw new IllegalArgumentException("a writable store needs a node id");
    }
    if (tombstoneGrace.isNegative()) {
      throw new IllegalArgumentException("tombstone grace " + tombstoneGrace + " is negative");
    }
    if (applySliceKeys < 1) {
      throw new IllegalArgumentException("apply slice keys " + applySliceKeys + " < 1");
    }
    if (maxWalBytes < 1) {
      throw new IllegalArgumentException("max WAL bytes " + maxWalBytes + " < 1");
    }
    if (rebuildThreads < 1) {
      throw new IllegalArgumentException("rebuild threads " + rebuildThreads + " < 1");
    }
    if (!estimators.params().equals(params.estimator())) {
      throw new IllegalArgumentException(
          "estimator factory params {"
              + estimators.params().toString().replace('\n', ' ').trim()
              + "} differ from sketch params estimator {"
              + params.estimator().toString().replace('\n', ' ').trim()
              + "}");
    }
  }

  public static Builder builder(Path dataDir, SketchParams params, EstimatorFactory estimators) {
    return new Builder(dataDir, params, estimators);
  }

  public Builder toBuilder() {
    return new Builder(dataDir, params, estimators)
        .nodeId(nodeId)
        .readOnly(readOnly)
        .tombstoneGrace(tombstoneGrace)
        .clock(clock)
        .maintainSketches(maintainSketches)
        .syncWrites(syncWrites)
        .rebuildThreads(rebuildThreads)
        .ingestBulk(ingestBulk)
        .applySliceKeys(applySliceKeys)
        .directIo(directIo)
        .repairWal(repairWal)
        .maxWalBytes(maxWalBytes);
  }

  /**
   * Defaults: writable, grace 7 days, system clock, sketches on, no fsync, 2 rebuild threads, bulk
   * partitions ingested, repair batches applied in slices of {@value #DEFAULT_APPLY_SLICE_KEYS}
   * keys, flushes and compactions through the page cache (no direct I/O), every repair batch
   * through the WAL, at most 256 MiB of live WAL files.
   */
  public static final class Builder {
    private final Path dataDir;
    private final SketchParams params;
    private final EstimatorFactory estimators;
    private String nodeId;
    private boolean readOnly;
    private Duration tombstoneGrace = Duration.ofDays(7);
    private HybridClock clock;
    private boolean maintainSketches = true;
    private boolean syncWrites;
    private int rebuildThreads =
        Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
    private boolean ingestBulk = true;
    private int applySliceKeys = DEFAULT_APPLY_SLICE_KEYS;
    private boolean directIo;
    private boolean repairWal = true;
    private long maxWalBytes = DEFAULT_MAX_WAL_BYTES;

    private Builder(Path dataDir, SketchParams params, EstimatorFactory estimators) {
      this.dataDir = dataDir;
      this.params = params;
      this.estimators = estimators;
    }

    public Builder nodeId(String v) {
      nodeId = v;
      return this;
    }

    public Builder readOnly(boolean v) {
      readOnly = v;
      return this;
    }

    public Builder tombstoneGrace(Duration v) {
      tombstoneGrace = v;
      return this;
    }

    public Builder clock(HybridClock v) {
      clock = v;
      return this;
    }

    public Builder maintainSketches(boolean v) {
      maintainSketches = v;
      return this;
    }

    public Builder syncWrites(boolean v) {
      syncWrites = v;
      return this;
    }

    public Builder rebuildThreads(int v) {
      rebuildThreads = v;
      return this;
    }

    public Builder ingestBulk(boolean v) {
      ingestBulk = v;
      return this;
    }

    public Builder applySliceKeys(int v) {
      applySliceKeys = v;
      return this;
    }

    public Builder directIo(boolean v) {
      directIo = v;
      return this;
    }

    public Builder repairWal(boolean v) {
      repairWal = v;
      return this;
    }

    public Builder maxWalBytes(long v) {
      maxWalBytes = v;
      return this;
    }

    public StoreOptions build() {
      return new StoreOptions(
          dataDir,
          nodeId,
          params,
          estimators,
          readOnly,
          tombstoneGrace,
          clock == null ? HybridClock.system() : clock,
          maintainSketches,
          syncWrites,
          rebuildThreads,
          ingestBulk,
          applySliceKeys,
          directIo,
          repairWal,
          maxWalBytes);
    }
  }
}
